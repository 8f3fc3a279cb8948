/**
 * The browser's side of the backend handoff: the launch URL, the return from the hosted sign-in,
 * and the completion URL. Hosted GETs (errors are hosted pages from lib/hosted/errors.ts).
 *
 * - Launch URL (`/auth/account/handoff?launch=…`): when the authentication-host cookie names the
 *   launch's own hosted session (same user and session) and that session meets the
 *   application's policy, the portal opens at once: the launch is consumed (issued → redeemed)
 *   and the customer's callback is not called (its pending record expires on its own).
 *   When the browser holds that session but it no longer meets the policy, the user steps it up
 *   through the hosted sign-in and comes back to the continuation. Any other browser (no hosted
 *   session, another session, another user) is refused at once: the completion URL needs the
 *   launch's own hosted cookie, so a fresh sign-in elsewhere could never finish.
 * - Continuation (`/auth/account/handoff/continue?launch=…`): the browser must now hold the
 *   launch's user and hosted session, meeting the policy; a challenge is issued (its hash
 *   stored) and the browser goes to the registered `callback_uri` with exactly `challenge`,
 *   `state` and `intent`. Anyone else: the launch fails.
 * - Completion URL (`/auth/account/complete?handle=…`): redeemed once (approved → redeemed, one
 *   conditional UPDATE … RETURNING), within 30 seconds, only beside the cookie of the hosted
 *   session that authenticated at the launch URL, and only while the launch's user, source
 *   session and grant are live (lib/authority's grant chain); it opens the portal session.
 */
import { and, eq, gt, isNull } from "drizzle-orm";
import { accountSecurityLaunches, clients, grants } from "../../db/schema";
import { nowValue, selectGrantChain } from "../authority";
import { getLiveSession, type HostedSession } from "../authn/hosted-session";
import { sessionMeetsPolicy } from "../authn/policy";
import { randomToken, sha256Hex } from "../crypto";
import type { EndpointContext } from "../http/context";
import { failureResponse } from "../http/errors";
import { redirect303 } from "../http/response";
import { hostedError } from "../hosted/errors";
import type { ClientRow } from "../oauth/clients";
import { hostedFailures } from "../oauth/errors";
import { openAccountSignIn } from "../oauth/pending-sign-in";
import { COMPLETION_PATH } from "./approve";
import { auditHandoff } from "./handoff";
import { LAUNCH_PATH } from "./launch";
import { offersPortal, openPortalSession } from "./portal-session";

export const CONTINUE_PATH = `${LAUNCH_PATH}/continue`;

type LaunchRow = typeof accountSecurityLaunches.$inferSelect;
const L = accountSecurityLaunches;

/** A handle or launch id as the URLs carry them: base64url or hex, nothing else. */
const REFERENCE = /^[A-Za-z0-9_-]{20,128}$/;

/** The single query parameter `name`, well formed, or null. */
function reference(request: Request, name: string): string | null {
  const query = new URL(request.url).searchParams;
  const values = query.getAll(name);
  if (values.length !== 1 || [...query.keys()].length !== 1 || !REFERENCE.test(values[0])) return null;
  return values[0];
}

/** An issued launch still waiting for its browser (no challenge yet, not expired), by id. */
async function waitingLaunch(ctx: EndpointContext, id: string): Promise<LaunchRow | null> {
  const [row] = await ctx.service.db
    .select()
    .from(L)
    .where(and(eq(L.workspaceId, ctx.workspace.id), eq(L.id, id), eq(L.state, "issued"), isNull(L.challengeHash), gt(L.expiresAt, ctx.service.clock.now())))
    .limit(1);
  return row ?? null;
}

/** The application, still offering the portal with a saved configuration; null otherwise. */
async function offeringClient(ctx: EndpointContext, launch: LaunchRow): Promise<(ClientRow & { handoffCallbackUri: string; handoffReturnUri: string }) | null> {
  const [client] = await ctx.service.db.select().from(clients).where(and(eq(clients.workspaceId, ctx.workspace.id), eq(clients.id, launch.clientPk))).limit(1);
  if (!client || !offersPortal(client) || client.type !== "WEB_CONFIDENTIAL" || !client.handoffCallbackUri || !client.handoffReturnUri) return null;
  return client as ClientRow & { handoffCallbackUri: string; handoffReturnUri: string };
}

/** Whether the launch's source authority is live: its grant with the grant's whole chain (session, user, client, …), of the launch's user and session. */
async function sourceIsLive(ctx: EndpointContext, launch: LaunchRow): Promise<boolean> {
  const [grant] = await selectGrantChain(ctx.service.db, nowValue(ctx.service.clock.now()), { userId: grants.userId, sessionId: grants.sessionId, clientPk: grants.clientPk })
    .where(and(eq(grants.workspaceId, ctx.workspace.id), eq(grants.id, launch.grantId)))
    .limit(1);
  return !!grant && grant.refusal === null && grant.userId === launch.userId && grant.sessionId === launch.sessionId && grant.clientPk === launch.clientPk;
}

/** The browser holds the launch's own hosted session (same user, same session). */
function holdsSource(session: HostedSession | null, launch: LaunchRow): session is HostedSession {
  return session !== null && session.id === launch.sessionId && session.userId === launch.userId;
}

async function openPortal(ctx: EndpointContext, launch: LaunchRow, client: { handoffReturnUri: string }): Promise<Response> {
  const portal = await openPortalSession(ctx, { userId: launch.userId, sessionId: launch.sessionId, clientPk: launch.clientPk, grantId: launch.grantId, returnUri: client.handoffReturnUri });
  return redirect303(portal.location, [["Set-Cookie", portal.cookie]]);
}

/** GET launch_url. */
async function enter(request: Request, ctx: EndpointContext): Promise<Response> {
  const handle = reference(request, "launch");
  const launch = handle ? await waitingLaunch(ctx, sha256Hex(handle)) : null;
  if (!launch) return hostedError("account_handoff_expired");
  const client = await offeringClient(ctx, launch);
  if (!client) return hostedError("account_not_available");
  if (!(await sourceIsLive(ctx, launch))) return hostedError("account_handoff_ended");
  const session = await getLiveSession(ctx, request.headers.get("cookie"));
  if (holdsSource(session, launch) && (await sessionMeetsPolicy(ctx, launch.clientPk, session))) {
    const now = ctx.service.clock.now();
    const [consumed] = await ctx.service.db
      .update(L)
      .set({ state: "redeemed", redeemedAt: now, browserSessionId: session.id })
      .where(and(eq(L.id, launch.id), eq(L.state, "issued"), isNull(L.challengeHash), gt(L.expiresAt, now)))
      .returning({ id: L.id });
    if (!consumed) return hostedError("account_handoff_expired");
    await auditHandoff(ctx, request, { type: "account_security.handoff_opened_directly", client, subject: launch.userId, data: { launch: launch.id.slice(0, 16) } });
    return openPortal(ctx, launch, client);
  }
  // Only the browser holding the launch's own hosted session can finish (the completion needs its
  // cookie): any other browser is refused now, before anyone types a credential for nothing.
  if (!holdsSource(session, launch)) return refuseBrowser(ctx, request, launch, client, session);
  // The source session does not meet the application's policy (now): step it up, then the callback.
  return openAccountSignIn(ctx, { clientPk: launch.clientPk, returnTo: `${ctx.basePath}${CONTINUE_PATH}?launch=${launch.id}` }, session);
}

async function refuseBrowser(ctx: EndpointContext, request: Request, launch: LaunchRow, client: ClientRow, session: HostedSession | null): Promise<Response> {
  const reason = session === null ? "no_session" : session.userId === launch.userId ? "other_session" : "other_user";
  await auditHandoff(ctx, request, { type: "account_security.handoff_refused", client, subject: launch.userId, reason, data: { launch: launch.id.slice(0, 16) } });
  return hostedError("account_handoff_wrong_account");
}

/** GET the continuation, back from the hosted sign-in. */
async function resume(request: Request, ctx: EndpointContext): Promise<Response> {
  const id = reference(request, "launch");
  const launch = id ? await waitingLaunch(ctx, id) : null;
  if (!launch) return hostedError("account_handoff_expired");
  const client = await offeringClient(ctx, launch);
  if (!client) return hostedError("account_not_available");
  if (!(await sourceIsLive(ctx, launch))) return hostedError("account_handoff_ended");
  const session = await getLiveSession(ctx, request.headers.get("cookie"));
  if (!holdsSource(session, launch)) return refuseBrowser(ctx, request, launch, client, session);
  // Reached without completing the sign-in (the policy is not met yet): authenticate first.
  if (!(await sessionMeetsPolicy(ctx, launch.clientPk, session))) {
    return openAccountSignIn(ctx, { clientPk: launch.clientPk, returnTo: `${ctx.basePath}${CONTINUE_PATH}?launch=${launch.id}` }, session);
  }
  const challenge = randomToken(32);
  const now = ctx.service.clock.now();
  const [issued] = await ctx.service.db
    .update(L)
    .set({ challengeHash: sha256Hex(challenge), browserSessionId: session.id })
    .where(and(eq(L.id, launch.id), eq(L.state, "issued"), isNull(L.challengeHash), gt(L.expiresAt, now)))
    .returning({ state: L.callbackState, intent: L.intent });
  if (!issued) return hostedError("account_handoff_expired");
  await auditHandoff(ctx, request, { type: "account_security.handoff_challenged", client, subject: launch.userId, data: { launch: launch.id.slice(0, 16) } });
  const callback = new URL(client.handoffCallbackUri);
  callback.search = new URLSearchParams({ challenge, state: issued.state, intent: issued.intent }).toString();
  return redirect303(callback.href);
}

/** GET completion_url. */
async function complete(request: Request, ctx: EndpointContext): Promise<Response> {
  const handle = reference(request, "handle");
  const session = await getLiveSession(ctx, request.headers.get("cookie"));
  if (!handle || !session) return hostedError("account_completion_failed");
  const now = ctx.service.clock.now();
  const [launch] = await ctx.service.db
    .update(L)
    .set({ state: "redeemed", redeemedAt: now })
    .where(
      and(
        eq(L.workspaceId, ctx.workspace.id),
        eq(L.completionHash, sha256Hex(handle)),
        eq(L.state, "approved"),
        gt(L.completionExpiresAt, now),
        eq(L.browserSessionId, session.id),
        eq(L.userId, session.userId),
      ),
    )
    .returning();
  if (!launch) return hostedError("account_completion_failed");
  const client = await offeringClient(ctx, launch);
  if (!client) return hostedError("account_not_available");
  if (!(await sourceIsLive(ctx, launch))) return hostedError("account_handoff_ended");
  await auditHandoff(ctx, request, { type: "account_security.handoff_redeemed", client, subject: launch.userId, data: { launch: launch.id.slice(0, 16) } });
  return openPortal(ctx, launch, client);
}

/** Hosted answers for failures inside these routes: 503 when authority cannot be confirmed, never a 500 for what a browser sent. */
function browserRoute(name: string, handler: (request: Request, ctx: EndpointContext) => Promise<Response>) {
  return async (request: Request, ctx: EndpointContext): Promise<Response> => {
    try {
      return await handler(request, ctx);
    } catch (error) {
      return failureResponse(hostedFailures, error, name);
    }
  };
}

export const handoffEnterEndpoint = browserRoute("account-security launch URL", enter);
export const handoffContinueEndpoint = browserRoute("account-security launch continuation", resume);
export const handoffCompleteEndpoint = browserRoute("account-security completion", complete);

