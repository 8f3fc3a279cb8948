/**
 * The audit catalogue: every event type the service writes, once. Each entry names its group (the
 * console's filter), says in one line what it records, what `subject`, `client_id`, `reason` and
 * `flagged` hold, the keys of its `data` with their JSON types, and how the console reads one event
 * as a sentence. `AuditInput.type` (./events.ts) is this catalogue's name type, so an event not
 * written here does not compile; the console's summaries, its filter and export, and
 * docs/audit-events.md (./table.ts) read from it.
 *
 * Plain data and small functions: loading it does no work beyond building this object.
 */

/** An audit row as the console reads it (lib/console/audit.ts `AuditEntry` fits). */
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

/** One event as a sentence: `who` acted (actorLabel), `user` is whom it is about. */
export type AuditLine = (e: SummarizableEvent, who: string, user: string) => string;

/** The JSON type of a `data` key; with `?`, the key may be absent. */
type FieldType = "string" | "number" | "boolean" | "string[]" | "string|null" | "number|null" | "json";
export type AuditField = FieldType | `${FieldType}?`;
export type AuditDataSpec = Readonly<Record<string, AuditField>>;

/** The console filter's groups, in the order it lists them. */
export const AUDIT_GROUPS = {
  console: "Console changes",
  console_access: "Console sign-ins",
  sign_in: "Sign-in and sign-up",
  tokens: "Tokens and grants",
  account_security: "Account-security portal",
  authorization: "Roles, permissions and organization members",
  client_secrets: "Client secrets",
  command_line: "Command line and workspace files",
  provisioning: "Directory provisioning (SCIM)",
  organization_portal: "Organization admin portal",
} as const;
export type AuditGroup = keyof typeof AUDIT_GROUPS;

export interface AuditEventSpec<D extends AuditDataSpec = AuditDataSpec> {
  group: AuditGroup;
  /** What one event of this type records, in one line (the documentation, the filter's options). */
  summary: string;
  /** What `subject` holds, when the event has one. */
  subject?: string;
  /** What `client_id` holds, when the event has one. */
  client?: string;
  /** The `reason` values it carries. */
  reason?: string;
  /** A security warning: the `flagged` value it carries (always, or when the reason says so). */
  warning?: string;
  /** Written by a console operation (lib/console/operation.ts): `data` also holds OPERATION_DATA. */
  operation?: true;
  /** Written by earlier versions only; kept so their rows still read as sentences. */
  legacy?: true;
  data: D;
  /** How the console reads one event. */
  line: AuditLine;
}

const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : null);
const list = (v: unknown): string => (Array.isArray(v) ? (v.length ? v.join(", ") : "none") : "none");
const words = (v: string) => v.replace(/_/g, " ");
/** " (possible token theft)" for a flagged event. */
export const flagText = (flagged: string | null) => (flagged ? ` (${words(flagged)})` : "");
const reasonText = (e: SummarizableEvent) => (e.reason ? ` (${words(e.reason)})` : "");
const app = (e: SummarizableEvent) => e.clientId ?? "An application";

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

/** The second factors a failed sign-in names (a password failure reads without one). */
const FACTOR_NAMES: Record<string, string> = { totp: "authenticator app", recovery_code: "recovery code", webauthn: "passkey or security key" };

const event = <const D extends AuditDataSpec = Record<never, never>>(spec: Omit<AuditEventSpec<D>, "data"> & { data?: D }): AuditEventSpec<D> => ({ ...spec, data: (spec.data ?? {}) as D });

/** What every console operation's event carries (lib/console/operation.ts): the operator, their role, what inner writers recorded. */
export const OPERATION_DATA = { operator: "string", role: "string", effects: "json?" } as const;

/** A console operation's event, `console.<operation>`: in the workspace it changed, the operator as `actor`. */
const change = <const D extends AuditDataSpec = Record<never, never>>(
  spec: Omit<AuditEventSpec<D>, "data" | "group"> & { data?: D },
): AuditEventSpec<typeof OPERATION_DATA & D> => ({ ...spec, group: "console", operation: true, data: { ...OPERATION_DATA, ...(spec.data ?? ({} as D)) } });

const USER_ID = "the user's id";
const USER_EMAIL = "the user's email";
const AT_APP = "the user's subject as the application sees it";
const CLIENT = "the application's client_id";
// The application the portal was opened from is recorded where it is known.
const PORTAL = { portal_session: "string", client: "string?" } as const;
const FOOTPRINT = { sessions_ended: "number?", grants_ended: "number?", portal_sessions_ended: "number?" } as const;

const CATALOGUE = {
  // Console changes: one event per operation (lib/console/*.ts), named `console.<operation>`.
  "console.application.created": change({
    summary: "An operator created an application",
    subject: CLIENT,
    client: CLIENT,
    data: { type: "string", kind: "string", redirect_uris: "string[]" },
    line: (e, who) => `${who} created application ${e.subject}${str(e.data.kind) ? ` (${str(e.data.kind)})` : ""}`,
  }),
  "console.application.updated": change({
    summary: "An operator changed an application's settings (the changed fields and their new values)",
    subject: CLIENT,
    client: CLIENT,
    data: {
      changed: "string[]",
      name: "string",
      redirectUris: "string[]",
      postLogoutRedirectUris: "string[]",
      homeUri: "string|null",
      allowedOrigins: "string[]",
      identityScopes: "string[]",
      accountSecurity: "boolean",
    },
    line: (e, who) => `${who} updated application ${e.subject}${Array.isArray(e.data.changed) && e.data.changed.length ? `: ${list(e.data.changed)}` : ""}`,
  }),
  "console.application.status_changed": change({
    summary: "An operator enabled or disabled an application",
    subject: CLIENT,
    client: CLIENT,
    data: { active: "boolean" },
    line: (e, who) => `${who} ${e.data.active === false ? "disabled" : "enabled"} application ${e.subject}`,
  }),
  "console.application.options_changed": change({
    summary: "An operator switched an application's protocol options (the options the features declare per application; `on` lists those now on)",
    subject: CLIENT,
    client: CLIENT,
    data: { changed: "string[]", on: "string[]" },
    line: (e, who) => `${who} changed protocol options of application ${e.subject}${Array.isArray(e.data.on) ? `: on ${e.data.on.length ? list(e.data.on) : "none"}` : ""}`,
  }),
  "console.application.deleted": change({
    summary: "An operator deleted an application, ending its grants and tokens",
    subject: CLIENT,
    client: CLIENT,
    data: { name: "string", type: "string", grants_ended: "number", access_tokens_ended: "number" },
    line: (e, who) => `${who} deleted application ${e.subject}${grantsEnded(e)}`,
  }),
  "console.application.sign_in_tried": change({
    summary: "An operator tried an application's sign-in from the console (nothing was issued to the application)",
    subject: CLIENT,
    client: CLIENT,
    line: (e, who) => `${who} tried the sign-in of ${e.subject}`,
  }),
  "console.application.secret_created": change({
    summary: "An operator added a client secret to an application",
    subject: CLIENT,
    client: CLIENT,
    data: { secret_id: "string", lifetime_days: "number?" },
    line: (e, who) => `${who} created a client secret for ${e.subject}`,
  }),
  "console.application.secret_rotated": change({
    summary: "An operator rotated an application's client secret",
    subject: CLIENT,
    client: CLIENT,
    data: { secret_id: "string", overlap_hours: "number", previous: "string[]" },
    line: (e, who) => `${who} rotated the client secret of ${e.subject}${str(e.data.overlap_hours) ? ` (old one valid ${str(e.data.overlap_hours)} h more)` : ""}`,
  }),
  "console.application.secret_revoked": change({
    summary: "An operator revoked a client secret",
    subject: CLIENT,
    client: CLIENT,
    data: { secret_id: "string" },
    line: (e, who) => `${who} revoked a client secret of ${e.subject}`,
  }),
  "console.application.secret_expired": change({
    summary: "An operator ended a rotated client secret's overlap now",
    subject: CLIENT,
    client: CLIENT,
    data: { secret_id: "string" },
    line: (e, who) => `${who} expired a client secret of ${e.subject} now`,
  }),
  "console.application.api_grant_set": change({
    summary: "An operator let an application call an API with some permissions, or removed that access",
    subject: CLIENT,
    client: CLIENT,
    data: { audience: "string", granted: "boolean", permissions: "string[]" },
    line: (e, who) =>
      e.data.granted === false ? `${who} removed ${e.subject}'s access to API ${str(e.data.audience)}` : `${who} let ${e.subject} call API ${str(e.data.audience)} with ${list(e.data.permissions)}`,
  }),
  "console.application.social_providers_set": change({
    summary: "An operator chose the social sign-in buttons an application shows",
    subject: CLIENT,
    client: CLIENT,
    data: { providers: "string[]", added: "string[]", removed: "string[]" },
    line: (e, who) => `${who} set the social sign-in buttons of ${e.subject}: ${list(e.data.providers)}`,
  }),
  "console.application.auth_policy_changed": change({
    summary: "An operator changed an application's sign-in policy (fields, before, after)",
    subject: CLIENT,
    client: CLIENT,
    data: { changed: "string[]", before: "json", after: "json" },
    line: (e, who) => `${who} changed the sign-in policy of application ${e.subject}`,
  }),
  "console.workspace.auth_policy_changed": change({
    summary: "An operator changed the workspace's sign-in policy (fields, before, after)",
    subject: "the workspace id",
    data: { changed: "string[]", before: "json", after: "json" },
    line: (_e, who) => `${who} changed the workspace's sign-in policy`,
  }),
  "console.workspace.renamed": change({
    summary: "An operator renamed the workspace",
    subject: "the workspace id",
    data: { name: "string", previous_name: "string" },
    line: (e, who) => `${who} renamed the workspace${str(e.data.name) ? ` to ${str(e.data.name)}` : ""}`,
  }),
  "console.workspace.deleted": change({
    summary: "An owner deleted a workspace (recorded in the system workspace)",
    subject: "the workspace id",
    data: { name: "string", applications: "number", users: "number" },
    line: (e, who) => `${who} deleted workspace ${e.subject}`,
  }),
  "console.workspace.created": event({
    group: "console",
    summary: "An operator created a workspace",
    subject: "the workspace id",
    data: { operator: "string", name: "string" },
    line: (e, who) => `${who} created workspace ${e.subject}`,
  }),
  "console.workspace.branding_changed": change({
    summary: "An operator changed the workspace's branding or logo",
    subject: "the workspace id",
    data: { changed: "string[]", before: "json?", after: "json?", logo: "json?" },
    line: (_e, who) => `${who} changed the workspace's branding`,
  }),
  "console.workspace.password_screening_changed": change({
    summary: "An operator turned the screening of new passwords on or off, or changed the score it asks",
    subject: "the workspace id",
    data: { before: "json", after: "json" },
    line: (_e, who) => `${who} changed how new passwords are screened`,
  }),
  "console.workspace.password_reset_changed": change({
    summary: "An operator turned self-service password reset on (`email`) or off",
    subject: "the workspace id",
    data: { before: "string", after: "string" },
    line: (e, who) => `${who} turned self-service password reset ${e.data.after === "email" ? "on" : "off"}`,
  }),
  "console.workspace.bot_challenge_changed": change({
    summary: "An operator changed when the hosted sign-in asks a proof of work: `off`, `adaptive` or `always`",
    subject: "the workspace id",
    data: { before: "string", after: "string" },
    line: (e, who) => `${who} set bot protection to ${str(e.data.after) ?? "?"}`,
  }),
  "console.workspace.security_alerts_changed": change({
    summary: "An operator turned security alerts by email on or off (which of them users get)",
    subject: "the workspace id",
    data: { before: "json", after: "json" },
    line: (_e, who) => `${who} changed which security alerts users get by email`,
  }),
  "console.workspace.hostname_added": change({
    summary: "An operator added an authentication hostname to the workspace (unverified until its DNS record is found)",
    subject: "the hostname",
    data: { hostname: "string", hostname_id: "string" },
    line: (e, who) => `${who} added hostname ${e.subject}`,
  }),
  "console.workspace.hostname_verified": change({
    summary: "A hostname's DNS TXT record was found: the hostname now serves the workspace",
    subject: "the hostname",
    data: { hostname: "string", hostname_id: "string", method: "string" },
    line: (e, who) => `${who} verified hostname ${e.subject} by its DNS record`,
  }),
  "console.workspace.primary_hostname_set": change({
    summary: "An operator made a hostname the workspace's primary one, or the default host again",
    subject: "the hostname made primary (none: the default host)",
    data: { hostname: "string|null", hostname_id: "string|null", previous: "string|null" },
    line: (e, who) => `${who} made ${e.subject ? `hostname ${e.subject}` : "the default host"} the workspace's primary address`,
  }),
  "console.workspace.hostname_removed": change({
    summary: "An operator removed a hostname: its sessions ended and the grants made under its issuer were revoked",
    subject: "the hostname",
    data: { hostname: "string", hostname_id: "string", was_verified: "string|null", was_primary: "boolean", sessions_ended: "number", grants_ended: "number" },
    line: (e, who) => `${who} removed hostname ${e.subject}${endedCounts(e)}`,
  }),
  "console.workspace.related_origins_set": change({
    summary: "An operator turned WebAuthn related origins for the workspace's hostnames on or off",
    subject: "the workspace id",
    data: { related_origins: "boolean" },
    line: (e, who) => `${who} turned passkey related origins ${e.data.related_origins === true ? "on" : "off"}`,
  }),
  "console.api.created": change({
    summary: "An operator created an API",
    subject: "the API's audience",
    data: { name: "string", permissions: "string[]" },
    line: (e, who) => `${who} created API ${e.subject}`,
  }),
  "console.api.updated": change({
    summary: "An operator renamed an API or changed its permissions",
    subject: "the API's audience",
    data: { name: "string", previous_name: "string", permissions: "string[]", removed: "string[]" },
    line: (e, who) => `${who} updated API ${e.subject}`,
  }),
  "console.api.status_changed": change({
    summary: "An operator enabled or disabled an API",
    subject: "the API's audience",
    data: { active: "boolean" },
    line: (e, who) => `${who} ${e.data.active === false ? "disabled" : "enabled"} API ${e.subject}`,
  }),
  "console.api.deleted": change({
    summary: "An operator deleted an API, ending the grants and tokens for it",
    subject: "the API's audience",
    data: { name: "string", applications: "number", grants_ended: "number", access_tokens_ended: "number" },
    line: (e, who) => `${who} deleted API ${e.subject}${grantsEnded(e)}`,
  }),
  "console.role.created": change({
    summary: "An operator created a role",
    subject: "the role's name",
    data: { description: "string|null" },
    line: (e, who) => `${who} created role ${e.subject}`,
  }),
  "console.role.updated": change({
    summary: "An operator renamed a role or changed its description",
    subject: "the role's name",
    data: { previous_name: "string?", description: "string|null" },
    line: (e, who) => `${who} updated role ${e.subject}`,
  }),
  "console.role.permissions_set": change({
    summary: "An operator set a role's permissions on an API",
    subject: "the role's name",
    data: { audience: "string", permissions: "string[]" },
    line: (e, who) => `${who} set role ${e.subject}'s permissions on ${str(e.data.audience)}: ${list(e.data.permissions)}`,
  }),
  "console.role.deleted": change({
    summary: "An operator deleted a role",
    subject: "the role's name",
    data: { holders: "number" },
    line: (e, who) => `${who} deleted role ${e.subject}`,
  }),
  "console.user.created": change({
    summary: "An operator created a user",
    subject: USER_EMAIL,
    data: { user_id: "string", email_verified: "boolean", password_set: "boolean" },
    line: (e, who) => `${who} created user ${e.subject}`,
  }),
  "console.user.password_set": change({
    summary: "An operator set a user's password",
    subject: USER_EMAIL,
    data: { user_id: "string" },
    line: (e, who) => `${who} set the password of ${e.subject}`,
  }),
  "console.user.updated": change({
    summary: "An operator changed a user's profile",
    subject: USER_EMAIL,
    data: { user_id: "string", name: "string|null", email_verified: "boolean" },
    line: (e, who) => `${who} updated the profile of ${e.subject}`,
  }),
  "console.user.status_changed": change({
    summary: "An operator enabled or disabled a user (disabling ends their sessions and grants)",
    subject: USER_EMAIL,
    data: { user_id: "string", status: "string", ...FOOTPRINT },
    line: (e, who) => `${who} ${e.data.status === "disabled" ? "disabled" : "enabled"} user ${e.subject}${e.data.status === "disabled" ? endedCounts(e) : ""}`,
  }),
  "console.user.deleted": change({
    summary: "An operator deleted a user, with everything they held",
    subject: USER_EMAIL,
    data: { user_id: "string", ...FOOTPRINT },
    line: (e, who) => `${who} deleted user ${e.subject}${endedCounts(e)}`,
  }),
  "console.user.role_assigned": change({
    summary: "An operator gave a user a role (in the workspace or an organization)",
    subject: USER_EMAIL,
    data: { user_id: "string", role: "string", organization: "string|null" },
    line: (e, who) => `${who} gave ${e.subject} role ${str(e.data.role)}${str(e.data.organization) ? ` in ${str(e.data.organization)}` : ""}`,
  }),
  "console.user.role_removed": change({
    summary: "An operator removed a role from a user",
    subject: USER_EMAIL,
    data: { user_id: "string", role: "string", organization: "string|null" },
    line: (e, who) => `${who} removed role ${str(e.data.role)} from ${e.subject}${str(e.data.organization) ? ` in ${str(e.data.organization)}` : ""}`,
  }),
  "console.user.session_ended": change({
    summary: "An operator ended one of a user's sessions",
    subject: USER_EMAIL,
    data: { user_id: "string", session_id: "string" },
    line: (e, who) => `${who} ended a session of ${e.subject}`,
  }),
  "console.user.grant_revoked": change({
    summary: "An operator revoked a user's grant to an application",
    subject: USER_EMAIL,
    client: CLIENT,
    data: { user_id: "string", grant_id: "string" },
    line: (e, who) => `${who} revoked ${e.subject}'s grant${e.clientId ? ` to ${e.clientId}` : ""}`,
  }),
  "console.user.factor_removed": change({
    summary: "An operator removed one of a user's factors (passkey, authenticator app, recovery codes)",
    subject: USER_EMAIL,
    data: { user_id: "string", kind: "string", factor_id: "string", name: "string|null", remaining: "number?" },
    line: (e, who) => `${who} removed ${str(e.data.kind)?.replace(/_/g, " ") ?? "a factor"}${str(e.data.name) ? ` "${str(e.data.name)}"` : ""} from ${e.subject}`,
  }),
  "console.user.identity_unlinked": change({
    summary: "An operator unlinked a federated sign-in from a user",
    subject: USER_EMAIL,
    data: { user_id: "string", identity_id: "string", issuer: "string", subject: "string" },
    line: (e, who) => `${who} unlinked a ${str(e.data.issuer) ?? "federated"} sign-in from ${e.subject}`,
  }),
  "console.organization.created": change({
    summary: "An operator created an organization",
    subject: "the organization's slug",
    data: { name: "string" },
    line: (e, who) => `${who} created organization ${e.subject}`,
  }),
  "console.organization.updated": change({
    summary: "An operator renamed, enabled or disabled an organization",
    subject: "the organization's slug",
    data: { name: "string", active: "boolean" },
    line: (e, who) => `${who} updated organization ${e.subject}`,
  }),
  "console.organization.member_added": change({
    summary: "An operator added a user to an organization",
    subject: "the organization's slug",
    data: { email: "string", user_id: "string" },
    line: (e, who) => `${who} added ${str(e.data.email) ?? "a user"} to organization ${e.subject}`,
  }),
  "console.organization.member_removed": change({
    summary: "An operator removed a user from an organization",
    subject: "the organization's slug",
    data: { user_id: "string" },
    line: (e, who, user) => `${who} removed ${user} from organization ${e.subject}`,
  }),
  "console.organization.member_invited": change({
    summary: "An operator invited an address to an organization (again: a new link, the old one dead)",
    subject: "the organization's slug",
    data: { invitation_id: "string", email: "string", roles: "string[]", administrator: "boolean", expires_at: "string", replaced: "boolean" },
    line: (e, who) => `${who} invited ${str(e.data.email) ?? "an address"} to organization ${e.subject}${e.data.administrator === true ? " as an administrator" : ""}`,
  }),
  "console.organization.invitation_resent": change({
    summary: "An operator sent an organization invitation again (a new link, the old one dead)",
    subject: "the organization's slug",
    data: { invitation_id: "string", email: "string", expires_at: "string" },
    line: (e, who) => `${who} sent the invitation of ${str(e.data.email) ?? "an address"} to organization ${e.subject} again`,
  }),
  "console.organization.invitation_withdrawn": change({
    summary: "An operator withdrew a pending organization invitation",
    subject: "the organization's slug",
    data: { invitation_id: "string", email: "string" },
    line: (e, who) => `${who} withdrew the invitation of ${str(e.data.email) ?? "an address"} to organization ${e.subject}`,
  }),
  "console.organization.member_administrator_set": change({
    summary: "An operator made a member an administrator of an organization, or made them no longer one",
    subject: "the organization's slug",
    data: { user_id: "string", administrator: "boolean" },
    line: (e, who, user) => `${who} ${e.data.administrator === true ? "made" : "removed"} ${user} ${e.data.administrator === true ? "an administrator of" : "as an administrator of"} organization ${e.subject}`,
  }),
  "console.organization.connection_saved": change({
    summary: "An operator created or changed an enterprise connection (whom it admits stands out)",
    subject: "the organization's slug",
    data: {
      connection_id: "string",
      name: "string",
      kind: "string",
      active: "boolean",
      config: "json",
      default_role_ids: "string[]",
      trust_upstream_mfa: "boolean",
      admission: "string",
      admission_changed: "boolean",
      admission_previous: "string|null?",
      secret_changed: "boolean",
      legacy_signatures: "boolean?",
      legacy_signatures_changed: "boolean?",
    },
    line: (e, who) =>
      `${who} saved an enterprise connection of ${e.subject}${e.data.admission_changed === true ? `, which now admits ${admissionText(e.data.admission)}` : ""}${
        e.data.legacy_signatures_changed === true ? (e.data.legacy_signatures === true ? ", which now accepts SHA-1 signatures" : ", which no longer accepts SHA-1 signatures") : ""
      }`,
  }),
  "console.organization.connection_test_started": change({
    summary: "An operator started a test of an enterprise connection (its outcome is organization.connection_tested)",
    subject: "the connection's id",
    data: { organization_id: "string", connection_id: "string" },
    line: (e, who) => `${who} started a test of enterprise connection ${e.subject}`,
  }),
  "console.organization.domain_claimed": change({
    summary: "An operator claimed an email domain for an organization",
    subject: "the organization's slug",
    data: { domain: "string", domain_id: "string" },
    line: (e, who) => `${who} claimed domain ${str(e.data.domain)} for ${e.subject}`,
  }),
  "console.organization.domain_verified": change({
    summary: "A domain was verified, by its DNS record or on the operator's word",
    subject: "the organization's slug",
    data: { domain: "string", domain_id: "string", method: "string" },
    line: (e, who) => `${who} verified domain ${str(e.data.domain)} of ${e.subject} (${e.data.method === "dns" ? "DNS record" : "operator's word"})`,
  }),
  "console.organization.domain_removed": change({
    summary: "An operator removed an organization's domain",
    subject: "the organization's slug",
    data: { domain: "string", domain_id: "string", was_verified: "string|null" },
    line: (e, who) => `${who} removed domain ${str(e.data.domain)} from ${e.subject}`,
  }),
  "console.organization.directory_saved": change({
    summary: "An operator turned an organization's directory (SCIM provisioning) on or off or changed its settings (the new values)",
    subject: "the organization's slug",
    data: { enabled: "boolean", connection_id: "string|null", subject_attribute: "string", local_sign_in: "boolean", any_domain: "boolean", group_roles: "json" },
    line: (e, who) => `${who} ${e.data.enabled ? "saved" : "turned off"} the directory of ${e.subject}${e.data.any_domain ? " (any address)" : ""}${e.data.local_sign_in ? " (local sign-in allowed)" : ""}`,
  }),
  "console.organization.directory_token_issued": change({
    summary: "An operator issued a SCIM token for an organization's directory (the tokens it replaces work for the overlap)",
    subject: "the organization's slug",
    data: { token_id: "string", overlap_hours: "number", previous: "string[]" },
    line: (e, who) => `${who} issued a SCIM token for ${e.subject}${Array.isArray(e.data.previous) && e.data.previous.length ? ` (previous tokens work ${str(e.data.overlap_hours) ?? 0} more hours)` : ""}`,
  }),
  "console.organization.directory_token_revoked": change({
    summary: "An operator revoked a SCIM token of an organization's directory",
    subject: "the organization's slug",
    data: { token_id: "string" },
    line: (e, who) => `${who} revoked a SCIM token of ${e.subject}`,
  }),
  "console.organization.portal_link_created": change({
    summary: "An operator made a setup link of an organization's admin portal for one address (its secret shown once)",
    subject: "the organization's slug",
    data: { link_id: "string", email: "string", expires_at: "string", emailed: "boolean" },
    line: (e, who) => `${who} made an admin portal setup link of ${e.subject} for ${str(e.data.email) ?? "an address"}`,
  }),
  "console.organization.portal_link_revoked": change({
    summary: "An operator revoked a setup link of an organization's admin portal (the sessions it started ended)",
    subject: "the organization's slug",
    data: { link_id: "string", email: "string", sessions_ended: "number" },
    line: (e, who) => `${who} revoked the admin portal setup link of ${e.subject} for ${str(e.data.email) ?? "an address"}${e.data.sessions_ended ? " and ended its session" : ""}`,
  }),
  "console.social_provider.created": change({
    summary: "An operator added a social sign-in provider",
    subject: "the provider's key",
    data: { provider_id: "string", preset: "string", name: "string", client_id: "string", enabled: "boolean", config: "json", secret_changed: "boolean" },
    line: (e, who) => `${who} added social provider ${e.subject}`,
  }),
  "console.social_provider.updated": change({
    summary: "An operator changed a social sign-in provider",
    subject: "the provider's key",
    data: { provider_id: "string", name: "string", client_id: "string", enabled: "boolean", config: "json", secret_changed: "boolean" },
    line: (e, who) => `${who} updated social provider ${e.subject}`,
  }),
  "console.social_provider.moved": change({
    summary: "An operator moved a social provider's button up or down",
    subject: "the provider's key",
    data: { provider_id: "string", direction: "string", order: "string[]" },
    line: (e, who) => `${who} moved social provider ${e.subject} ${str(e.data.direction) ?? ""}`.trimEnd(),
  }),
  "console.social_provider.removed": change({
    summary: "An operator removed a social sign-in provider",
    subject: "the provider's key",
    data: { provider_id: "string", preset: "string" },
    line: (e, who) => `${who} removed social provider ${e.subject}`,
  }),
  "console.signing_key.published": change({
    summary: "An operator published a new signing key (not yet used to sign)",
    subject: "the key's kid",
    data: { kid: "string", activatable_at: "string" },
    line: (e, who) => `${who} published signing key ${e.subject}`,
  }),
  "console.signing_key.activated": change({
    summary: "An operator made a published key the signing key",
    subject: "the key's kid",
    data: { kid: "string", retired: "string|null", unpublish_at: "string|null" },
    line: (e, who) => `${who} activated signing key ${e.subject}`,
  }),
  "console.operator.added": change({
    summary: "An operator added another operator (before invitations)",
    subject: "the operator's email",
    legacy: true,
    data: { role: "string" },
    line: (e, who) => `${who} added operator ${e.subject} as ${str(e.data.role)}`,
  }),
  "console.operator.role_changed": change({
    summary: "An owner changed an operator's role",
    subject: "the operator's email",
    data: { operator_user_id: "string", from: "string", to: "string" },
    line: (e, who) => `${who} changed operator ${e.subject} from ${str(e.data.from)} to ${str(e.data.to)}`,
  }),
  "console.operator.removed": change({
    summary: "An owner removed an operator from the workspace",
    subject: "the operator's email",
    data: { operator_user_id: "string", role: "string" },
    line: (e, who) => `${who} removed operator ${e.subject}`,
  }),
  "console.operator.status_changed": change({
    summary: "An operator's account was enabled or disabled",
    subject: "the operator's email",
    data: { operator_user_id: "string", status: "string" },
    line: (e, who) => `${who} ${e.data.status === "disabled" ? "disabled" : "enabled"} operator ${e.subject}`,
  }),
  "console.operator.password_set": change({
    summary: "An operator set another operator's password (before invitations)",
    subject: "the operator's email",
    legacy: true,
    line: (e, who) => `${who} set the password of operator ${e.subject}`,
  }),
  "console.operator.invited": change({
    summary: "An owner invited someone to operate the workspace",
    subject: "the invited email",
    data: { invitation_id: "string", role: "string", expires_at: "string", replaced: "string[]" },
    line: (e, who) => `${who} invited ${e.subject} as ${str(e.data.role)}`,
  }),
  "console.operator.invitation_revoked": change({
    summary: "An owner withdrew an invitation",
    subject: "the invited email",
    data: { invitation_id: "string", role: "string" },
    line: (e, who) => `${who} withdrew the invitation of ${e.subject}`,
  }),
  "console.operator.invitation_accepted": event({
    group: "console",
    summary: "Someone accepted an invitation and became an operator",
    subject: "the invited email",
    data: { operator: "string", invitation_id: "string", role: "string", account: "string" },
    line: (e) => `${e.subject} accepted the invitation as ${str(e.data.role)}${e.data.account === "created" ? " (new operator account)" : ""}`,
  }),
  "console.setup.completed": event({
    group: "console",
    summary: "The first operator completed the console's setup (system workspace)",
    data: { operator_email: "string", workspaces: "string[]" },
    line: (_e, who) => `${who} completed the console setup`,
  }),
  "console.signed_in": event({
    group: "console_access",
    summary: "An operator signed in to the console (system workspace)",
    client: "the console's client_id",
    data: { console_session: "string", email: "json" },
    line: (_e, who) => `${who} signed in to the console`,
  }),
  "console.signed_out": event({
    group: "console_access",
    summary: "An operator signed out of the console (system workspace)",
    data: { console_session: "string" },
    line: (_e, who) => `${who} signed out of the console`,
  }),
  "console.session_ended": event({
    group: "console_access",
    summary: "An operator ended one of their own console sessions (system workspace)",
    data: { console_session: "string" },
    line: (_e, who) => `${who} ended a console session`,
  }),
  "console.password_set": event({
    group: "console_access",
    summary: "An operator set or changed their own password; their other sessions ended (system workspace)",
    subject: "the operator's email",
    data: { changed: "boolean" },
    line: (e, who) => `${who} ${e.data.changed ? "changed" : "set"} their operator password`,
  }),
  "console.password_discarded": event({
    group: "console_access",
    summary: "An operator proved their mailbox: the password set before that proof was discarded and every other session ended (system workspace)",
    subject: "the operator's email",
    data: {},
    line: (_e, who) => `${who} proved the mailbox; the password set before was discarded`,
  }),

  // Protocol and sign-in.
  "refresh.reuse_detected": event({
    group: "tokens",
    summary: "A replaced refresh token was presented again: the grant is revoked",
    subject: AT_APP,
    client: CLIENT,
    reason: "`refresh_token_reuse`",
    warning: "possible_token_theft",
    data: { grant_id: "string" },
    line: (e, _who, user) => `Refresh token reuse detected for ${user}${e.clientId ? ` at ${e.clientId}` : ""} — grant revoked${flagText(e.flagged)}`,
  }),
  "grant.revoked": event({
    group: "tokens",
    summary: "A grant was revoked: by the application's revocation request, or after an authorization code was used twice",
    subject: AT_APP,
    client: CLIENT,
    reason: "`revocation_endpoint`, `authorization_code_replay`",
    warning: "possible_code_theft",
    data: { grant_id: "string", token_type: "string?" },
    line: (e, _who, user) =>
      e.reason === "authorization_code_replay"
        ? `Authorization code used twice — grant revoked${flagText(e.flagged)}`
        : `${app(e)} revoked ${user}'s grant${reasonText(e)}`,
  }),
  "device_authorization.approved": event({
    group: "tokens",
    summary: "A user approved a device's sign-in to an application on the hosted device page (RFC 8628)",
    subject: USER_ID,
    client: CLIENT,
    data: { device_authorization: "string", scope: "string[]" },
    line: (e, _who, user) => `${user} approved a device's sign-in${e.clientId ? ` to ${e.clientId}` : ""}`,
  }),
  "device_authorization.denied": event({
    group: "tokens",
    summary: "A user denied a device's sign-in to an application on the hosted device page (RFC 8628)",
    subject: USER_ID,
    client: CLIENT,
    data: { device_authorization: "string", scope: "string[]" },
    line: (e, _who, user) => `${user} denied a device's sign-in${e.clientId ? ` to ${e.clientId}` : ""}`,
  }),
  "token.revoked": event({
    group: "tokens",
    summary: "An application revoked a machine-to-machine access token",
    subject: "the token's subject",
    client: CLIENT,
    reason: "`revocation_endpoint`",
    data: { token_type: "string", principal_type: "string" },
    line: (e) => `${app(e)} revoked an access token${e.subject ? ` of ${e.subject}` : ""}`,
  }),
  "session.logout": event({
    group: "sign_in",
    summary: "A user signed out through an application (RP-initiated logout)",
    subject: AT_APP,
    client: CLIENT,
    reason: "`hosted_logout`",
    data: { session_id: "string", grant_id: "string" },
    line: (e, _who, user) => `${user} signed out${e.clientId ? ` from ${e.clientId}` : ""}`,
  }),
  "sign_in.succeeded": event({
    group: "sign_in",
    summary: "A user signed in on the hosted pages: a new hosted session, or a step-up of a live one",
    subject: USER_ID,
    // new_browser: the account had signed in before, never from this browser (lib/security-alerts/browsers.ts); browser: its short description.
    data: { amr: "string[]", client: "string", step_up: "boolean", tried: "boolean", new_browser: "boolean?", browser: "string?" },
    line: (e, _who, user) => `${user} signed in${e.data.new_browser === true ? " from a new browser" : ""}${e.data.step_up === true ? " again (step-up)" : ""}${e.data.tried === true ? ", trying the sign-in from the console" : ""}`,
  }),
  "sign_in.failed": event({
    group: "sign_in",
    summary: "A sign-in failed (never the password, nor the address as typed)",
    subject: `${USER_ID}, when the account exists`,
    reason: "`wrong_password`, `unknown_account`, `no_password`, `account_disabled`, `wrong_code`, `assertion_failed`, `credential_refused`",
    data: { method: "string", client: "string?" },
    line: (e, _who, user) => {
      const factor = typeof e.data.method === "string" && e.data.method !== "password" ? ` (${FACTOR_NAMES[e.data.method] ?? words(e.data.method)})` : "";
      return `Failed sign-in${e.subject ? ` for ${user}` : " for an unknown account"}: ${words(e.reason ?? "refused")}${factor}`;
    },
  }),
  "password_reset.requested": event({
    group: "sign_in",
    summary: "Someone asked to reset a password on the hosted sign-in page (never the address as typed)",
    subject: `${USER_ID}, when the address is an account's`,
    reason: "`code_sent`, `no_password` (told how the account signs in instead), `account_disabled` (nothing sent), `unknown_account` (nothing sent)",
    data: { client: "string" },
    line: (e, _who, user) => `Password reset asked${e.subject ? ` for ${user}` : " for an unknown address"}: ${words(e.reason ?? "")}`,
  }),
  "password_reset.refused": event({
    group: "sign_in",
    summary: "A password reset was refused: a wrong or dead code, or a new password the workspace's screening refuses",
    subject: `${USER_ID}, when the account is known`,
    reason: "`wrong_code`, `code_expired`, `password_refused`",
    data: { client: "string" },
    line: (e, _who, user) => `Password reset refused${e.subject ? ` for ${user}` : ""}: ${words(e.reason ?? "refused")}`,
  }),
  "password.changed": event({
    group: "sign_in",
    summary: "A user chose a new password: after proving the account's mailbox to reset a forgotten one (`reset`), or at sign-in in place of one known from a breach (`breached`)",
    subject: USER_ID,
    data: { via: "string", sessions_ended: "number", grants_ended: "number" },
    line: (e, _who, user) => `${user} chose a new password${e.data.via === "breached" ? " in place of a breached one" : " after a reset"}${endedCounts(e)}`,
  }),
  "user.created": event({
    group: "sign_in",
    summary: "A user's account was made: on their first sign-in through a social provider or enterprise connection, on accepting an organization invitation, or by an organization's directory (SCIM)",
    subject: USER_ID,
    data: { email: "string", via: "string", source: "string|null" },
    line: (e, _who, user) => `${user} signed up${str(e.data.via) ? ` through ${words(str(e.data.via)!)}` : ""}`,
  }),
  "user.password_discarded": event({
    group: "sign_in",
    summary: "A user proved their mailbox: the password set before that proof was discarded and every other session ended",
    subject: USER_ID,
    data: {},
    line: (_e, _who, user) => `${user} proved the mailbox; the password set before was discarded`,
  }),
  "federation.identity_linked": event({
    group: "sign_in",
    summary: "A user linked an upstream sign-in to their account, after proving the account",
    subject: USER_ID,
    data: { issuer: "string", subject: "string", source: "string|null", proved_by: "string" },
    line: (e, _who, user) => `${user} linked a sign-in from ${str(e.data.issuer) ?? "an upstream provider"}`,
  }),
  "recovery_code.used": event({
    group: "sign_in",
    summary: "A user signed in with a recovery code",
    subject: USER_ID,
    data: { remaining: "number" },
    line: (e, _who, user) => `${user} used a recovery code (${str(e.data.remaining) ?? "?"} left)`,
  }),
  "recovery_codes.generated": event({
    group: "sign_in",
    summary: "A user generated a new set of recovery codes; now recorded as `account_security.recovery_codes_generated`",
    legacy: true,
    subject: USER_ID,
    line: (_e, _who, user) => `${user} generated new recovery codes`,
  }),

  // Client secrets, written by lib/clients (from the console they fold into the operation's event).
  "client.secret.created": event({
    group: "client_secrets",
    summary: "A client secret was added to an application",
    client: CLIENT,
    data: { secret_id: "string", expires_at: "string" },
    line: (e, who) => `${who} created a client secret for ${e.clientId}`,
  }),
  "client.secret.rotated": event({
    group: "client_secrets",
    summary: "An application's client secret was rotated",
    client: CLIENT,
    data: { secret_id: "string", overlap_hours: "number", previous: "string[]" },
    line: (e, who) => `${who} rotated the client secret of ${e.clientId}`,
  }),
  "client.secret.revoked": event({
    group: "client_secrets",
    summary: "A client secret was revoked",
    client: CLIENT,
    data: { secret_id: "string" },
    line: (e, who) => `${who} revoked a client secret of ${e.clientId}`,
  }),

  // The command line and workspace files.
  "operator.granted": event({
    group: "command_line",
    summary: "The command line gave someone an operator role",
    subject: "the operator's email",
    data: { via: "string", role: "string", previous_role: "string|null" },
    line: (e) => `Command line gave operator ${e.subject} role ${str(e.data.role)}`,
  }),
  "operator.invited": event({
    group: "command_line",
    summary: "The command line invited an address that no proven operator account has (instead of giving it a role)",
    subject: "the invited email",
    data: { via: "string", role: "string", invitation_id: "string" },
    line: (e) => `Command line invited ${e.subject} as ${str(e.data.role)}`,
  }),
  "workspace.imported": event({
    group: "command_line",
    summary: "A workspace file was imported (when it changed anything)",
    data: { created: "boolean", changes: "number", members_removed: "json?", members_kept: "number?", prune_members: "boolean?" },
    line: () => `Workspace imported from a workspace file`,
  }),
  "workspace.domain_verified": event({
    group: "command_line",
    summary: "A workspace file marked an organization's domain verified",
    subject: "the organization's slug",
    data: { domain: "string", domain_id: "string", method: "string", source: "string" },
    line: (e) => `Domain ${str(e.data.domain)} of ${e.subject} verified by workspace import`,
  }),
  "workspace.hostname_verified": event({
    group: "command_line",
    summary: "A workspace file imported by the installation's operator marked a hostname verified",
    subject: "the hostname",
    data: { hostname: "string", hostname_id: "string", method: "string", source: "string" },
    line: (e) => `Hostname ${str(e.data.hostname)} verified by workspace import (the operator's word)`,
  }),
  "workspace.connection_admission_set": event({
    group: "command_line",
    summary: "A workspace file set whom an enterprise connection admits",
    subject: "the organization's slug",
    data: { connection_id: "string", name: "string", admission: "string", previous: "string|null", source: "string" },
    line: (e) => `Connection ${str(e.data.name) ?? ""} of ${e.subject} set by workspace import to admit ${admissionText(e.data.admission)}`,
  }),
  "workspace.connection_legacy_signatures_set": event({
    group: "command_line",
    summary: "A workspace file let a SAML connection accept SHA-1 signatures, or stopped it",
    subject: "the organization's slug",
    data: { connection_id: "string", name: "string", legacy_signatures: "boolean", source: "string" },
    line: (e) => `SAML connection ${str(e.data.name) ?? ""} of ${e.subject} set by workspace import to ${e.data.legacy_signatures === true ? "accept" : "refuse"} SHA-1 signatures`,
  }),
  "organization.connection_secret_set": event({
    group: "command_line",
    summary: "The command line set an enterprise connection's client secret",
    subject: "the organization's slug",
    data: { connection_id: "string", name: "string", source: "string" },
    line: (e) => `Command line set the connection secret of ${e.subject}`,
  }),
  "social_provider.secret_set": event({
    group: "command_line",
    summary: "The command line set a social provider's client secret",
    subject: "the provider's key",
    data: { provider_id: "string", source: "string" },
    line: (e) => `Command line set the secret of social provider ${e.subject}`,
  }),

  // Roles, permissions and memberships, written by lib/authz (from the console they fold into the operation's event).
  "authz.organization.member_added": event({
    group: "authorization",
    summary: "A user joined an organization: added, or admitted by an enterprise connection with its default roles",
    subject: `${USER_ID}, when admitted by a connection`,
    data: { organization: "string?", organization_id: "string?", user_id: "string", via: "string?", connection_id: "string?", roles: "string[]?" },
    line: (e, _who, user) => `${user} joined organization ${str(e.data.organization) ?? str(e.data.organization_id) ?? ""}${str(e.data.via) ? ` through ${words(str(e.data.via)!)}` : ""}`,
  }),
  "organization.connection_tested": event({
    group: "authorization",
    summary: "An administrator tested an enterprise connection through its identity provider: nobody was signed in (the upstream subject it returned, whether a sign-in would be admitted; never the other attributes)",
    subject: "the connection's id",
    data: { organization_id: "string", connection_id: "string", outcome: "string", by: "string", tester: "string", upstream_subject: "string?", admitted: "boolean?" },
    line: (e, who) =>
      `${str(e.data.by) ?? who} tested enterprise connection ${e.subject}: ${e.data.outcome === "succeeded" ? (e.data.admitted === true ? "succeeded, a sign-in would be admitted" : "succeeded, a sign-in would be refused") : "failed"}`,
  }),
  "organization.invitation_sent": event({
    group: "authorization",
    summary: "An organization invitation was sent to an address, by an operator or an administrator of the organization (again: a new link, the old one dead)",
    subject: "the invited address",
    data: { organization_id: "string", invitation_id: "string", by: "string", roles: "string[]", administrator: "boolean", expires_at: "string", replaced: "boolean" },
    line: (e, who) => `${who} invited ${e.subject} to organization ${str(e.data.organization_id) ?? ""}${e.data.administrator === true ? " as an administrator" : ""}`,
  }),
  "organization.invitation_resent": event({
    group: "authorization",
    summary: "An organization invitation was sent again: a new link, the old one dead",
    subject: "the invited address",
    data: { organization_id: "string", invitation_id: "string", by: "string", expires_at: "string" },
    line: (e, who) => `${who} sent the invitation of ${e.subject} to organization ${str(e.data.organization_id) ?? ""} again`,
  }),
  "organization.invitation_withdrawn": event({
    group: "authorization",
    summary: "A pending organization invitation was withdrawn: its link no longer works",
    subject: "the invited address",
    data: { organization_id: "string", invitation_id: "string", by: "string" },
    line: (e, who) => `${who} withdrew the invitation of ${e.subject} to organization ${str(e.data.organization_id) ?? ""}`,
  }),
  "organization.invitation_accepted": event({
    group: "authorization",
    summary: "The invited address accepted an organization invitation (its link proved the mailbox) and the account joined the organization",
    subject: USER_ID,
    data: { organization_id: "string", invitation_id: "string", account: "string", roles: "string[]", administrator: "boolean", password_discarded: "boolean" },
    line: (e, _who, user) => `${user} accepted the invitation to organization ${str(e.data.organization_id) ?? ""}${e.data.account === "created" ? " (new account)" : ""}`,
  }),
  "authz.organization.member_removed": event({
    group: "authorization",
    summary: "A user was removed from an organization",
    data: { organization: "string", user_id: "string" },
    line: (e, who, user) => `${who} removed ${user} from organization ${str(e.data.organization) ?? ""}`,
  }),
  "authz.user_role.assigned": event({
    group: "authorization",
    summary: "A user was given a role",
    data: { user_id: "string", role: "string", organization: "string|null?" },
    line: (e, who, user) => `${who} gave ${user} role ${str(e.data.role)}`,
  }),
  "authz.user_role.removed": event({
    group: "authorization",
    summary: "A role was removed from a user",
    data: { user_id: "string", role: "string", organization: "string|null?" },
    line: (e, who, user) => `${who} removed role ${str(e.data.role)} from ${user}`,
  }),
  "authz.role.permissions_set": event({
    group: "authorization",
    summary: "A role's permissions on an API were set",
    data: { role: "string", audience: "string", permissions: "string[]" },
    line: (e, who) => `${who} set role ${str(e.data.role)}'s permissions`,
  }),
  "authz.api.permissions_set": event({
    group: "authorization",
    summary: "The permissions an API defines were set",
    data: { audience: "string", permissions: "string[]" },
    line: (e, who) => `${who} set the permissions of API ${str(e.data.audience)}`,
  }),
  "authz.api_grant.set": event({
    group: "authorization",
    summary: "An application was let call an API with some permissions",
    data: { client_id: "string", audience: "string", permissions: "string[]" },
    line: (e, who) => `${who} let ${str(e.data.client_id)} call API ${str(e.data.audience)}`,
  }),
  "authz.api_grant.removed": event({
    group: "authorization",
    summary: "An application's access to an API was removed",
    data: { client_id: "string", audience: "string" },
    line: (e, who) => `${who} removed ${str(e.data.client_id)}'s access to API ${str(e.data.audience)}`,
  }),

  // The account-security portal and its handoff from applications: the user is `actor` and `subject` in the portal.
  "account_security.portal_opened": event({
    group: "account_security",
    summary: "A user opened the account-security portal (through a handoff or a direct link)",
    subject: USER_ID,
    data: { ...PORTAL, client: "string", grant: "string|null", via: "string" },
    line: (_e, _who, user) => `${user} opened the account-security portal`,
  }),
  "account_security.portal_closed": event({
    group: "account_security",
    summary: "A user closed the account-security portal",
    subject: USER_ID,
    data: { ...PORTAL, client: "string" },
    line: (_e, _who, user) => `${user} closed the account-security portal`,
  }),
  "account_security.verified": event({
    group: "account_security",
    summary: "A user confirmed it was them in the portal (step-up)",
    subject: USER_ID,
    data: { ...PORTAL, client: "string", method: "string" },
    line: (e, _who, user) => `${user} confirmed it was them in the portal${str(e.data.method) ? ` (${str(e.data.method)})` : ""}`,
  }),
  "account_security.verification_failed": event({
    group: "account_security",
    summary: "A user failed to confirm it was them in the portal",
    subject: USER_ID,
    data: { ...PORTAL, client: "string" },
    line: (_e, _who, user) => `${user} failed to confirm it was them in the portal`,
  }),
  "account_security.credential_added": event({
    group: "account_security",
    summary: "A user added a factor (passkey, security key, authenticator app), in the portal or while signing in",
    subject: USER_ID,
    // Where it was added: the portal session, or the sign-in's transaction id.
    data: { portal_session: "string?", sign_in: "string?", kind: "string", factor_id: "string" },
    line: (e, _who, user) => `${user} added a ${str(e.data.kind)?.replace(/_/g, " ") ?? "factor"} ${e.data.sign_in ? "while signing in" : "in the portal"}`,
  }),
  "account_security.credential_removed": event({
    group: "account_security",
    summary: "A user removed a factor in the portal",
    subject: USER_ID,
    data: { ...PORTAL, kind: "string", factor_id: "string", name: "string|null" },
    line: (e, _who, user) => `${user} removed ${str(e.data.name) ? `"${str(e.data.name)}"` : "a factor"} in the portal`,
  }),
  "account_security.credential_renamed": event({
    group: "account_security",
    summary: "A user renamed a factor in the portal",
    subject: USER_ID,
    data: { ...PORTAL, kind: "string", factor_id: "string", name: "string" },
    line: (e, _who, user) => `${user} renamed a factor to "${str(e.data.name) ?? ""}" in the portal`,
  }),
  "account_security.recovery_codes_generated": event({
    group: "account_security",
    summary: "A user got a new set of recovery codes: in the portal, or while signing in with their first second factor",
    subject: USER_ID,
    // Where: the portal session, or the sign-in's transaction id (as for credential_added).
    data: { portal_session: "string?", sign_in: "string?", count: "number" },
    line: (e, _who, user) => `${user} generated new recovery codes ${e.data.sign_in ? "while signing in" : "in the portal"}`,
  }),
  "account_security.application_signed_out": event({
    group: "account_security",
    summary: "A user signed out of an application from the portal: its grant is revoked",
    subject: USER_ID,
    client: CLIENT,
    reason: "`account_security_portal`",
    data: { ...PORTAL, grant_id: "string" },
    line: (e, _who, user) => `${user} signed out of ${e.clientId ?? "an application"} from the portal — grant revoked`,
  }),
  "account_security.handoff_launched": event({
    group: "account_security",
    summary: "An application sent a user to the portal (handoff launch)",
    subject: USER_ID,
    client: CLIENT,
    data: { launch: "string", session: "string", grant: "string", intent: "string" },
    line: (e, _who, user) => `${app(e)} sent ${user} to the account-security portal`,
  }),
  "account_security.handoff_configured": event({
    group: "account_security",
    summary: "An application configured its handoff's callback and return addresses",
    client: CLIENT,
    data: { previous_version: "number", version: "number", callback_uri: "string", return_uri: "string" },
    line: (e) => `${app(e)} configured its account-security handoff`,
  }),
  "account_security.handoff_configuration_refused": event({
    group: "account_security",
    summary: "An application's handoff configuration was refused",
    client: CLIENT,
    reason: "`stale_version`",
    data: { version: "number", current: "number|null" },
    line: (e) => `${app(e)}'s handoff configuration was refused${reasonText(e)}`,
  }),
  "account_security.handoff_approved": event({
    group: "account_security",
    summary: "An application approved a user's handoff",
    subject: USER_ID,
    client: CLIENT,
    data: { launch: "string" },
    line: (e, _who, user) => `${app(e)} approved ${user}'s handoff`,
  }),
  "account_security.handoff_approval_refused": event({
    group: "account_security",
    summary: "An application's handoff approval was refused",
    subject: USER_ID,
    client: CLIENT,
    reason: "`no_matching_launch`",
    line: (e) => `${app(e)}'s handoff approval was refused${reasonText(e)}`,
  }),
  "account_security.handoff_refused": event({
    group: "account_security",
    summary: "A handoff was refused in the browser (no session, another session, another user)",
    subject: USER_ID,
    client: CLIENT,
    reason: "`no_session`, `other_session`, `other_user`",
    data: { launch: "string" },
    line: (e, _who, user) => `Handoff for ${user} refused${reasonText(e)}`,
  }),
  "account_security.handoff_challenged": event({
    group: "account_security",
    summary: "A handoff asked the browser to confirm",
    subject: USER_ID,
    client: CLIENT,
    data: { launch: "string" },
    line: (_e, _who, user) => `Handoff for ${user} asked the browser to confirm`,
  }),
  "account_security.handoff_opened_directly": event({
    group: "account_security",
    summary: "A user opened a handoff link directly",
    subject: USER_ID,
    client: CLIENT,
    data: { launch: "string" },
    line: (_e, _who, user) => `${user} opened a handoff link directly`,
  }),
  "account_security.handoff_redeemed": event({
    group: "account_security",
    summary: "A user arrived in the portal through a handoff",
    subject: USER_ID,
    client: CLIENT,
    data: { launch: "string" },
    line: (_e, _who, user) => `${user} arrived in the portal through a handoff`,
  }),
  // Directory provisioning (lib/organizations/scim): what an organization's directory changed, one event per SCIM request that changed something.
  "scim.user.provisioned": event({
    group: "provisioning",
    summary: "An organization's directory provisioned a user: an account it created (managed) or the account its connection already knew",
    subject: USER_ID,
    data: { organization: "string", scim_id: "string", user_name: "string", managed: "boolean", active: "boolean" },
    line: (e, _who, user) => `Directory of ${str(e.data.organization) ?? ""} provisioned ${user}${e.data.managed ? "" : " (an existing account)"}${e.data.active === false ? ", inactive" : ""}`,
  }),
  "scim.user.updated": event({
    group: "provisioning",
    summary: "An organization's directory changed a provisioned user's attributes (the attributes named)",
    subject: USER_ID,
    data: { organization: "string", scim_id: "string", changed: "string[]" },
    line: (e, _who, user) => `Directory of ${str(e.data.organization) ?? ""} updated ${user}: ${list(e.data.changed)}`,
  }),
  "scim.user.deactivated": event({
    group: "provisioning",
    summary: "An organization's directory deactivated a user: their membership, the roles it gave and their sessions and grants through the organization ended (an account the directory created is disabled)",
    subject: USER_ID,
    data: { organization: "string", scim_id: "string", managed: "boolean", ...FOOTPRINT },
    line: (e, _who, user) => `Directory of ${str(e.data.organization) ?? ""} deactivated ${user}${endedCounts(e)}`,
  }),
  "scim.user.reactivated": event({
    group: "provisioning",
    summary: "An organization's directory reactivated a user: a member again, with the roles their groups give",
    subject: USER_ID,
    data: { organization: "string", scim_id: "string" },
    line: (e, _who, user) => `Directory of ${str(e.data.organization) ?? ""} reactivated ${user}`,
  }),
  "scim.user.deleted": event({
    group: "provisioning",
    summary: "An organization's directory deleted a user: deprovisioned, and an account it created deleted with it",
    subject: USER_ID,
    data: { organization: "string", scim_id: "string", account_deleted: "boolean", ...FOOTPRINT },
    line: (e, _who, user) => `Directory of ${str(e.data.organization) ?? ""} deleted ${user}${e.data.account_deleted ? " and the account" : ""}${endedCounts(e)}`,
  }),
  "scim.group.changed": event({
    group: "provisioning",
    summary: "An organization's directory created, changed or deleted a group (members added and removed, by their SCIM ids)",
    subject: "the group's display name",
    data: { organization: "string", group_id: "string", change: "string", members_added: "string[]", members_removed: "string[]" },
    line: (e) => `Directory of ${str(e.data.organization) ?? ""} ${str(e.data.change) ?? "changed"} group ${e.subject ?? ""}${Array.isArray(e.data.members_added) && e.data.members_added.length ? `, ${e.data.members_added.length} added` : ""}${Array.isArray(e.data.members_removed) && e.data.members_removed.length ? `, ${e.data.members_removed.length} removed` : ""}`,
  }),
} as const satisfies Record<string, AuditEventSpec>;

/**
 * The console's organization operations an organization's admin portal runs too
 * (lib/organizations/admin-portal/operations.ts), each recorded there as
 * `organization_portal.<name>` under the person who made the change (`data.operator` their
 * address, `data.role` how they entered), with the console event's data and sentence.
 */
export const PORTAL_CHANGES = [
  "connection_saved",
  "connection_test_started",
  "domain_claimed",
  "domain_verified",
  "domain_removed",
  "directory_saved",
  "directory_token_issued",
  "directory_token_revoked",
  "member_invited",
  "invitation_resent",
  "invitation_withdrawn",
] as const;
export type PortalChange = (typeof PORTAL_CHANGES)[number];

type PortalEvents = {
  [K in PortalChange as `organization_portal.${K}`]: Omit<(typeof CATALOGUE)[`console.organization.${K}`], "group"> & { group: "organization_portal" };
};

const PORTAL_EVENTS = Object.fromEntries(
  PORTAL_CHANGES.map((name) => {
    const spec: AuditEventSpec = CATALOGUE[`console.organization.${name}`];
    return [`organization_portal.${name}`, { ...spec, group: "organization_portal", summary: `Through an organization's admin portal (by a setup link's holder or an organization administrator): ${spec.summary.replace(/^An operator /, "someone ").replace(/^A /, "a ")}` }];
  }),
) as PortalEvents;

export const AUDIT_EVENTS = {
  ...CATALOGUE,
  ...PORTAL_EVENTS,
  "organization_portal.started": event({
    group: "organization_portal",
    summary: "A setup link's holder proved its address and opened an organization's admin portal (the link is used)",
    subject: "the proven address",
    data: { operator: "string", organization_id: "string", link_id: "string", session_id: "string" },
    line: (e) => `${e.subject ?? "Someone"} opened the admin portal of organization ${str(e.data.organization_id) ?? ""} with a setup link`,
  }),
} as const satisfies Record<string, AuditEventSpec>;

export type AuditEventType = keyof typeof AUDIT_EVENTS;
/** A console operation's name: its event is `console.<name>`. */
export type ConsoleOperationName = AuditEventType extends infer T ? (T extends `console.${infer N}` ? N : never) : never;

/** Every event type, in the catalogue's order. */
export const AUDIT_EVENT_TYPES = Object.keys(AUDIT_EVENTS) as AuditEventType[];

/** The catalogue's entry for a stored type; undefined for a type it does not know. */
export function auditEventSpec(type: string): AuditEventSpec | undefined {
  return Object.hasOwn(AUDIT_EVENTS, type) ? (AUDIT_EVENTS as Record<string, AuditEventSpec>)[type] : undefined;
}

/** The event types of a group, for the console's filter. */
export function auditGroupTypes(group: AuditGroup): AuditEventType[] {
  return AUDIT_EVENT_TYPES.filter((t) => AUDIT_EVENTS[t].group === group);
}

export function isAuditGroup(value: string): value is AuditGroup {
  return Object.hasOwn(AUDIT_GROUPS, value);
}

type FieldValue<K> = K extends "string"
  ? string
  : K extends "number"
    ? number
    : K extends "boolean"
      ? boolean
      : K extends "string[]"
        ? readonly string[]
        : K extends "string|null"
          ? string | null
          : K extends "number|null"
            ? number | null
            : unknown;

type DataOf<D> = [keyof D] extends [never]
  ? Record<string, never>
  : { [K in keyof D as D[K] extends `${string}?` ? never : K]: FieldValue<D[K]> } & { [K in keyof D as D[K] extends `${string}?` ? K : never]?: D[K] extends `${infer B}?` ? FieldValue<B> : never };

type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never;

/**
 * The `data` an event of type `T` carries: its declared keys, checked where the writer names one
 * type; a writer that passes one of several types (a shared helper) is checked at runtime by the
 * tests instead.
 */
export type AuditData<T extends AuditEventType> = true extends IsUnion<T> ? Record<string, unknown> : DataOf<(typeof AUDIT_EVENTS)[T]["data"]>;
