/**
 * One round trip to an upstream provider, stored for its callback: the `state` (only its hash),
 * the `nonce` and the PKCE verifier (encrypted under the master key), bound to the pending sign-in
 * that started it, living 10 minutes (never beyond the sign-in) and consumed once by one
 * conditional UPDATE. The hosted steps that use it are in lib/sign-in/steps/federation.ts.
 */
import { and, eq, gt, isNull } from "drizzle-orm";
import { federationTransactions } from "../../db/schema";
import { addMs, MINUTE } from "../clock";
import { decryptSecret, encryptSecret, newId, sha256Hex } from "../crypto";
import type { EndpointContext } from "../http/context";
import { isStorableText } from "../text";
import type { LoadedProvider } from "./providers";
import { roundTripVerifierPurpose } from "./secrets";
import { beginUpstream, completeUpstream } from "./upstream";
import type { UpstreamCall, UpstreamIdentity } from "./upstream/contract";

export const ROUND_TRIP_TTL_MS = 10 * MINUTE;
/** The redirect URI every upstream is registered with: `<issuer>/federation/callback`. */
export const CALLBACK_PATH = "/federation/callback";

export type RoundTrip = typeof federationTransactions.$inferSelect;

export function upstreamCall(ctx: EndpointContext): UpstreamCall {
  return { redirectUri: `${ctx.issuer}${CALLBACK_PATH}`, fetch: ctx.service.fetch, now: ctx.service.clock.now() };
}

/** Starts a round trip for the pending sign-in; returns the upstream authorization URL. Throws FederationError. */
export async function beginRoundTrip(ctx: EndpointContext, signIn: { id: string; expiresAt: Date }, loaded: LoadedProvider): Promise<URL> {
  const start = await beginUpstream(loaded.provider, upstreamCall(ctx));
  const now = ctx.service.clock.now();
  const id = newId();
  await ctx.service.db.insert(federationTransactions).values({
    id,
    workspaceId: ctx.workspace.id,
    transactionId: signIn.id,
    connectionId: loaded.connection?.id ?? null,
    socialProviderId: loaded.socialProviderId,
    stateHash: sha256Hex(start.state),
    nonce: start.nonce,
    codeVerifierEncrypted: encryptSecret(ctx.service.config.masterKey, start.codeVerifier, roundTripVerifierPurpose(id)),
    createdAt: now,
    expiresAt: new Date(Math.min(addMs(now, ROUND_TRIP_TTL_MS).getTime(), signIn.expiresAt.getTime())),
  });
  return start.url;
}

/** The unconsumed, unexpired round trip this `state` names, or null. */
export async function findRoundTrip(ctx: EndpointContext, state: string | null): Promise<RoundTrip | null> {
  if (!state || state.length > 512 || !isStorableText(state)) return null;
  const t = federationTransactions;
  const [trip] = await ctx.service.db
    .select()
    .from(t)
    .where(and(eq(t.workspaceId, ctx.workspace.id), eq(t.stateHash, sha256Hex(state)), isNull(t.consumedAt), gt(t.expiresAt, ctx.service.clock.now())))
    .limit(1);
  return trip ?? null;
}

/** Consumes the round trip; false when it was consumed (or expired) meanwhile: exactly one callback wins. */
export async function consumeRoundTrip(ctx: EndpointContext, trip: RoundTrip): Promise<boolean> {
  const t = federationTransactions;
  const now = ctx.service.clock.now();
  const consumed = await ctx.service.db
    .update(t)
    .set({ consumedAt: now })
    .where(and(eq(t.id, trip.id), isNull(t.consumedAt), gt(t.expiresAt, now)))
    .returning({ id: t.id });
  return consumed.length === 1;
}

/** Has the upstream verify the callback (`query`: what it sent back). Throws FederationError. */
export async function finishRoundTrip(ctx: EndpointContext, trip: RoundTrip, state: string, query: URLSearchParams, loaded: LoadedProvider): Promise<UpstreamIdentity> {
  const call = upstreamCall(ctx);
  // The URL the upstream redirected to, as registered (the request may have come through a proxy).
  const url = new URL(call.redirectUri);
  url.search = query.toString();
  const codeVerifier = decryptSecret(ctx.service.config.masterKey, trip.codeVerifierEncrypted, roundTripVerifierPurpose(trip.id));
  // Apple's first sign-in posts the user's name (`user`) beside the response (kept by the callback's POST → GET).
  return completeUpstream(loaded.provider, call, { url, body: query.has("user") ? query : undefined, expected: { state, nonce: trip.nonce, codeVerifier } });
}
