/**
 * One round trip to an upstream provider, stored for its callback: the `state` (only its hash;
 * SAML's RelayState), the OAuth `nonce` and PKCE verifier (encrypted under the master key) or the
 * SAML request ID, bound to the pending sign-in that started it, living 10 minutes (never beyond
 * the sign-in) and consumed once by one conditional UPDATE. A SAML response is answered once
 * first (`answerRoundTrip`, at the ACS), then consumed by the browser's callback. The hosted steps
 * that use it are in lib/sign-in/steps/federation.ts.
 *
 * A round trip of purpose `test` (lib/federation/connection-test) is an administrator's test of a
 * connection: bound to no sign-in but to a secret in the tester's browser, verified the same way,
 * and signing no one in. Its failures at the ACS are kept on the round trip for the tester's page
 * (`answerRoundTripFailure`), not recorded on the connection.
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
import type { HostedErrorCode } from "../hosted/errors";
import { FederationError, type FederationErrorCode, type UpstreamCall, type UpstreamIdentity } from "./upstream/contract";

export const ROUND_TRIP_TTL_MS = 10 * MINUTE;
/** The redirect URI every upstream is registered with: `<issuer>/federation/callback`. */
export const CALLBACK_PATH = "/federation/callback";

export type RoundTrip = typeof federationTransactions.$inferSelect;

export function upstreamCall(ctx: EndpointContext): UpstreamCall {
  return { issuer: ctx.issuer, redirectUri: `${ctx.issuer}${CALLBACK_PATH}`, fetch: ctx.service.fetch, now: ctx.service.clock.now() };
}

/** Who a round trip is for: the pending sign-in (its id and expiry), or a connection test (its tester and the hash of its browser secret). */
export type RoundTripOwner = { id: string; expiresAt: Date } | { test: { tester: NonNullable<RoundTrip["tester"]>; browserBindingHash: string } };

/** Starts a round trip for the pending sign-in (or a connection test); returns the upstream authorization URL and the round trip's id. Throws FederationError. */
export async function beginRoundTrip(ctx: EndpointContext, owner: RoundTripOwner, loaded: LoadedProvider): Promise<{ url: URL; id: string }> {
  const start = await beginUpstream(loaded.provider, upstreamCall(ctx));
  const now = ctx.service.clock.now();
  const id = newId();
  const signIn = "test" in owner ? null : owner;
  await ctx.service.db.insert(federationTransactions).values({
    id,
    workspaceId: ctx.workspace.id,
    purpose: signIn ? "sign_in" : "test",
    transactionId: signIn?.id ?? null,
    tester: "test" in owner ? owner.test.tester : null,
    browserBindingHash: "test" in owner ? owner.test.browserBindingHash : null,
    connectionId: loaded.connection?.id ?? null,
    socialProviderId: loaded.socialProviderId,
    stateHash: sha256Hex(start.state),
    nonce: start.nonce,
    codeVerifierEncrypted: start.codeVerifier === null ? null : encryptSecret(ctx.service.config.masterKey, start.codeVerifier, roundTripVerifierPurpose(id)),
    requestId: start.requestId,
    createdAt: now,
    expiresAt: new Date(Math.min(addMs(now, ROUND_TRIP_TTL_MS).getTime(), signIn?.expiresAt.getTime() ?? Infinity)),
  });
  return { url: start.url, id };
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
  if (!trip.codeVerifierEncrypted) throw new FederationError("invalid_response", "The round trip has no PKCE verifier");
  const codeVerifier = decryptSecret(ctx.service.config.masterKey, trip.codeVerifierEncrypted, roundTripVerifierPurpose(trip.id));
  // Apple's first sign-in posts the user's name (`user`) beside the response (kept by the callback's POST → GET).
  return completeUpstream(loaded.provider, call, { url, body: query.has("user") ? query : undefined, expected: { state, nonce: trip.nonce, codeVerifier } });
}

/**
 * Records the verified identity a SAML response asserted for this round trip: once (a second
 * response to the same request is refused: false), while it is unconsumed and unexpired.
 */
export async function answerRoundTrip(ctx: EndpointContext, trip: RoundTrip, identity: UpstreamIdentity): Promise<boolean> {
  const t = federationTransactions;
  const now = ctx.service.clock.now();
  // What the upstream sent beyond the identity is kept for a connection test's page only.
  const { received: _received, ...asserted } = identity;
  const kept: UpstreamIdentity = trip.purpose === "test" ? identity : asserted;
  const answered = await ctx.service.db
    .update(t)
    .set({ answer: kept as unknown as Record<string, unknown>, answeredAt: now })
    .where(and(eq(t.id, trip.id), isNull(t.answeredAt), isNull(t.consumedAt), gt(t.expiresAt, now)))
    .returning({ id: t.id });
  return answered.length === 1;
}

/**
 * A test's SAML response that failed at the ACS: the condition that failed, kept once on the round
 * trip (as an answer would be) for the tester's page; false when it was answered or consumed already.
 */
export async function answerRoundTripFailure(ctx: EndpointContext, trip: RoundTrip, failure: string): Promise<boolean> {
  if (trip.purpose !== "test") return false;
  const t = federationTransactions;
  const now = ctx.service.clock.now();
  const answered = await ctx.service.db
    .update(t)
    .set({ answer: { failure }, answeredAt: now })
    .where(and(eq(t.id, trip.id), eq(t.purpose, "test"), isNull(t.answeredAt), isNull(t.consumedAt), gt(t.expiresAt, now)))
    .returning({ id: t.id });
  return answered.length === 1;
}

/** The identity a SAML round trip was answered with, or null (not answered yet, or answered with a test's failure). */
export function answerOf(trip: RoundTrip): UpstreamIdentity | null {
  return trip.answeredAt && trip.answer && !("failure" in trip.answer) ? (trip.answer as unknown as UpstreamIdentity) : null;
}

/** The condition a test's SAML response failed at the ACS, or null. */
export function answeredFailureOf(trip: RoundTrip): string | null {
  const failure = trip.answeredAt && trip.purpose === "test" ? trip.answer?.failure : null;
  return typeof failure === "string" ? failure : null;
}

/**
 * The identity the browser's callback completes with. A round trip answered at the protocol's own
 * endpoint (SAML's ACS, which verified the response): its answer, or null when it has none or the
 * provider is not SAML. Otherwise the upstream verifies the callback (`finishRoundTrip`). Throws
 * FederationError.
 */
export async function callbackIdentity(ctx: EndpointContext, trip: RoundTrip, state: string, query: URLSearchParams, loaded: LoadedProvider): Promise<UpstreamIdentity | null> {
  if (trip.requestId !== null) {
    const answer = answerOf(trip);
    return answer && loaded.provider.protocol === "saml" ? answer : null;
  }
  return finishRoundTrip(ctx, trip, state, query, loaded);
}

/** The hosted page of each way a round trip fails (lib/hosted/errors.ts `federation_*`). */
export const UPSTREAM_FAILURE: Record<FederationErrorCode, HostedErrorCode> = {
  upstream_unavailable: "federation_unavailable",
  upstream_denied: "federation_denied",
  invalid_response: "federation_invalid_response",
  misconfigured: "federation_misconfigured",
};
