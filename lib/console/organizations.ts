/**
 * Organizations: members, enterprise connections and the email domains that send addresses to
 * them. Membership changes reuse lib/authz/model.ts; domains lib/federation/domains.ts; each
 * connection protocol's part of a connection, lib/federation/protocols. A connection's secret is
 * stored AES-256-GCM under the master key and never shown again.
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { enterpriseConnections, organizations, roles, users } from "../../db/schema";
import { addOrganizationMember, removeOrganizationMember } from "../authz/model";
import { newId } from "../crypto";
import {
  applyDnsVerification,
  claimDomain,
  getDomain,
  lookupVerificationRecords,
  markDomainVerified,
  removeDomain as removeDomainRow,
  systemResolveTxt,
  type TxtResolver,
} from "../federation/domains";
import { CONNECTION_ADMISSIONS, type ConnectionAdmission } from "../federation/providers";
import { admissionRefusal, CONNECTION_KINDS, CONNECTION_PROTOCOLS, type ConnectionKind, type ConsoleFieldTypes, type PreviousConnection } from "../federation/protocols";
import { issuerFor } from "../http/context";
import type { Service } from "../service";
import { upstreamUrlProblem } from "../workspaces/document/social-providers";
import { checkbox, checked, email, id, optionalText, text } from "./forms";
import { assertRole, requireWorkspaceRole } from "./authz";
import { ConsoleInputError, defineOperation, fieldError, formError } from "./operation";
import { normalizeEmail } from "../authn/email-address";

export async function getOrganization(service: Service, workspaceId: string, organizationId: string) {
  const [row] = await service.db
    .select()
    .from(organizations)
    .where(and(eq(organizations.workspaceId, workspaceId), eq(organizations.id, organizationId)))
    .limit(1);
  return row ?? null;
}

export interface ConnectionInfo {
  id: string;
  name: string;
  kind: ConnectionKind;
  active: boolean;
  config: Record<string, unknown>;
  hasSecret: boolean;
  defaultRoleIds: string[];
  trustUpstreamMfa: boolean;
  admission: ConnectionAdmission;
  updatedAt: Date;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  /** The condition the last failed sign-in failed on (for administrators only). */
  lastFailure: string | null;
}

/** The workspace's issuer, under which each connection protocol's addresses are (the console shows them). */
export function connectionIssuer(service: Service, workspaceId: string): string {
  return issuerFor(service.config.publicUrl, workspaceId);
}

/** The redirect URI to register at the upstream identity provider: the workspace's federation callback. */
export function federationCallbackUri(service: Service, workspaceId: string): string {
  return `${issuerFor(service.config.publicUrl, workspaceId)}/federation/callback`;
}

export async function listConnections(service: Service, workspaceId: string, organizationId: string): Promise<ConnectionInfo[]> {
  const rows = await service.db
    .select()
    .from(enterpriseConnections)
    .where(and(eq(enterpriseConnections.workspaceId, workspaceId), eq(enterpriseConnections.organizationId, organizationId)))
    .orderBy(asc(enterpriseConnections.name));
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    kind: r.kind,
    active: r.active,
    config: r.config,
    hasSecret: r.secretEncrypted !== null,
    defaultRoleIds: r.defaultRoleIds,
    trustUpstreamMfa: r.trustUpstreamMfa,
    admission: r.admission,
    updatedAt: r.updatedAt,
    lastSuccessAt: r.lastSuccessAt,
    lastFailureAt: r.lastFailureAt,
    lastFailure: r.lastFailure,
  }));
}

const slug = z
  .string({ error: "Enter a slug" })
  .trim()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "Use 1–63 characters of a–z, 0–9 and -, starting with a letter or digit");

export const createOrganization = defineOperation({
  name: "organization.created",
  role: "admin",
  input: z.object({ slug, name: text("a name") }),
  async run(ctx, input) {
    const inserted = await ctx.db
      .insert(organizations)
      .values({ id: newId(), workspaceId: ctx.access.workspace.id, slug: input.slug, name: input.name, active: true, createdAt: ctx.now, updatedAt: ctx.now })
      .onConflictDoNothing()
      .returning({ id: organizations.id });
    if (inserted.length === 0) throw fieldError("slug", "An organization with this slug already exists");
    return { result: { id: inserted[0].id }, audit: { target: input.slug, data: { name: input.name } } };
  },
});

export const updateOrganization = defineOperation({
  name: "organization.updated",
  role: "admin",
  input: z.object({ organization_id: id("organization"), name: text("a name"), active: checkbox() }),
  async run(ctx, input) {
    const updated = await ctx.db
      .update(organizations)
      .set({ name: input.name, active: input.active, updatedAt: ctx.now })
      .where(and(eq(organizations.workspaceId, ctx.access.workspace.id), eq(organizations.id, input.organization_id)))
      .returning({ slug: organizations.slug });
    if (updated.length === 0) throw formError("This organization no longer exists");
    return { result: null, audit: { target: updated[0].slug, data: { name: input.name, active: input.active } } };
  },
});

export const addMember = defineOperation({
  name: "organization.member_added",
  role: "admin",
  input: z.object({ organization: id("organization"), email: email() }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [user] = await ctx.db
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.workspaceId, wid), eq(users.emailNormalized, normalizeEmail(input.email)!)))
      .limit(1);
    if (!user) throw fieldError("email", "No user of this workspace has this email");
    const added = await addOrganizationMember(ctx.db, { workspaceId: wid, clock: ctx.service.clock, actor: ctx.access.operator.userId, organization: input.organization, userId: user.id });
    if (!added) throw fieldError("email", "This user is already a member");
    return { result: null, audit: { target: input.organization, data: { email: input.email, user_id: user.id } } };
  },
});

export const removeMember = defineOperation({
  name: "organization.member_removed",
  role: "admin",
  input: z.object({ organization: id("organization"), user_id: id("user") }),
  async run(ctx, input) {
    const removed = await removeOrganizationMember(ctx.db, {
      workspaceId: ctx.access.workspace.id,
      clock: ctx.service.clock,
      actor: ctx.access.operator.userId,
      organization: input.organization,
      userId: input.user_id,
    });
    if (!removed) throw formError("This user is not a member");
    return { result: null, audit: { target: input.organization, data: { user_id: input.user_id } } };
  },
});

/** An upstream issuer: https, or http on a loopback host (a local identity provider). */
const optionalIssuer = z.preprocess(
  (v) => (typeof v === "string" && v.trim() === "" ? undefined : typeof v === "string" ? v.trim() : v),
  z
    .string()
    .superRefine((v, ctx) => {
      const problem = upstreamUrlProblem(v);
      if (problem) ctx.addIssue({ code: "custom", message: `The issuer ${problem}` });
    })
    .optional(),
);

/** The console's form field types, given to each connection protocol for its part of the form. */
const FIELD_TYPES: ConsoleFieldTypes = { optionalText, checkbox, optionalUpstreamUrl: optionalIssuer };

/** Every protocol's form fields, keyed by field name (each protocol reads its own). */
const protocolFields = Object.assign({}, ...Object.values(CONNECTION_PROTOCOLS).map((p) => p.console.fields(FIELD_TYPES))) as z.ZodRawShape;

const connectionInput = z.object({
  organization_id: id("organization"),
  connection_id: optionalText(200),
  /**
   * A new connection's id, drawn when the form was shown: a protocol's addresses that name it
   * (SAML's entity ID and ACS URL) are shown before the first save, so the saved one must be it.
   */
  new_connection_id: z.uuid({ error: "Reload the page: the new connection's id is not valid" }).optional(),
  name: text("a name"),
  kind: z.enum(CONNECTION_KINDS, { error: `Choose ${Object.values(CONNECTION_PROTOCOLS).map((p) => p.kind.toUpperCase()).join(" or ")}` }),
  active: checkbox(),
  default_role_ids: checked(),
  trust_upstream_mfa: checkbox(),
  /** Who a first sign-in admits; absent means the default (verified domains only), never a wider rule. */
  admission: z.enum(CONNECTION_ADMISSIONS as [ConnectionAdmission, ...ConnectionAdmission[]], { error: "Choose who this connection admits" }).default("verified_domains"),
});
type ConnectionInput = z.output<typeof connectionInput> & Record<string, unknown>;
type SaveContext = Parameters<(typeof saveConnection)["run"]>[0];

/** The organization the connection is saved in, or the form's error. */
async function organizationOf(ctx: SaveContext, organizationId: string): Promise<{ id: string; slug: string }> {
  const [org] = await ctx.db
    .select({ id: organizations.id, slug: organizations.slug })
    .from(organizations)
    .where(and(eq(organizations.workspaceId, ctx.access.workspace.id), eq(organizations.id, organizationId)))
    .limit(1);
  if (!org) throw formError("This organization no longer exists");
  return org;
}

/** The form's problems, beside their fields: the protocol's own, its admission rule, the default roles. */
async function checkConnection(ctx: SaveContext, input: ConnectionInput): Promise<string[]> {
  const wid = ctx.access.workspace.id;
  const errors: Record<string, string> = {};
  const protocol = CONNECTION_PROTOCOLS[input.kind];
  const refused = admissionRefusal(input.kind, input.admission);
  if (refused) errors.admission = `${protocol.noun[0].toUpperCase()}${protocol.noun.slice(1)} admits verified domains only: ${refused}`;
  await protocol.console.check({ db: ctx.db, workspaceId: wid }, input, errors);
  const roleIds = [...new Set(input.default_role_ids)];
  if (roleIds.length > 0) {
    const found = await ctx.db
      .select({ id: roles.id })
      .from(roles)
      .where(and(eq(roles.workspaceId, wid), inArray(roles.id, roleIds)));
    if (found.length !== roleIds.length) errors.default_role_ids = "A chosen role no longer exists: reload the page";
  }
  if (Object.keys(errors).length) throw new ConsoleInputError(errors);
  return roleIds;
}

/** The connection as stored before this save (null for a new one). */
async function previousConnection(ctx: SaveContext, organizationId: string, connectionId: string | undefined): Promise<(PreviousConnection & { admission: ConnectionAdmission }) | null> {
  if (!connectionId) return null;
  const [row] = await ctx.db
    .select({ kind: enterpriseConnections.kind, admission: enterpriseConnections.admission, config: enterpriseConnections.config, secretEncrypted: enterpriseConnections.secretEncrypted })
    .from(enterpriseConnections)
    .where(and(eq(enterpriseConnections.workspaceId, ctx.access.workspace.id), eq(enterpriseConnections.organizationId, organizationId), eq(enterpriseConnections.id, connectionId)))
    .limit(1);
  if (!row) throw formError("This connection no longer exists");
  return row;
}

/** Writes the connection: an update of the previous row, or a new row. */
async function storeConnection(
  ctx: SaveContext,
  target: { organizationId: string; connectionId: string; isNew: boolean },
  settings: Omit<typeof enterpriseConnections.$inferInsert, "id" | "workspaceId" | "organizationId" | "createdAt" | "updatedAt" | "secretEncrypted">,
  secretEncrypted: string | null | undefined,
): Promise<void> {
  const wid = ctx.access.workspace.id;
  if (!target.isNew) {
    const updated = await ctx.db
      .update(enterpriseConnections)
      .set({ ...settings, ...(secretEncrypted !== undefined ? { secretEncrypted } : {}), updatedAt: ctx.now })
      .where(and(eq(enterpriseConnections.workspaceId, wid), eq(enterpriseConnections.organizationId, target.organizationId), eq(enterpriseConnections.id, target.connectionId)))
      .returning({ id: enterpriseConnections.id });
    if (updated.length === 0) throw formError("This connection no longer exists");
  } else {
    const inserted = await ctx.db
      .insert(enterpriseConnections)
      .values({
        id: target.connectionId,
        workspaceId: wid,
        organizationId: target.organizationId,
        ...settings,
        secretEncrypted: secretEncrypted ?? null,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
      .onConflictDoNothing({ target: enterpriseConnections.id })
      .returning({ id: enterpriseConnections.id });
    // The id came with the form: one in use (the form sent twice) is refused, never overwritten.
    if (inserted.length === 0) throw formError("This connection was added already: reload the page");
  }
}

/**
 * Creates or updates an enterprise connection of an organization. The protocol's part (its
 * fields, their checks, the settings and secret it stores, what the audit event records of them)
 * is its descriptor's (lib/federation/protocols), such as OIDC's issuer, client id and client
 * secret (set once, kept when left empty, never shown). Every protocol: the roles a new member
 * gets, whether the upstream's MFA counts, and who a first sign-in admits.
 */
export const saveConnection = defineOperation({
  name: "organization.connection_saved",
  role: "admin",
  input: connectionInput.extend(protocolFields),
  async run(ctx, form) {
    const input = form as ConnectionInput;
    const org = await organizationOf(ctx, input.organization_id);
    const roleIds = await checkConnection(ctx, input);
    const connectionId = input.connection_id ?? input.new_connection_id ?? newId();
    const previous = await previousConnection(ctx, org.id, input.connection_id);
    const protocol = CONNECTION_PROTOCOLS[input.kind];
    const saved = await protocol.console.settings({ service: ctx.service, now: ctx.now, connectionId }, input, previous);
    const settings = {
      name: input.name,
      kind: input.kind,
      active: input.active,
      config: saved.config,
      defaultRoleIds: roleIds,
      trustUpstreamMfa: input.trust_upstream_mfa,
      admission: input.admission,
    };
    await storeConnection(ctx, { organizationId: org.id, connectionId, isNew: !previous }, settings, saved.secretEncrypted);
    const previousAdmission = previous?.admission ?? null;
    return {
      result: { id: connectionId, organizationId: org.id, created: !previous },
      audit: {
        target: org.slug,
        data: {
          connection_id: connectionId,
          name: input.name,
          kind: input.kind,
          active: input.active,
          config: saved.auditConfig,
          default_role_ids: roleIds,
          trust_upstream_mfa: settings.trustUpstreamMfa,
          admission: settings.admission,
          // Who the connection admits is an explicit choice: its change (or a new connection's wider rule) stands out in the log.
          admission_changed: previous ? previousAdmission !== settings.admission : settings.admission !== "verified_domains",
          ...(previous && previousAdmission !== settings.admission ? { admission_previous: previousAdmission } : {}),
          secret_changed: saved.secretChanged,
          ...saved.auditData,
        },
      },
    };
  },
});

/**
 * Fills in a connection form's fields before it is saved, by its protocol's prefill (SAML: the
 * identity provider's metadata read). Changes nothing, so nothing is audited; administrators only,
 * as the save (a metadata URL is fetched through the service's outbound rules).
 */
export async function prefillConnection(
  service: Service,
  token: string | null | undefined,
  workspaceId: string,
  raw: Record<string, unknown>,
): Promise<PrefillOutcome> {
  const access = await requireWorkspaceRole(service, token, workspaceId, "viewer");
  assertRole(access, "admin");
  return readConnectionFields(service, raw);
}

export type PrefillOutcome = { ok: true; values: Record<string, string>; message: string } | { ok: false; fieldErrors: Record<string, string>; formError?: string };

/**
 * A connection form's prefill for a caller that has checked its own authority (the console's
 * administrators above; an organization's admin portal for its own organization).
 */
export async function readConnectionFields(service: Service, raw: Record<string, unknown>): Promise<PrefillOutcome> {
  const kind = z.enum(CONNECTION_KINDS).safeParse(raw.kind);
  const protocol = kind.success ? CONNECTION_PROTOCOLS[kind.data] : null;
  if (!protocol?.console.prefill) return { ok: false, fieldErrors: {}, formError: "This protocol has nothing to fill in" };
  const parsed = z.object(protocol.console.fields(FIELD_TYPES)).safeParse(raw);
  if (!parsed.success) {
    const fieldErrors: Record<string, string> = {};
    for (const issue of parsed.error.issues) fieldErrors[String(issue.path[0] ?? "kind")] ??= issue.message;
    return { ok: false, fieldErrors };
  }
  const filled = await protocol.console.prefill({ service }, parsed.data);
  return "errors" in filled ? { ok: false, fieldErrors: filled.errors } : { ok: true, ...filled };
}

async function organizationSlug(ctx: { db: Service["db"]; access: { workspace: { id: string } } }, organizationId: string): Promise<string> {
  const [org] = await ctx.db
    .select({ slug: organizations.slug })
    .from(organizations)
    .where(and(eq(organizations.workspaceId, ctx.access.workspace.id), eq(organizations.id, organizationId)))
    .limit(1);
  if (!org) throw formError("This organization no longer exists");
  return org.slug;
}

/** Claims an email domain for the organization, unverified until DNS or an operator says so. */
export const addDomain = defineOperation({
  name: "organization.domain_claimed",
  role: "admin",
  input: z.object({ organization_id: id("organization"), domain: text("a domain", 300) }),
  async run(ctx, input) {
    const slug = await organizationSlug(ctx, input.organization_id);
    const claimed = await claimDomain(ctx.db, { workspaceId: ctx.access.workspace.id, organizationId: input.organization_id, domain: input.domain, now: ctx.now });
    return { result: { id: claimed.id, domain: claimed.domain }, audit: { target: slug, data: { domain: claimed.domain, domain_id: claimed.id } } };
  },
});

/**
 * Where "Check DNS" asks for TXT records; tests replace it. The lookup runs before the
 * operation's transaction opens (a slow DNS server must not hold the database).
 */
export const domainDns: { resolveTxt: TxtResolver } = { resolveTxt: systemResolveTxt };

/** Looks for the domain's TXT record; found, the domain is verified by DNS (audited); not found yet, the form says why. */
export const checkDomainDns = defineOperation({
  name: "organization.domain_verified",
  role: "admin",
  input: z.object({ organization_id: id("organization"), domain_id: id("domain"), domain: text("the domain", 300) }),
  // The form names the domain so the lookup can run outside the transaction; run() checks it is the claimed one.
  prepare: (input) => lookupVerificationRecords(input.domain.toLowerCase(), domainDns.resolveTxt),
  async run(ctx, input, lookup) {
    const slug = await organizationSlug(ctx, input.organization_id);
    const current = await getDomain(ctx.db, ctx.access.workspace.id, input.domain_id);
    if (!current || current.organizationId !== input.organization_id) throw formError("This domain is no longer claimed");
    if (current.domain !== input.domain.toLowerCase()) throw formError("The domain changed meanwhile: reload the page");
    const outcome = await applyDnsVerification(ctx.db, { workspaceId: ctx.access.workspace.id, domainId: current.id, organizationId: input.organization_id, now: ctx.now, lookup });
    if (!outcome.verified) throw formError(`Not found yet: ${outcome.reason}. DNS changes can take a while to appear; check again later.`);
    return {
      result: { verified: true },
      audit: outcome.changed ? { target: slug, data: { domain: current.domain, domain_id: current.id, method: "dns" } } : null,
    };
  },
});

/** An operator's word that the organization controls the domain, without DNS: audited as such. */
export const markDomainVerifiedByOperator = defineOperation({
  name: "organization.domain_verified",
  role: "admin",
  input: z.object({ organization_id: id("organization"), domain_id: id("domain") }),
  async run(ctx, input) {
    const slug = await organizationSlug(ctx, input.organization_id);
    const marked = await markDomainVerified(ctx.db, {
      workspaceId: ctx.access.workspace.id,
      organizationId: input.organization_id,
      domainId: input.domain_id,
      now: ctx.now,
      method: "operator",
    });
    if (!marked.changed) throw formError("This domain is verified already");
    return { result: null, audit: { target: slug, data: { domain: marked.domain.domain, domain_id: marked.domain.id, method: "operator" } } };
  },
});

/** Removes a claim: addresses in the domain stop going to this organization's connection. */
export const removeDomain = defineOperation({
  name: "organization.domain_removed",
  role: "admin",
  input: z.object({ organization_id: id("organization"), domain_id: id("domain") }),
  async run(ctx, input) {
    const slug = await organizationSlug(ctx, input.organization_id);
    const removed = await removeDomainRow(ctx.db, { workspaceId: ctx.access.workspace.id, organizationId: input.organization_id, domainId: input.domain_id });
    if (!removed) throw formError("This domain is no longer claimed");
    return {
      result: null,
      audit: { target: slug, data: { domain: removed.domain, domain_id: removed.id, was_verified: removed.verificationMethod } },
    };
  },
});
