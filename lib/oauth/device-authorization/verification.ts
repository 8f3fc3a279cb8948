/**
 * The hosted device page's rules (the page itself is app/t/[tenant]/device; its form posts are
 * routes of the table, ./routes.ts). The user enters the user code (never approved by arriving
 * with it: `verification_uri_complete` only fills the field); the authorization is then bound to
 * this browser by an HttpOnly cookie whose hash it stores, the first browser only, so an approval
 * can come from no other browser. The user signs in with the application's policy (a live hosted
 * session that meets it is reused, one that does not is stepped up: the pending sign-in of purpose
 * `device` returns here), sees which application asks for what, and approves or denies once.
 */
import { clients, users } from "../../../db/schema";
import { and, eq } from "drizzle-orm";
import { recordAudit } from "../../audit/events";
import { getLiveSession, type HostedSession } from "../../authn/hosted-session";
import { sessionMeetsPolicy } from "../../authn/policy";
import { hostedError } from "../../hosted/errors";
import { hostedFormPost } from "../../hosted/form-post";
import { clientAddress, clientAddressOf } from "../../http/client-address";
import type { EndpointContext } from "../../http/context";
import { parseCookieHeader, serializeCookie } from "../../http/cookies";
import { csrfToken, verifyCsrfToken } from "../../http/csrf";
import { redirect303 } from "../../http/response";
import { guard } from "../../limits/declarations";
import { randomToken, sha256Hex, safeEqual } from "../../crypto";
import { isStorableText } from "../../text";
import { openAccountSignIn } from "../pending-sign-in";
import { DEVICE_PAGE_PATH } from "./endpoint";
import { USER_CODE_LIMITS, WHOLE_WORKSPACE } from "./limits";
import { bindBrowser, decide, findById, findByUserCode, type DeviceAuthorization } from "./store";
import { formatUserCode, normalizeUserCode } from "./user-code";

export const DEVICE_CODE_POST = `${DEVICE_PAGE_PATH}/code`;
export const DEVICE_SIGN_IN_POST = `${DEVICE_PAGE_PATH}/sign-in`;
export const DEVICE_DECISION_POST = `${DEVICE_PAGE_PATH}/decision`;

/** The page's error codes (`?error=`), each a message of lib/i18n. */
export const DEVICE_PAGE_ERRORS = {
  invalid_code: "device.error.invalid_code",
  rate_limited: "device.error.rate_limited",
  code_in_use: "device.error.code_in_use",
  ended: "device.error.ended",
} as const;
export type DevicePageError = keyof typeof DEVICE_PAGE_ERRORS;

const COOKIE_PREFIX = "lk_device_";
const cookiePath = (ctx: EndpointContext) => `${ctx.basePath}${DEVICE_PAGE_PATH}`;
const pageUrl = (ctx: EndpointContext, query: Record<string, string> = {}) => {
  const q = new URLSearchParams(query).toString();
  return `${ctx.basePath}${DEVICE_PAGE_PATH}${q ? `?${q}` : ""}`;
};
const toPage = (ctx: EndpointContext, query: Record<string, string> = {}) => redirect303(pageUrl(ctx, query));

/** The binding secret this browser holds for `row`, when it is the one the authorization is bound to; else null. */
function heldBinding(row: DeviceAuthorization, cookieHeader: string | null): string | null {
  const binding = parseCookieHeader(cookieHeader).get(`${COOKIE_PREFIX}${row.id}`);
  return binding && row.browserBindingHash !== null && safeEqual(row.browserBindingHash, sha256Hex(binding)) ? binding : null;
}

/** The authorization `id`, only when this browser's cookie is the one bound to it. */
async function boundAuthorization(ctx: EndpointContext, id: string | null | undefined, cookieHeader: string | null): Promise<{ row: DeviceAuthorization; binding: string } | null> {
  if (!id || !isStorableText(id) || id.length > 64) return null;
  if (!parseCookieHeader(cookieHeader).has(`${COOKIE_PREFIX}${id}`)) return null;
  const row = await findById(ctx, id);
  const binding = row ? heldBinding(row, cookieHeader) : null;
  return row && binding ? { row, binding } : null;
}

/** The bound authorization a form post names, while it is still pending and unexpired; else null. */
async function pendingBound(ctx: EndpointContext, form: URLSearchParams, cookieHeader: string | null) {
  const bound = await boundAuthorization(ctx, form.get("d"), cookieHeader);
  return bound && bound.row.status === "pending" && live(ctx, bound.row) ? bound : null;
}

const live = (ctx: EndpointContext, row: DeviceAuthorization) => row.expiresAt > ctx.service.clock.now();

/** The CSRF token of the page's forms: bound to the authorization, this browser's binding secret and (to decide) the hosted session. */
const csrfBinding = (ctx: EndpointContext, id: string, binding: string, sessionId: string | null) => [ctx.workspace.id, id, binding, sessionId ?? ""];
function deviceCsrf(ctx: EndpointContext, id: string, binding: string, sessionId: string | null): string {
  return csrfToken(ctx.service.config.masterKey, "device-authorization", csrfBinding(ctx, id, binding, sessionId));
}
function deviceCsrfValid(ctx: EndpointContext, id: string, binding: string, sessionId: string | null, presented: string | null | undefined): boolean {
  return verifyCsrfToken(ctx.service.config.masterKey, "device-authorization", csrfBinding(ctx, id, binding, sessionId), presented);
}

/** A live hosted session of this browser that meets the application's policy, or what there is to step up. */
async function adequateSession(ctx: EndpointContext, clientPk: string, cookieHeader: string | null): Promise<{ session: HostedSession | null; meets: boolean }> {
  const session = await getLiveSession(ctx, cookieHeader);
  return { session, meets: session !== null && (await sessionMeetsPolicy(ctx, clientPk, session)) };
}

/** The hosted sign-in for the application, with the device page as where it returns (purpose `device`). */
function signInFor(ctx: EndpointContext, row: DeviceAuthorization, stepUp: HostedSession | null, extraHeaders: [string, string][] = []): Promise<Response> {
  return openAccountSignIn(ctx, { clientPk: row.clientPk, returnTo: pageUrl(ctx, { d: row.id }), purpose: "device" }, stepUp ?? undefined, extraHeaders);
}

/**
 * The user code, typed (or filled from `verification_uri_complete`) and submitted. Every wrong code
 * counts on USER_CODE_LIMITS (per client address, per workspace); once either is reached nothing
 * is looked up. A right one binds the authorization to this browser, then signs the user in.
 */
export const enterCodeEndpoint = hostedFormPost(async (request, ctx, form) => {
  const code = normalizeUserCode(form.get("user_code") ?? "");
  const gate = await guard(ctx.service.limiter, ctx.service.config.rateLimits, USER_CODE_LIMITS, {
    workspaceId: ctx.workspace.id,
    address: clientAddress(request, ctx.service.config.trustProxy),
    account: WHOLE_WORKSPACE,
  });
  if (!gate.allowed) return toPage(ctx, { error: "rate_limited" });
  const row = code === null ? undefined : await findByUserCode(ctx, code);
  if (!row) {
    await gate.record();
    return toPage(ctx, { error: "invalid_code", ...(code ? { user_code: formatUserCode(code) } : {}) });
  }
  const cookieHeader = request.headers.get("cookie");
  const headers: [string, string][] = [];
  // This browser entered it before: still its own.
  if (heldBinding(row, cookieHeader) === null) {
    const binding = randomToken(32);
    if (!(await bindBrowser(ctx, row.id, sha256Hex(binding)))) return toPage(ctx, { error: "code_in_use" });
    const maxAge = Math.ceil((row.expiresAt.getTime() - ctx.service.clock.now().getTime()) / 1000);
    headers.push(["Set-Cookie", serializeCookie(`${COOKIE_PREFIX}${row.id}`, binding, cookiePath(ctx), maxAge)]);
  }
  const { session, meets } = await adequateSession(ctx, row.clientPk, cookieHeader);
  if (meets) return redirect303(pageUrl(ctx, { d: row.id }), headers);
  return signInFor(ctx, row, session, headers);
});

/** "Sign in to continue": the page's button when the browser holds the code but no session that meets the policy. */
export const signInEndpoint = hostedFormPost(async (request, ctx, form) => {
  const cookieHeader = request.headers.get("cookie");
  const bound = await pendingBound(ctx, form, cookieHeader);
  if (!bound) return toPage(ctx, { error: "ended" });
  if (!deviceCsrfValid(ctx, bound.row.id, bound.binding, null, form.get("csrf"))) return hostedError("form_unverified");
  const { session, meets } = await adequateSession(ctx, bound.row.clientPk, cookieHeader);
  if (meets) return toPage(ctx, { d: bound.row.id });
  return signInFor(ctx, bound.row, session);
});

/** Approve or Deny: once, from the bound browser, in a hosted session that meets the application's policy. */
export const decisionEndpoint = hostedFormPost(async (request, ctx, form) => {
  const cookieHeader = request.headers.get("cookie");
  const bound = await pendingBound(ctx, form, cookieHeader);
  if (!bound) return toPage(ctx, { error: "ended" });
  const { row, binding } = bound;
  const { session, meets } = await adequateSession(ctx, row.clientPk, cookieHeader);
  if (!session || !meets) return signInFor(ctx, row, session);
  if (!deviceCsrfValid(ctx, row.id, binding, session.id, form.get("csrf"))) return hostedError("form_unverified");
  const choice = form.get("decision");
  if (choice !== "approve" && choice !== "deny") return hostedError("form_unverified");
  const decided = await decide(ctx, { id: row.id, bindingHash: sha256Hex(binding), approve: choice === "approve", userId: session.userId, sessionId: session.id });
  if (!decided) return toPage(ctx, { error: "ended" });
  const [client] = await ctx.service.db.select({ clientId: clients.clientId }).from(clients).where(eq(clients.id, row.clientPk)).limit(1);
  await recordAudit(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    type: choice === "approve" ? "device_authorization.approved" : "device_authorization.denied",
    subject: session.userId,
    clientId: client?.clientId ?? null,
    data: { device_authorization: row.id, scope: row.scope },
    ip: clientAddressOf(request.headers, ctx.service.config.trustProxy),
    at: ctx.service.clock.now(),
  });
  return toPage(ctx, { d: row.id });
});

/** What the device page shows. */
export type DeviceView =
  | { kind: "enter"; userCode: string; error: DevicePageError | null; action: string }
  | { kind: "sign_in"; id: string; csrf: string; applicationName: string; action: string }
  | { kind: "consent"; id: string; csrf: string; applicationName: string; userEmail: string; scope: string[]; action: string }
  | { kind: "approved"; applicationName: string }
  | { kind: "denied"; applicationName: string };

/** The page's view for its query (`user_code`, `d`, `error`) and this browser's cookies. */
export async function deviceView(ctx: EndpointContext, query: { user_code?: string; d?: string; error?: string }, cookieHeader: string | null): Promise<DeviceView> {
  const error = query.error && Object.hasOwn(DEVICE_PAGE_ERRORS, query.error) ? (query.error as DevicePageError) : null;
  const enter = (e: DevicePageError | null = error): DeviceView => {
    // Only what could be a user code is shown back, normalized and formatted.
    const typed = query.user_code ? normalizeUserCode(query.user_code) : null;
    return { kind: "enter", userCode: typed ? formatUserCode(typed) : "", error: e, action: `${ctx.basePath}${DEVICE_CODE_POST}` };
  };
  if (!query.d) return enter();
  const bound = await boundAuthorization(ctx, query.d, cookieHeader);
  if (!bound) return enter("ended");
  const { row, binding } = bound;
  const [client] = await ctx.service.db.select({ name: clients.name }).from(clients).where(and(eq(clients.workspaceId, ctx.workspace.id), eq(clients.id, row.clientPk))).limit(1);
  const applicationName = client?.name ?? "";
  if (row.status === "approved" || row.status === "consumed") return { kind: "approved", applicationName };
  if (row.status === "denied") return { kind: "denied", applicationName };
  if (!live(ctx, row)) return enter("ended");
  const { session, meets } = await adequateSession(ctx, row.clientPk, cookieHeader);
  if (!session || !meets) return { kind: "sign_in", id: row.id, csrf: deviceCsrf(ctx, row.id, binding, null), applicationName, action: `${ctx.basePath}${DEVICE_SIGN_IN_POST}` };
  const [user] = await ctx.service.db.select({ email: users.email }).from(users).where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, session.userId))).limit(1);
  return {
    kind: "consent",
    id: row.id,
    csrf: deviceCsrf(ctx, row.id, binding, session.id),
    applicationName,
    userEmail: user?.email ?? "",
    scope: row.scope,
    action: `${ctx.basePath}${DEVICE_DECISION_POST}`,
  };
}
