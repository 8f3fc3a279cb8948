/**
 * One readable line per audit event: who did what to whom, and how it ended ("alice@x.com
 * disabled application demo-web", "Refresh token reuse detected for bob@x.com — grant revoked
 * (possible token theft)"). The one place that knows every event type; an unknown type still
 * reads as a sentence built from its name, actor and subject.
 */

export interface SummarizableEvent {
  type: string;
  /** The operator's (or, for the account-security portal, the user's) email, when known. */
  actorEmail: string | null;
  actor: string | null;
  subject: string | null;
  /** The email of the user the event is about, when the subject or data names a user. */
  subjectEmail?: string | null;
  clientId: string | null;
  reason: string | null;
  flagged: string | null;
  data: Record<string, unknown>;
}

/** Who acted: an operator's or user's email, or the service itself (protocol events). */
export function actorLabel(e: Pick<SummarizableEvent, "actorEmail" | "actor">): string {
  if (e.actorEmail) return e.actorEmail;
  if (e.actor === "cli") return "the command line";
  return e.actor ? "a user" : "system";
}

const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : null);
const list = (v: unknown): string => (Array.isArray(v) ? (v.length ? v.join(", ") : "none") : "none");
const flagText = (flagged: string | null) => (flagged ? ` (${flagged.replace(/_/g, " ")})` : "");

type Line = (e: SummarizableEvent, who: string, user: string) => string;

/** Console changes, by operation name (the type without `console.`). */
const CONSOLE: Record<string, Line> = {
  "application.created": (e, who) => `${who} created application ${e.subject}${str(e.data.kind) ? ` (${str(e.data.kind)})` : ""}`,
  "application.updated": (e, who) => `${who} updated application ${e.subject}${Array.isArray(e.data.changed) && e.data.changed.length ? `: ${list(e.data.changed)}` : ""}`,
  "application.status_changed": (e, who) => `${who} ${e.data.active === false ? "disabled" : "enabled"} application ${e.subject}`,
  "application.deleted": (e, who) => `${who} deleted application ${e.subject}${grantsEnded(e)}`,
  "application.secret_created": (e, who) => `${who} created a client secret for ${e.subject}`,
  "application.secret_rotated": (e, who) => `${who} rotated the client secret of ${e.subject}${str(e.data.overlap_hours) ? ` (old one valid ${str(e.data.overlap_hours)} h more)` : ""}`,
  "application.secret_revoked": (e, who) => `${who} revoked a client secret of ${e.subject}`,
  "application.secret_expired": (e, who) => `${who} expired a client secret of ${e.subject} now`,
  "application.api_grant_set": (e, who) =>
    e.data.granted === false ? `${who} removed ${e.subject}'s access to API ${str(e.data.audience)}` : `${who} let ${e.subject} call API ${str(e.data.audience)} with ${list(e.data.permissions)}`,
  "application.social_providers_set": (e, who) => `${who} set the social sign-in buttons of ${e.subject}: ${list(e.data.providers)}`,
  "application.auth_policy_changed": (e, who) => `${who} changed the sign-in policy of application ${e.subject}`,
  "workspace.auth_policy_changed": (_e, who) => `${who} changed the workspace's sign-in policy`,
  "workspace.renamed": (e, who) => `${who} renamed the workspace${str(e.data.name) ? ` to ${str(e.data.name)}` : ""}`,
  "workspace.deleted": (e, who) => `${who} deleted workspace ${e.subject}`,
  "workspace.created": (e, who) => `${who} created workspace ${e.subject}`,
  "workspace.branding_changed": (_e, who) => `${who} changed the workspace's branding`,
  "api.created": (e, who) => `${who} created API ${e.subject}`,
  "api.updated": (e, who) => `${who} updated API ${e.subject}`,
  "api.status_changed": (e, who) => `${who} ${e.data.active === false ? "disabled" : "enabled"} API ${e.subject}`,
  "api.deleted": (e, who) => `${who} deleted API ${e.subject}${grantsEnded(e)}`,
  "role.created": (e, who) => `${who} created role ${e.subject}`,
  "role.updated": (e, who) => `${who} updated role ${e.subject}`,
  "role.permissions_set": (e, who) => `${who} set role ${e.subject}'s permissions on ${str(e.data.audience)}: ${list(e.data.permissions)}`,
  "role.deleted": (e, who) => `${who} deleted role ${e.subject}`,
  "user.created": (e, who) => `${who} created user ${e.subject}`,
  "user.password_set": (e, who) => `${who} set the password of ${e.subject}`,
  "user.updated": (e, who) => `${who} updated the profile of ${e.subject}`,
  "user.status_changed": (e, who) => `${who} ${e.data.status === "disabled" ? "disabled" : "enabled"} user ${e.subject}${e.data.status === "disabled" ? endedCounts(e) : ""}`,
  "user.deleted": (e, who) => `${who} deleted user ${e.subject}${endedCounts(e)}`,
  "user.role_assigned": (e, who) => `${who} gave ${e.subject} role ${str(e.data.role)}${str(e.data.organization) ? ` in ${str(e.data.organization)}` : ""}`,
  "user.role_removed": (e, who) => `${who} removed role ${str(e.data.role)} from ${e.subject}${str(e.data.organization) ? ` in ${str(e.data.organization)}` : ""}`,
  "user.session_ended": (e, who) => `${who} ended a session of ${e.subject}`,
  "user.grant_revoked": (e, who) => `${who} revoked ${e.subject}'s grant${e.clientId ? ` to ${e.clientId}` : ""}`,
  "user.factor_removed": (e, who) => `${who} removed ${str(e.data.kind)?.replace(/_/g, " ") ?? "a factor"}${str(e.data.name) ? ` "${str(e.data.name)}"` : ""} from ${e.subject}`,
  "user.identity_unlinked": (e, who) => `${who} unlinked a ${str(e.data.issuer) ?? "federated"} sign-in from ${e.subject}`,
  "organization.created": (e, who) => `${who} created organization ${e.subject}`,
  "organization.updated": (e, who) => `${who} updated organization ${e.subject}`,
  "organization.member_added": (e, who) => `${who} added ${str(e.data.email) ?? "a user"} to organization ${e.subject}`,
  "organization.member_removed": (e, who, user) => `${who} removed ${user} from organization ${e.subject}`,
  "organization.connection_saved": (e, who) => `${who} saved an enterprise connection of ${e.subject}${e.data.admission_changed === true ? `, which now admits ${admissionText(e.data.admission)}` : ""}`,
  "organization.domain_claimed": (e, who) => `${who} claimed domain ${str(e.data.domain)} for ${e.subject}`,
  "organization.domain_verified": (e, who) => `${who} verified domain ${str(e.data.domain)} of ${e.subject} (${e.data.method === "dns" ? "DNS record" : "operator's word"})`,
  "organization.domain_removed": (e, who) => `${who} removed domain ${str(e.data.domain)} from ${e.subject}`,
  "social_provider.created": (e, who) => `${who} added social provider ${e.subject}`,
  "social_provider.updated": (e, who) => `${who} updated social provider ${e.subject}`,
  "social_provider.moved": (e, who) => `${who} moved social provider ${e.subject} ${str(e.data.direction) ?? ""}`.trimEnd(),
  "social_provider.removed": (e, who) => `${who} removed social provider ${e.subject}`,
  "signing_key.published": (e, who) => `${who} published signing key ${e.subject}`,
  "signing_key.activated": (e, who) => `${who} activated signing key ${e.subject}`,
  "operator.added": (e, who) => `${who} added operator ${e.subject} as ${str(e.data.role)}`,
  "operator.role_changed": (e, who) => `${who} changed operator ${e.subject} from ${str(e.data.from)} to ${str(e.data.to)}`,
  "operator.removed": (e, who) => `${who} removed operator ${e.subject}`,
  "operator.status_changed": (e, who) => `${who} ${e.data.status === "disabled" ? "disabled" : "enabled"} operator ${e.subject}`,
  "operator.password_set": (e, who) => `${who} set the password of operator ${e.subject}`,
  "operator.invited": (e, who) => `${who} invited ${e.subject} as ${str(e.data.role)}`,
  "operator.invitation_revoked": (e, who) => `${who} withdrew the invitation of ${e.subject}`,
  "operator.invitation_accepted": (e) => `${e.subject} accepted the invitation as ${str(e.data.role)}${e.data.account === "created" ? " (new operator account)" : ""}`,
  "setup.completed": (_e, who) => `${who} completed the console setup`,
  signed_in: (_e, who) => `${who} signed in to the console`,
  signed_out: (_e, who) => `${who} signed out of the console`,
};

function grantsEnded(e: SummarizableEvent): string {
  const g = typeof e.data.grants_ended === "number" ? e.data.grants_ended : null;
  return g ? ` — ${g} grant${g === 1 ? "" : "s"} ended` : "";
}

/** Who an enterprise connection admits on a first sign-in (enterprise_connections.admission). */
function admissionText(admission: unknown): string {
  return admission === "any_vouched" ? "anyone its provider vouches for" : "only addresses in the organization's verified domains";
}

function endedCounts(e: SummarizableEvent): string {
  const parts: string[] = [];
  const n = (k: string) => (typeof e.data[k] === "number" ? (e.data[k] as number) : 0);
  if (n("sessions_ended")) parts.push(`${n("sessions_ended")} session${n("sessions_ended") === 1 ? "" : "s"}`);
  if (n("grants_ended")) parts.push(`${n("grants_ended")} grant${n("grants_ended") === 1 ? "" : "s"}`);
  if (n("portal_sessions_ended")) parts.push(`${n("portal_sessions_ended")} portal session${n("portal_sessions_ended") === 1 ? "" : "s"}`);
  return parts.length ? ` — ended ${parts.join(", ")}` : "";
}

/** Protocol, portal, sign-in and command-line events, by type. */
/** The second factors a failed sign-in names (a password failure reads without one). */
const FACTOR_NAMES: Record<string, string> = { totp: "authenticator app", recovery_code: "recovery code", webauthn: "passkey or security key" };

const EVENTS: Record<string, Line> = {
  "refresh.reuse_detected": (e, _who, user) => `Refresh token reuse detected for ${user}${e.clientId ? ` at ${e.clientId}` : ""} — grant revoked${flagText(e.flagged)}`,
  "grant.revoked": (e, _who, user) =>
    e.reason === "authorization_code_replay"
      ? `Authorization code used twice — grant revoked${flagText(e.flagged)}`
      : `${e.clientId ?? "An application"} revoked ${user}'s grant${e.reason ? ` (${e.reason.replace(/_/g, " ")})` : ""}`,
  "token.revoked": (e) => `${e.clientId ?? "An application"} revoked an access token${e.subject ? ` of ${e.subject}` : ""}`,
  "session.logout": (e, _who, user) => `${user} signed out${e.clientId ? ` from ${e.clientId}` : ""}`,
  "sign_in.failed": (e, _who, user) => {
    const factor = typeof e.data.method === "string" && e.data.method !== "password" ? ` (${FACTOR_NAMES[e.data.method] ?? e.data.method.replace(/_/g, " ")})` : "";
    return `Failed sign-in${e.subject ? ` for ${user}` : " for an unknown account"}: ${(e.reason ?? "refused").replace(/_/g, " ")}${factor}`;
  },
  "user.created": (e, _who, user) => `${user} signed up${str(e.data.via) ? ` through ${str(e.data.via)?.replace(/_/g, " ")}` : ""}`,
  "federation.identity_linked": (e, _who, user) => `${user} linked a sign-in from ${str(e.data.issuer) ?? "an upstream provider"}`,
  "recovery_code.used": (e, _who, user) => `${user} used a recovery code (${str(e.data.remaining) ?? "?"} left)`,
  "recovery_codes.generated": (_e, _who, user) => `${user} generated new recovery codes`,
  "client.secret.created": (e, who) => `${who} created a client secret for ${e.clientId}`,
  "client.secret.rotated": (e, who) => `${who} rotated the client secret of ${e.clientId}`,
  "client.secret.revoked": (e, who) => `${who} revoked a client secret of ${e.clientId}`,
  "operator.granted": (e) => `Command line gave operator ${e.subject} role ${str(e.data.role)}`,
  "workspace.imported": () => `Workspace imported from a workspace file`,
  "workspace.domain_verified": (e) => `Domain ${str(e.data.domain)} of ${e.subject} verified by workspace import`,
  "workspace.connection_admission_set": (e) => `Connection ${str(e.data.name) ?? ""} of ${e.subject} set by workspace import to admit ${admissionText(e.data.admission)}`,
  "organization.connection_secret_set": (e) => `Command line set the connection secret of ${e.subject}`,
  "social_provider.secret_set": (e) => `Command line set the secret of social provider ${e.subject}`,
  "authz.organization.member_added": (e, _who, user) => `${user} joined organization ${str(e.data.organization) ?? str(e.data.organization_id) ?? ""}${str(e.data.via) ? ` through ${str(e.data.via)?.replace(/_/g, " ")}` : ""}`,
  "authz.organization.member_removed": (e, who, user) => `${who} removed ${user} from organization ${str(e.data.organization) ?? ""}`,
  "authz.user_role.assigned": (e, who, user) => `${who} gave ${user} role ${str(e.data.role)}`,
  "authz.user_role.removed": (e, who, user) => `${who} removed role ${str(e.data.role)} from ${user}`,
  "authz.role.permissions_set": (e, who) => `${who} set role ${str(e.data.role)}'s permissions`,
  "authz.api.permissions_set": (e, who) => `${who} set the permissions of API ${str(e.data.audience)}`,
  "authz.api_grant.set": (e, who) => `${who} let ${str(e.data.client_id)} call API ${str(e.data.audience)}`,
  "authz.api_grant.removed": (e, who) => `${who} removed ${str(e.data.client_id)}'s access to API ${str(e.data.audience)}`,
  "account_security.portal_opened": (_e, _who, user) => `${user} opened the account-security portal`,
  "account_security.portal_closed": (_e, _who, user) => `${user} closed the account-security portal`,
  "account_security.verified": (e, _who, user) => `${user} confirmed it was them in the portal${str(e.data.method) ? ` (${str(e.data.method)})` : ""}`,
  "account_security.verification_failed": (_e, _who, user) => `${user} failed to confirm it was them in the portal`,
  "account_security.credential_added": (e, _who, user) => `${user} added a ${str(e.data.kind)?.replace(/_/g, " ") ?? "factor"} ${e.data.sign_in ? "while signing in" : "in the portal"}`,
  "account_security.credential_removed": (e, _who, user) => `${user} removed ${str(e.data.name) ? `"${str(e.data.name)}"` : "a factor"} in the portal`,
  "account_security.credential_renamed": (e, _who, user) => `${user} renamed a factor to "${str(e.data.name) ?? ""}" in the portal`,
  "account_security.recovery_codes_generated": (_e, _who, user) => `${user} generated new recovery codes in the portal`,
  "account_security.application_signed_out": (e, _who, user) => `${user} signed out of ${e.clientId ?? "an application"} from the portal — grant revoked`,
  "account_security.handoff_launched": (e, _who, user) => `${e.clientId ?? "An application"} sent ${user} to the account-security portal`,
  "account_security.handoff_configured": (e) => `${e.clientId ?? "An application"} configured its account-security handoff`,
  "account_security.handoff_configuration_refused": (e) => `${e.clientId ?? "An application"}'s handoff configuration was refused${e.reason ? ` (${e.reason.replace(/_/g, " ")})` : ""}`,
  "account_security.handoff_approved": (e, _who, user) => `${e.clientId ?? "An application"} approved ${user}'s handoff`,
  "account_security.handoff_approval_refused": (e) => `${e.clientId ?? "An application"}'s handoff approval was refused${e.reason ? ` (${e.reason.replace(/_/g, " ")})` : ""}`,
  "account_security.handoff_refused": (e, _who, user) => `Handoff for ${user} refused${e.reason ? ` (${e.reason.replace(/_/g, " ")})` : ""}`,
  "account_security.handoff_challenged": (_e, _who, user) => `Handoff for ${user} asked the browser to confirm`,
  "account_security.handoff_opened_directly": (_e, _who, user) => `${user} opened a handoff link directly`,
  "account_security.handoff_redeemed": (_e, _who, user) => `${user} arrived in the portal through a handoff`,
};

/** The user the event is about, as readably as the row allows. */
function userLabel(e: SummarizableEvent): string {
  return e.subjectEmail ?? (typeof e.data.email === "string" ? e.data.email : null) ?? (e.subject ? e.subject : "an unknown user");
}

export function summarizeAuditEvent(e: SummarizableEvent): string {
  const who = actorLabel(e);
  const user = userLabel(e);
  if (e.type.startsWith("console.")) {
    const line = CONSOLE[e.type.slice("console.".length)];
    if (line) return line(e, who, user) + (e.flagged ? flagText(e.flagged) : "");
  }
  const line = EVENTS[e.type];
  if (line) return line(e, who, user);
  // Unknown type: its name as words, with who and whom.
  const words = e.type.replace(/^console\./, "").replace(/[._]/g, " ");
  return `${who}: ${words}${e.subject ? ` — ${e.subjectEmail ?? e.subject}` : ""}${e.reason ? ` (${e.reason.replace(/_/g, " ")})` : ""}${flagText(e.flagged)}`;
}

/** Every type the summaries know, for the type filter and the documentation. */
export const KNOWN_EVENT_TYPES: readonly string[] = [...Object.keys(CONSOLE).map((t) => `console.${t}`), ...Object.keys(EVENTS)];
