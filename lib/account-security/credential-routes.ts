/**
 * The portal's forms for what it manages (./credentials.ts, ./applications.ts): each a portal form
 * post (./portal-form.ts: same origin, CSRF token, live portal session) that asks the step-up rule
 * (./evidence.ts `requireEvidence`) first where the change needs it, then answers with the portal
 * page and a notice or an error code of the hosted catalogue.
 *
 *   POST /account/credentials/rename        rename a passkey or security key     (adding's evidence)
 *   POST /account/credentials/remove        remove a passkey, key or app         (stronger: the factor's strength)
 *   POST /account/authenticator-app/start   start adding an authenticator app    (adding's evidence)
 *   POST /account/authenticator-app/confirm the app's first code completes it    (adding's evidence)
 *   POST /account/authenticator-app/cancel  drop the unfinished one
 *   POST /account/webauthn/register         a new passkey or security key         (adding's evidence)
 *   POST /account/recovery-codes            generate (or regenerate) recovery codes (stronger)
 *   POST /account/recovery-codes/saved      the user saved them: they are not shown again
 *   POST /account/applications/sign-out     sign out of one application (its grant and tokens)
 */
import { strengthOf } from "../authn/evidence";
import { SECOND_FACTOR_KINDS } from "../authn/factors/registry";
import { RECOVERY_CODES_FACTOR } from "../authn/factors/recovery-codes";
import type { WebAuthnKind } from "../authn/factors/webauthn";
import { clientAddressOf } from "../http/client-address";
import type { EndpointContext } from "../http/context";
import { parseCookieHeader, serializeCookie, clearCookie } from "../http/cookies";
import type { Route } from "../http/route";
import type { HostedErrorCode } from "../hosted/errors";
import { signOutOfApplication } from "./applications";
import {
  addWebAuthnCredential,
  cancelAuthenticatorApp,
  confirmAuthenticatorApp,
  findCredential,
  regenerateRecoveryCodes,
  removeCredential,
  renameCredential,
  startAuthenticatorApp,
  unsealRecoveryCodes,
  type ActionSource,
  type CredentialFailure,
  type PortalActor,
  type RemovableKind,
} from "./credentials";
import { requireEvidence, requireRemovalEvidence, type EvidenceNeed, type VerifyPlan } from "./evidence";
import { portalForm, toPortal } from "./portal-form";
import { PORTAL_PATH, type PortalSession } from "./portal-session";

/** The cookie that carries new recovery codes (sealed for the portal session) until the user says they saved them. */
export const RECOVERY_CODES_COOKIE = "lk_portal_codes";
/** Long enough to write them down; the portal session itself lasts at most 30 minutes. */
const RECOVERY_CODES_COOKIE_SECONDS = 30 * 60;
/** Sent only to the portal page and its forms. */
const codesCookiePath = (ctx: EndpointContext) => `${ctx.basePath}${PORTAL_PATH}`;

const sourceOf = (request: Request, ctx: EndpointContext): ActionSource => ({ ip: clientAddressOf(request.headers, ctx.service.config.trustProxy) });

const FAILURE_CODES: Record<CredentialFailure, HostedErrorCode> = {
  not_found: "portal_credential_not_found",
  invalid_name: "portal_credential_name_invalid",
  last_required_factor: "portal_last_required_factor",
  invalid: "portal_credential_not_verified",
  expired: "portal_credential_expired",
  duplicate: "portal_credential_duplicate",
};

/** Back to the portal with the failure's message. */
const failed = (ctx: EndpointContext, reason: CredentialFailure) => toPortal(ctx, { error: FAILURE_CODES[reason] });

/** The step-up rule for `need`: null when the evidence is enough, otherwise the answer that asks the user to verify. */
async function stepUp(ctx: EndpointContext, portal: PortalSession, need: EvidenceNeed): Promise<Response | null> {
  const verdict = await requireEvidence(ctx, portal, need);
  return verdict.ok ? null : askToVerify(ctx, verdict.verify, need === "add" ? "add" : "remove");
}

/** Back to the portal, whose verification section offers what `plan` lists. */
function askToVerify(ctx: EndpointContext, plan: VerifyPlan, change: "add" | "remove"): Response {
  if (plan.reason === "provider_only") return toPortal(ctx, { error: "portal_provider_only" });
  return toPortal(ctx, { error: change === "add" ? "portal_verification_required" : "portal_stronger_verification_required" });
}

const isWebAuthnKind = (v: string | null): v is WebAuthnKind => v === "passkey" || v === "security_key";
/** A user's second factors are removed one by one; a backup (the recovery-code set) is replaced by generating a new one. */
const isRemovableKind = (v: string | null): v is RemovableKind => (SECOND_FACTOR_KINDS as readonly (string | null)[]).includes(v);

export const renameCredentialEndpoint = portalForm(async (request, ctx, { portal, form }) => {
  const refused = await stepUp(ctx, portal, "add");
  if (refused) return refused;
  const result = await renameCredential(ctx, portal, form.get("id") ?? "", form.get("name") ?? "", sourceOf(request, ctx));
  return result.ok ? toPortal(ctx, { done: "credential_renamed" }) : failed(ctx, result.reason);
});

/** Removing asks for evidence at least as strong as the factor removed (a passkey: phishing-resistant). */
export const removeCredentialEndpoint = portalForm(async (request, ctx, { portal, form }) => {
  const kind = form.get("kind");
  const id = form.get("id") ?? "";
  if (!isRemovableKind(kind)) return failed(ctx, "not_found");
  const factor = await findCredential(ctx, portal.userId, kind, id);
  if (!factor) return failed(ctx, "not_found");
  // The policy's last required factor is refused before any verification is asked for. A flagged
  // credential (refused since its counter went backwards) never counts towards the policy, so
  // removing it takes nothing away: only the evidence is asked for.
  const verdict = factor.flagged ? await requireEvidence(ctx, portal, { remove: strengthOf(kind) }) : await requireRemovalEvidence(ctx, portal, kind);
  if ("lastRequired" in verdict) return failed(ctx, "last_required_factor");
  if (!verdict.ok) return askToVerify(ctx, verdict.verify, "remove");
  const result = await removeCredential(ctx, portal, kind, id, sourceOf(request, ctx));
  return result.ok ? toPortal(ctx, { done: "credential_removed" }) : failed(ctx, result.reason);
});

export const startAuthenticatorAppEndpoint = portalForm(async (_request, ctx, { portal }) => {
  const refused = await stepUp(ctx, portal, "add");
  if (refused) return refused;
  await startAuthenticatorApp(ctx, portal);
  return toPortal(ctx);
});

export const confirmAuthenticatorAppEndpoint = portalForm(async (request, ctx, { portal, form }) => {
  const refused = await stepUp(ctx, portal, "add");
  if (refused) return refused;
  const result = await confirmAuthenticatorApp(ctx, portal, form.get("code") ?? "", sourceOf(request, ctx));
  return result.ok ? toPortal(ctx, { done: "authenticator_app_added" }) : failed(ctx, result.reason);
});

export const cancelAuthenticatorAppEndpoint = portalForm(async (_request, ctx, { portal }) => {
  await cancelAuthenticatorApp(ctx, portal);
  return toPortal(ctx);
});

/** The browser's new credential (the JSON of startRegistration in `response`), of `kind`, optionally named. */
export const registerWebAuthnEndpoint = portalForm(async (request, ctx, { portal, form }) => {
  const kind = form.get("kind");
  if (!isWebAuthnKind(kind)) return failed(ctx, "invalid");
  const refused = await stepUp(ctx, portal, "add");
  if (refused) return refused;
  const result = await addWebAuthnCredential(ctx, portal, kind, form.get("response"), sourceOf(request, ctx), form.get("name") ?? "");
  if (!result.ok) return failed(ctx, result.reason);
  return toPortal(ctx, { done: kind === "passkey" ? "passkey_added" : "security_key_added" });
});

/** New recovery codes: the old ones stop working; the new ones ride in a cookie sealed for this portal session until saved. */
export const generateRecoveryCodesEndpoint = portalForm(async (request, ctx, { portal }) => {
  const refused = await stepUp(ctx, portal, RECOVERY_CODES_FACTOR.shownOnce);
  if (refused) return refused;
  const { sealed } = await regenerateRecoveryCodes(ctx, portal, sourceOf(request, ctx));
  const response = toPortal(ctx, { done: "recovery_codes_generated" });
  response.headers.append("Set-Cookie", serializeCookie(RECOVERY_CODES_COOKIE, sealed, codesCookiePath(ctx), RECOVERY_CODES_COOKIE_SECONDS));
  return response;
});

export const recoveryCodesSavedEndpoint = portalForm(async (_request, ctx) => {
  const response = toPortal(ctx);
  response.headers.append("Set-Cookie", clearCookie(RECOVERY_CODES_COOKIE, codesCookiePath(ctx)));
  return response;
});

/** Signing out of an application needs no step-up: it only takes access away. */
export const signOutOfApplicationEndpoint = portalForm(async (request, ctx, { portal, form }) => {
  const result = await signOutOfApplication(ctx, portal, form.get("grant") ?? "", sourceOf(request, ctx));
  if (!result.ok) return toPortal(ctx, { error: "portal_application_not_found" });
  return toPortal(ctx, { done: "application_signed_out" });
});

/** The recovery codes this browser holds for the portal session, to show until saved; null when none. */
export function recoveryCodesToShow(ctx: EndpointContext, portal: PortalActor, cookieHeader: string | null): string[] | null {
  return unsealRecoveryCodes(ctx, portal, parseCookieHeader(cookieHeader).get(RECOVERY_CODES_COOKIE));
}

export const credentialRoutes: Route[] = [
  { method: "POST", path: "/account/credentials/rename", endpoint: renameCredentialEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/account/credentials/remove", endpoint: removeCredentialEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/account/authenticator-app/start", endpoint: startAuthenticatorAppEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/account/authenticator-app/confirm", endpoint: confirmAuthenticatorAppEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/account/authenticator-app/cancel", endpoint: cancelAuthenticatorAppEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/account/webauthn/register", endpoint: registerWebAuthnEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/account/recovery-codes", endpoint: generateRecoveryCodesEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/account/recovery-codes/saved", endpoint: recoveryCodesSavedEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/account/applications/sign-out", endpoint: signOutOfApplicationEndpoint, machine: false, errors: "hosted" },
];
