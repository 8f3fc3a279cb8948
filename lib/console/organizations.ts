/**
 * Organizations: members, and enterprise connection settings (configuration only; sign-in through
 * connections comes later). Membership changes reuse lib/authz/model.ts. An upstream client
 * secret is stored AES-256-GCM under the master key and never shown again.
 */
import { and, asc, eq } from "drizzle-orm";
import { z } from "zod";
import { enterpriseConnections, organizations, users } from "../../db/schema";
import { addOrganizationMember, removeOrganizationMember } from "../authz/model";
import { encryptSecret, newId } from "../crypto";
import type { Service } from "../service";
import { checkbox, email, id, lines, optionalText, text } from "./forms";
import { ConsoleInputError, defineOperation, fieldError, formError } from "./operation";

export const CONNECTION_SECRET_PURPOSE = "enterprise-connection";

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
  kind: "oidc" | "saml";
  active: boolean;
  config: Record<string, unknown>;
  hasSecret: boolean;
  updatedAt: Date;
}

export async function listConnections(service: Service, workspaceId: string, organizationId: string): Promise<ConnectionInfo[]> {
  const rows = await service.db
    .select()
    .from(enterpriseConnections)
    .where(and(eq(enterpriseConnections.workspaceId, workspaceId), eq(enterpriseConnections.organizationId, organizationId)))
    .orderBy(asc(enterpriseConnections.name));
  return rows.map((r) => ({ id: r.id, name: r.name, kind: r.kind, active: r.active, config: r.config, hasSecret: r.secretEncrypted !== null, updatedAt: r.updatedAt }));
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
      .where(and(eq(users.workspaceId, wid), eq(users.emailNormalized, input.email.toLowerCase())))
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

const optionalUrl = (label: string) =>
  z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : typeof v === "string" ? v.trim() : v),
    z
      .string()
      .max(2000)
      .refine((v) => {
        try {
          return new URL(v).protocol === "https:";
        } catch {
          return false;
        }
      }, `The ${label} must be an https URL`)
      .optional(),
  );

const domainList = lines(50, "domains");
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** Creates or updates an enterprise connection of an organization (OIDC or SAML settings). */
export const saveConnection = defineOperation({
  name: "organization.connection_saved",
  role: "admin",
  input: z.object({
    organization_id: id("organization"),
    connection_id: optionalText(200),
    name: text("a name"),
    kind: z.enum(["oidc", "saml"], { error: "Choose OIDC or SAML" }),
    active: checkbox(),
    issuer: optionalUrl("issuer"),
    client_id: optionalText(200),
    client_secret: optionalText(2000),
    metadata_url: optionalUrl("metadata URL"),
    entity_id: optionalText(500),
    domains: domainList,
  }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [org] = await ctx.db
      .select({ id: organizations.id, slug: organizations.slug })
      .from(organizations)
      .where(and(eq(organizations.workspaceId, wid), eq(organizations.id, input.organization_id)))
      .limit(1);
    if (!org) throw formError("This organization no longer exists");
    const errors: Record<string, string> = {};
    if (input.kind === "oidc") {
      if (!input.issuer) errors.issuer = "Enter the upstream issuer";
      if (!input.client_id) errors.client_id = "Enter the client id registered upstream";
    } else if (!input.metadata_url) errors.metadata_url = "Enter the identity provider's metadata URL";
    const badDomain = input.domains.find((d) => !DOMAIN.test(d.toLowerCase()));
    if (badDomain) errors.domains = `${badDomain} is not a domain name`;
    if (Object.keys(errors).length) throw new ConsoleInputError(errors);
    const config: Record<string, unknown> =
      input.kind === "oidc"
        ? { issuer: input.issuer, client_id: input.client_id, domains: input.domains.map((d) => d.toLowerCase()) }
        : { metadata_url: input.metadata_url, entity_id: input.entity_id ?? null, domains: input.domains.map((d) => d.toLowerCase()) };
    const connectionId = input.connection_id ?? newId();
    const secretEncrypted =
      input.kind === "oidc" && input.client_secret ? encryptSecret(ctx.service.config.masterKey, input.client_secret, `${CONNECTION_SECRET_PURPOSE}:${connectionId}`) : undefined;
    if (input.connection_id) {
      const updated = await ctx.db
        .update(enterpriseConnections)
        .set({
          name: input.name,
          kind: input.kind,
          active: input.active,
          config,
          ...(secretEncrypted ? { secretEncrypted } : input.kind === "saml" ? { secretEncrypted: null } : {}),
          updatedAt: ctx.now,
        })
        .where(and(eq(enterpriseConnections.workspaceId, wid), eq(enterpriseConnections.organizationId, org.id), eq(enterpriseConnections.id, input.connection_id)))
        .returning({ id: enterpriseConnections.id });
      if (updated.length === 0) throw formError("This connection no longer exists");
    } else {
      await ctx.db.insert(enterpriseConnections).values({
        id: connectionId,
        workspaceId: wid,
        organizationId: org.id,
        name: input.name,
        kind: input.kind,
        active: input.active,
        config,
        secretEncrypted: secretEncrypted ?? null,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      });
    }
    return {
      result: { id: connectionId },
      audit: { target: org.slug, data: { connection_id: connectionId, name: input.name, kind: input.kind, active: input.active, config, secret_changed: !!secretEncrypted } },
    };
  },
});
