/**
 * What the portal page shows, loaded once per request from a live portal session: the frame's
 * own facts (the application, the user, the back link, the verification state) and the sections'
 * data (factors, recovery codes, application sessions, security alerts). Each section's loader
 * adds its field here; components/portal/sections.tsx renders them.
 */
import { and, eq } from "drizzle-orm";
import { users } from "../../db/schema";
import { listFactors, type HeldFactor } from "../authn/factors";
import { csrfToken } from "../http/csrf";
import { hostedErrorText, type HostedErrorCode } from "../hosted/errors";
import type { Locale } from "../i18n/locales";
import type { EndpointContext } from "../http/context";
import { pendingEmailCode } from "../authn/factors/email-code";
import { secondFactorOptions } from "../authn/factors/webauthn";
import { freshEvidence, judgeEvidence, portalBinding, portalVerifyMethods, type EvidenceVerdict, type VerifyMethods } from "./evidence";
import type { PortalSession } from "./portal-session";

export interface PortalView {
  portalId: string;
  workspaceName: string;
  applicationName: string;
  userId: string;
  userEmail: string;
  /** The "back" link: the application's origin (direct link) or its registered return URI (handoff). */
  returnUri: string;
  expiresAt: Date;
  /** The CSRF token every portal form carries (purpose "account-portal", bound to the portal session, its cookie secret and the hosted session). */
  csrf: string;
  /** The issuer's path prefix, for form actions (`${basePath}/auth/account/...`). */
  basePath: string;
  /** The account's verification methods, and whether adding a credential can proceed now. */
  verifyMethods: VerifyMethods;
  addVerdict: EvidenceVerdict;
  /** A code was emailed for this portal session and can still be entered. */
  emailCodeSent: boolean;
  /**
   * JSON of the WebAuthn request options (the user's passkeys and security keys, a challenge bound
   * to the portal session); null without credentials or for a provider-only account.
   */
  webauthnOptions: string | null;
  /** The user's enrolled factors (passkeys, authenticator apps, security keys, recovery codes). */
  factors: HeldFactor[];
  /** Notices shown at the top (a `?done=` or `?error=` of the last form post). */
  notice: string | null;
  error: string | null;
}

/** The CSRF bindings of the portal's forms: the workspace, the portal session, the hosted session. */
export function portalCsrfBindings(ctx: EndpointContext, portal: PortalSession): string[] {
  return [ctx.workspace.id, portal.id, portal.sessionId, portal.row.secretHash];
}

export function portalCsrf(ctx: EndpointContext, portal: PortalSession): string {
  return csrfToken(ctx.service.config.masterKey, "account-portal", portalCsrfBindings(ctx, portal));
}

export async function loadPortalView(ctx: EndpointContext, portal: PortalSession, query: { notice?: string | null; error?: string | null } = {}): Promise<PortalView> {
  const [[user], { policy, methods }, fresh, factors] = await Promise.all([
    ctx.service.db
      .select({ email: users.email })
      .from(users)
      .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, portal.userId)))
      .limit(1),
    portalVerifyMethods(ctx, portal),
    freshEvidence(ctx, portal),
    listFactors(ctx, portal.userId),
  ]);
  const addVerdict = judgeEvidence("add", policy, methods, fresh);
  // Any change may ask for a verification (removals ask for more than adding), so the page can always offer one.
  const needsVerification = methods.primary.length > 0;
  const [pending, options] = needsVerification
    ? await Promise.all([pendingEmailCode(ctx, portalBinding(portal)), secondFactorOptions(ctx, portalBinding(portal), portal.userId)])
    : [null, null];
  return {
    portalId: portal.id,
    workspaceName: ctx.workspace.name,
    applicationName: portal.client.name,
    userId: portal.userId,
    userEmail: user?.email ?? "",
    returnUri: portal.returnUri,
    expiresAt: portal.expiresAt,
    csrf: portalCsrf(ctx, portal),
    basePath: ctx.basePath,
    verifyMethods: methods,
    addVerdict,
    emailCodeSent: pending !== null && !pending.dead,
    webauthnOptions: options && JSON.stringify(options),
    factors,
    notice: query.notice ?? null,
    error: query.error ?? null,
  };
}

/** The catalogue codes the portal page shows at its top after a form post (`?error=`); any other value shows nothing. */
export const PORTAL_FORM_ERRORS = [
  "portal_verification_failed",
  "portal_verification_limited",
  "portal_provider_only",
  "portal_last_required_factor",
  "form_unverified",
  // The managing forms (./credential-routes.ts).
  "portal_verification_required",
  "portal_stronger_verification_required",
  "portal_credential_not_found",
  "portal_credential_name_invalid",
  "portal_credential_not_verified",
  "portal_credential_expired",
  "portal_credential_duplicate",
  "portal_application_not_found",
] as const satisfies readonly HostedErrorCode[];

/** The portal form's message for a `?error=` value in the page's language, or null for anything else. */
export function portalFormMessage(value: unknown, locale: Locale = "en"): string | null {
  return (PORTAL_FORM_ERRORS as readonly unknown[]).includes(value) ? hostedErrorText(value as (typeof PORTAL_FORM_ERRORS)[number], { locale }).message : null;
}
