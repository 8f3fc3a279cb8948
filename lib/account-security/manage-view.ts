/**
 * The data of the portal's managing sections (components/portal/sections.tsx): the user's
 * passkeys, security keys, authenticator apps and recovery codes, what adding one needs (the
 * creation options with a challenge bound to the portal session, an authenticator app being set
 * up), new recovery codes to show once, the application sessions and the security alerts; and the
 * verdicts of the stronger changes, so the page can ask for the right verification.
 */
import type { EndpointContext } from "../http/context";
import { listSecurityAlerts, type SecurityAlert } from "./alerts";
import { listApplicationSessions, type ApplicationSession } from "./applications";
import { recoveryCodesToShow } from "./credential-routes";
import { credentialCreationOptions, listCredentials, pendingAuthenticatorApp, type CredentialList, type PendingAuthenticatorApp } from "./credentials";
import { freshEvidence, judgeEvidence, portalVerifyMethods, type EvidenceVerdict } from "./evidence";
import type { PortalSession } from "./portal-session";
import { RECOVERY_CODES_FACTOR } from "../authn/factors/recovery-codes";

export interface ManageView {
  credentials: CredentialList;
  /** The authenticator app being added in this visit, with its QR code; null when none. */
  pendingApp: PendingAuthenticatorApp | null;
  /** JSON creation options per kind (null when adding cannot proceed now, or the user is unknown). */
  creation: { passkey: string | null; securityKey: string | null };
  /** New recovery codes, shown until the user says they saved them; null otherwise. */
  newRecoveryCodes: string[] | null;
  applications: ApplicationSession[];
  alerts: SecurityAlert[];
  /** What removing a passkey or security key, removing an authenticator app, and new recovery codes need now. */
  verdicts: { removePhishingResistant: EvidenceVerdict; removePossession: EvidenceVerdict; recoveryCodes: EvidenceVerdict };
}

export async function loadManageView(ctx: EndpointContext, portal: PortalSession, cookieHeader: string | null): Promise<ManageView> {
  const [credentials, pendingApp, applications, alerts, { policy, methods }, fresh] = await Promise.all([
    listCredentials(ctx, portal.userId),
    pendingAuthenticatorApp(ctx, portal),
    listApplicationSessions(ctx, portal.userId, portal.grantId),
    listSecurityAlerts(ctx, portal.userId),
    portalVerifyMethods(ctx, portal),
    freshEvidence(ctx, portal),
  ]);
  const judge = (need: Parameters<typeof judgeEvidence>[0]) => judgeEvidence(need, policy, methods, fresh);
  const canAdd = judge("add").ok;
  // Challenges are issued only when the user can use them now (each page view issues fresh ones).
  const [passkey, securityKey] = canAdd
    ? await Promise.all([credentialCreationOptions(ctx, portal, "passkey"), credentialCreationOptions(ctx, portal, "security_key")])
    : [null, null];
  return {
    credentials,
    pendingApp,
    creation: { passkey: passkey && JSON.stringify(passkey), securityKey: securityKey && JSON.stringify(securityKey) },
    newRecoveryCodes: recoveryCodesToShow(ctx, portal, cookieHeader),
    applications,
    alerts,
    verdicts: {
      removePhishingResistant: judge({ remove: "phishing_resistant" }),
      removePossession: judge({ remove: "possession" }),
      recoveryCodes: judge(RECOVERY_CODES_FACTOR.shownOnce),
    },
  };
}
