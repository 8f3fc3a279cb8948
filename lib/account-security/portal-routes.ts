/**
 * The portal's routes: the direct link (`GET /auth/account?client_id=…`) and the portal's own form
 * posts (re-verification before sensitive changes, ./evidence.ts). Every failure is a hosted page
 * from the catalogue (lib/hosted/errors.ts).
 */
import { and, eq } from "drizzle-orm";
import { users } from "../../db/schema";
import type { AuditEventType } from "../audit/catalogue";
import { EMAIL_CODE_TTL_MS, issueEmailCode, sendGate, verifyEmailCodeFactor } from "../authn/factors/email-code";
import { verifyPasswordFactor } from "../authn/factors/password";
import { verifyWebAuthnFactor } from "../authn/factors/webauthn";
import { sendMail } from "../authn/email/transport";
import { signInCodeMessage } from "../authn/email/templates";
import { TYPED_CODE_FACTORS, type TypedCodeFactor } from "../authn/factors/registry";
import type { VerifyResult } from "../authn/factors/contract";
import { getLiveSession } from "../authn/hosted-session";
import { sessionMeetsPolicy } from "../authn/policy";
import { hostedError } from "../hosted/errors";
import { clientAddress, clientAddressOf } from "../http/client-address";
import type { Endpoint, EndpointContext } from "../http/context";
import { unstorableParameter } from "../http/form";
import { redirect303 } from "../http/response";
import type { Route } from "../http/route";
import { findClient } from "../oauth/clients";
import { openAccountSignIn } from "../oauth/pending-sign-in";
import { portalBinding, portalVerifyMethods, recordPortalEvidence, type MfaMethod } from "./evidence";
import { auditPortal, directLinkReturnUri, clearPortalCookie, endPortalSession, offersPortal, openPortalSession, type PortalSession } from "./portal-session";
import { portalForm, toPortal } from "./portal-form";
import { credentialRoutes } from "./credential-routes";
import { EMAIL_CODE_EVIDENCE } from "../authn/factors/email-code/evidence";


/**
 * The direct link. The application must offer the portal. A live hosted session that meets the
 * application's policy is reused; otherwise the hosted sign-in (its steps and policy, stepping up
 * a live session) runs and comes back here. Then a portal session opens (no grant) and the browser
 * goes to the portal page. No authorization code, no grant, no application login.
 */
export const directLinkEndpoint: Endpoint = async (request, ctx) => {
  const params = new URL(request.url).searchParams;
  if (unstorableParameter(params) !== null) return hostedError("unstorable_request");
  const clientIds = params.getAll("client_id");
  if (clientIds.length !== 1 || !clientIds[0]) return hostedError(clientIds.length > 1 ? "client_id_duplicated" : "client_id_missing");
  const client = await findClient(ctx, clientIds[0]);
  if (!client || !client.active) return hostedError("unknown_application");
  const returnUri = directLinkReturnUri(client);
  if (!offersPortal(client) || returnUri === null) return hostedError("account_not_available");

  const session = await getLiveSession(ctx, request.headers.get("cookie"));
  if (!session || !(await sessionMeetsPolicy(ctx, client.id, session))) {
    const returnTo = `${ctx.basePath}/auth/account?client_id=${encodeURIComponent(client.clientId)}`;
    return openAccountSignIn(ctx, { clientPk: client.id, returnTo }, session ?? undefined);
  }
  const portal = await openPortalSession(ctx, { userId: session.userId, sessionId: session.id, clientPk: client.id, grantId: null, returnUri });
  return redirect303(portal.location, [["Set-Cookie", portal.cookie]]);
};

async function userRow(ctx: EndpointContext, userId: string) {
  const [user] = await ctx.service.db
    .select({ passwordHash: users.passwordHash, normalized: users.emailNormalized, email: users.email })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, userId)))
    .limit(1);
  return user ?? null;
}

/**
 * Whether the portal's verification offers `method` to this account (./evidence.ts
 * `verifyMethods`): each form acts only on a method offered, and a refused one is not read.
 */
async function offers(ctx: EndpointContext, portal: PortalSession, ...method: MfaMethod[]): Promise<boolean> {
  const { methods } = await portalVerifyMethods(ctx, portal);
  return method.some((m) => methods.mfa.includes(m));
}

/** Records a verification made in the portal: evidence on the portal session, and the audit event. */
async function verified(request: Request, ctx: EndpointContext, portal: PortalSession, result: VerifyResult): Promise<Response> {
  if (!result.ok || result.userId !== portal.userId) {
    await audit(request, ctx, portal, "account_security.verification_failed", {});
    return toPortal(ctx, { error: "portal_verification_failed" });
  }
  await recordPortalEvidence(ctx, portal, result.evidence);
  await audit(request, ctx, portal, "account_security.verified", { method: result.evidence.method });
  return toPortal(ctx, { done: "verified" });
}

function audit(request: Request, ctx: EndpointContext, portal: PortalSession, type: Extract<AuditEventType, `account_security.${string}`>, data: Record<string, unknown>): Promise<void> {
  return auditPortal(ctx, portal, { ip: clientAddressOf(request.headers, ctx.service.config.trustProxy) }, type, data);
}

/**
 * The local password, when the account has one and the application's policy enables it: the
 * password factor's one verification (lib/authn/factors/password), the same as the sign-in's.
 */
export const verifyPasswordEndpoint = portalForm(async (request, ctx, { portal, form }) => {
  const { methods } = await portalVerifyMethods(ctx, portal);
  if (!methods.primary.includes("password")) return toPortal(ctx, { error: "portal_verification_failed" });
  const result = await verifyPasswordFactor(ctx, request, { userId: portal.userId }, form.get("password") ?? "", clientAddress(request, ctx.service.config.trustProxy));
  if (!result.ok && result.reason === "limited") return toPortal(ctx, { error: "portal_verification_limited" });
  return verified(request, ctx, portal, result.ok ? result : { ok: false, reason: "invalid" });
});

/**
 * A code typed for a factor answered by a typed code (lib/authn/factors/contract.ts
 * `TypedCodeAnswer`: an authenticator app's code, a recovery code), at the portal path the factor
 * declares: only when the portal offers its kind (as MFA: a second factor or a backup; the type
 * check fails for any other kind), verified by the factor's one verification
 * (lib/authn/factors/typed-code.ts: its guessing gate for the account, a wrong code recorded on it).
 */
function typedCodeVerificationEndpoint({ answer, verify }: TypedCodeFactor): Endpoint {
  return portalForm(async (request, ctx, { portal, form }) => {
    if (!(await offers(ctx, portal, answer.kind))) return toPortal(ctx, { error: "portal_verification_failed" });
    const result = await verify(ctx, request, portal.userId, form.get("code") ?? "");
    if (!result.ok && result.reason === "unknown_account") return hostedError("portal_session_ended");
    if (!result.ok && result.reason === "limited") return toPortal(ctx, { error: "portal_verification_limited" });
    return verified(request, ctx, portal, result.ok ? result : { ok: false, reason: "invalid" });
  });
}

/** One portal verification per factor answered by a typed code, at its declared path, in the registry's order. */
const typedCodeVerificationRoutes: Route[] = TYPED_CODE_FACTORS.map((factor): Route => ({
  method: "POST",
  path: factor.answer.portalPath,
  endpoint: typedCodeVerificationEndpoint(factor),
  machine: false,
  errors: "hosted",
}));

/** The portal form helpers live in ./portal-form.ts (shared with ./credential-routes.ts). */
export { portalForm, toPortal, type PortalFormInput } from "./portal-form";

/** "Email me a code": a code to the account's own (verified) address, bound to the portal session. */
export const sendEmailCodeEndpoint = portalForm(async (request, ctx, { portal }) => {
  const { methods } = await portalVerifyMethods(ctx, portal);
  if (!methods.primary.includes(EMAIL_CODE_EVIDENCE.method)) return toPortal(ctx, { error: "portal_verification_failed" });
  const user = await userRow(ctx, portal.userId);
  if (!user) return hostedError("portal_session_ended");
  const gate = await sendGate(ctx, request, user.normalized);
  if (!gate.allowed) return toPortal(ctx, { error: "portal_verification_limited" });
  const code = await issueEmailCode(ctx, portalBinding(portal), { address: user.normalized, userId: portal.userId, deliverable: true });
  await gate.recordSend();
  if (code) sendMail(ctx, signInCodeMessage({ to: user.email, workspaceName: ctx.workspace.name, code, minutes: EMAIL_CODE_TTL_MS / 60_000 }));
  return toPortal(ctx, { done: "code_sent" });
});

/** The emailed code (a primary verification). */
export const verifyEmailCodeEndpoint = portalForm(async (request, ctx, { portal, form }) => {
  const { methods } = await portalVerifyMethods(ctx, portal);
  if (!methods.primary.includes(EMAIL_CODE_EVIDENCE.method)) return toPortal(ctx, { error: "portal_verification_failed" });
  return verified(request, ctx, portal, await verifyEmailCodeFactor(ctx, request, portalBinding(portal), form.get("code")));
});

/**
 * One of the user's passkeys or security keys (the page's WebAuthn prompt), bound to the portal
 * session: the factor's one verification (lib/authn/factors/webauthn/verify.ts: its gate for the
 * account and address, the same as the sign-in's second factor, the account, a refusal counted).
 */
export const verifyWebAuthnEndpoint = portalForm(async (request, ctx, { portal, form }) => {
  if (!(await offers(ctx, portal, "passkey", "security_key"))) return toPortal(ctx, { error: "portal_verification_failed" });
  const result = await verifyWebAuthnFactor(ctx, request, portalBinding(portal), form.get("response"), { userId: portal.userId, kinds: ["passkey", "security_key"] });
  if (!result.ok && result.reason === "limited") return toPortal(ctx, { error: "portal_verification_limited" });
  return verified(request, ctx, portal, result);
});

/** "Done": ends the portal session at once (its cookie cleared) and goes back to the application. */
export const closePortalEndpoint = portalForm(async (request, ctx, { portal }) => {
  await endPortalSession(ctx, portal.id);
  await audit(request, ctx, portal, "account_security.portal_closed", {});
  return redirect303(portal.returnUri, [["Set-Cookie", clearPortalCookie(ctx)]]);
});

export const portalRoutes: Route[] = [
  { method: "GET", path: "/auth/account", endpoint: directLinkEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/account/verify/password", endpoint: verifyPasswordEndpoint, machine: false, errors: "hosted" },
  ...typedCodeVerificationRoutes,
  { method: "POST", path: "/account/verify/email", endpoint: sendEmailCodeEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/account/verify/email/code", endpoint: verifyEmailCodeEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/account/verify/webauthn", endpoint: verifyWebAuthnEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/account/close", endpoint: closePortalEndpoint, machine: false, errors: "hosted" },
  ...credentialRoutes,
];
