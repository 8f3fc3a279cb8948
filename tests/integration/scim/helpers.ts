/**
 * SCIM tests' helpers: a workspace with two organizations (acme with a verified domain and an
 * OIDC connection, globex with its own domain), a directory and token per organization, and a
 * SCIM client as a directory calls (`Authorization: Bearer`, application/scim+json).
 */
import { and, eq } from "drizzle-orm";
import { organizationMembers, scimUsers, userRoles, users } from "../../../db/schema";
import { issueToken, saveDirectory, DEFAULT_SETTINGS, type DirectorySettings } from "../../../lib/organizations/scim/directory";
import { ACME, authzWorkspace, GLOBEX } from "../../helpers/fixtures";
import { call, type Harness } from "../../helpers/harness";
import { connectionIdOf, organizationIdOf, seedWithSecrets } from "../../helpers/federation/setup";

export const ACME_ISSUER = "https://idp.acme.test";

/** Seeds the workspace; returns the organizations' and the connection's ids. */
export async function seedScimWorkspace(h: Harness, ws: string, extra: { users?: object[] } = {}) {
  const doc = authzWorkspace(ws);
  doc.organizations[0] = {
    ...doc.organizations[0],
    domains: [{ domain: "acme.test", verified: true }],
    connections: [{ name: "Acme IdP", issuer: ACME_ISSUER, client_id: "latchkey", client_secret: { env: "ACME_SECRET" } }],
  };
  doc.organizations[1] = { ...doc.organizations[1], domains: [{ domain: "globex.test", verified: true }] };
  (doc.users as object[]).push(...(extra.users ?? []));
  await seedWithSecrets(h, doc, { ACME_SECRET: "acme-upstream-secret-0123456789" });
  const acme = await organizationIdOf(h, ws, ACME);
  const globex = await organizationIdOf(h, ws, GLOBEX);
  const connection = await connectionIdOf(h, ws, ACME, "Acme IdP");
  return { acme, globex, connection };
}

/** Turns an organization's directory on with `settings` and issues a token. */
export async function directoryWithToken(h: Harness, ws: string, organizationId: string, settings: Partial<DirectorySettings> = {}) {
  const directory = await saveDirectory(h.service.db, { workspaceId: ws, organizationId, settings: { ...DEFAULT_SETTINGS, ...settings }, now: h.clock.now() });
  const { token } = await issueToken(h.service.db, { workspaceId: ws, directoryId: directory.id, overlapHours: 0, now: h.clock.now() });
  return { directory, token };
}

export interface ScimClient {
  (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
}

export function scimClient(h: Harness, ws: string, organization: string, token: string): ScimClient {
  return (method, path, body, headers = {}) =>
    call(h, `/t/${ws}/scim/v2/o/${organization}${path}`, {
      method,
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/scim+json" }), ...headers },
    });
}

export async function json(res: Response): Promise<Record<string, any>> {
  return (await res.json()) as Record<string, any>;
}

export async function accountOf(h: Harness, ws: string, scimId: string) {
  const [row] = await h.service.db
    .select({ user: users, managed: scimUsers.managed })
    .from(scimUsers)
    .innerJoin(users, eq(users.id, scimUsers.userId))
    .where(and(eq(scimUsers.workspaceId, ws), eq(scimUsers.id, scimId)));
  return row ?? null;
}

export async function isMember(h: Harness, ws: string, organizationId: string, userId: string): Promise<boolean> {
  const rows = await h.service.db
    .select({ id: organizationMembers.id, origin: organizationMembers.origin })
    .from(organizationMembers)
    .where(and(eq(organizationMembers.workspaceId, ws), eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.userId, userId)));
  return rows.length > 0;
}

export async function organizationRoleIds(h: Harness, ws: string, organizationId: string, userId: string): Promise<string[]> {
  const rows = await h.service.db
    .select({ roleId: userRoles.roleId })
    .from(userRoles)
    .where(and(eq(userRoles.workspaceId, ws), eq(userRoles.organizationId, organizationId), eq(userRoles.userId, userId)));
  return rows.map((r) => r.roleId).sort();
}

/** A user as Microsoft Entra's provisioning service creates one (its documented request, with this test's values). */
export function entraUser(userName: string, externalId: string, more: Record<string, unknown> = {}) {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
    externalId,
    userName,
    active: true,
    emails: [{ primary: true, type: "work", value: userName }],
    meta: { resourceType: "User" },
    name: { formatted: "givenName familyName", familyName: "familyName", givenName: "givenName" },
    roles: [],
    ...more,
  };
}

/** A user as Okta's SCIM 2.0 client creates one (its documented request, with this test's values). */
export function oktaUser(userName: string, externalId: string, given = "Test", family = "User") {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    userName,
    externalId,
    name: { givenName: given, familyName: family },
    emails: [{ primary: true, value: userName, type: "work" }],
    displayName: `${given} ${family}`,
    locale: "en-US",
    groups: [],
    password: "1mz050nq",
    active: true,
  };
}
