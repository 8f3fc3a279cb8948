import { generateKeyPairSync, randomBytes } from "node:crypto";
import { and, eq, isNull, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database, DatabaseHandle } from "../../db/client";
import { openFreshEmbeddedDatabase, openTestDatabase } from "../../tests/setup/test-database";
import {
  apiGrants,
  apis,
  auditEvents,
  clientSecrets,
  clientSocialProviders,
  clients,
  enterpriseConnections,
  organizationDomains,
  organizationMembers,
  organizations,
  rolePermissions,
  roles,
  socialProviders,
  userRoles,
  users,
  workspaces,
} from "../../db/schema";
import { hashPassword, isArgon2idHash, verifyPassword } from "../authn/password";
import { DEFAULT_POLICY, effectivePolicy } from "../authn/policy";
import {
  ClientSecretError,
  createClientSecret,
  listClientSecrets,
  revokeClientSecret,
  rotateClientSecret,
} from "../clients/secrets";
import { DAY, HOUR, type Clock } from "../clock";
import { decryptSecret, sha256Hex } from "../crypto";
import { DEMO_APP_CLIENT_ID, DEMO_APP_MFA_CLIENT_ID, demoAppSecret, demoClientsLine, demoSignInStillWorks, demoWorkspace, ensureDemoWorkspace } from "./demo";
import { exportWorkspace, importWorkspace, WorkspaceFileError, type WorkspaceFileIssue } from "./file";
import { generateSpKeyPair, keyMatchesCertificate } from "../federation/upstream/self-signed-certificate";

class TestClock implements Clock {
  constructor(public current = new Date("2026-11-21T12:00:00Z").getTime()) {}
  now() {
    return new Date(this.current);
  }
  advance(ms: number) {
    this.current += ms;
  }
}

let handle: DatabaseHandle;
let db: Database;
const clock = new TestClock();
const masterKey = randomBytes(32);
const opts = { clock, masterKey };

beforeAll(async () => {
  // With DATABASE_URL the test files share one PostgreSQL database: every workspace id is unique.
  handle = await openTestDatabase();
  db = handle.db;
});

afterAll(async () => {
  await handle?.close();
});

const uniqueId = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

const SECRET_A = "preset-secret-a-0123456789abcdef0123456789";
const SECRET_B = "preset-secret-b-0123456789abcdef0123456789";
const SECRET_C = "preset-secret-c-0123456789abcdef0123456789";
const API = "https://api.example.test";

function fullDoc(id: string) {
  return {
    id,
    name: "Full workspace",
    auth_policy: { passkey_enrollment: "offer", first_factors: ["password", "passkey"], sign_up: true },
    applications: [
      {
        client_id: "spa",
        name: "SPA",
        type: "PUBLIC",
        redirect_uris: ["https://app.example.test/callback", "com.example.app:/callback"],
        post_logout_redirect_uris: ["https://app.example.test/"],
        allowed_origins: ["https://app.example.test", "http://localhost:5173"],
        identity_scopes: ["openid", "email", "profile"],
      },
      {
        client_id: "web",
        name: "Web",
        type: "WEB_CONFIDENTIAL",
        redirect_uris: ["https://web.example.test/callback", "http://127.0.0.1:4000/callback"],
        post_logout_redirect_uris: ["https://web.example.test/signed-out"],
        identity_scopes: ["openid", "email"],
        account_security: true,
        auth_policy: { mfa: "required", first_factors: ["passkey", "email_otp"] },
        secret: SECRET_A,
        secret_lifetime_days: 30,
      },
      { client_id: "worker", name: "Worker", type: "M2M", secret: SECRET_B },
    ],
    apis: [{ audience: API, name: "Things", permissions: ["read:things", "write:things", "admin:things"] }],
    api_grants: [
      { client_id: "spa", audience: API, permissions: ["read:things", "write:things"] },
      { client_id: "worker", audience: API, permissions: ["read:things"] },
    ],
    roles: [
      { name: "reader", description: "Reads things", permissions: [{ audience: API, permissions: ["read:things"] }] },
      { name: "admin", permissions: [{ audience: API, permissions: ["read:things", "write:things", "admin:things"] }] },
    ],
    organizations: [{ slug: "acme", name: "Acme", members: ["Ada@Example.test"] }],
    users: [
      {
        email: "Ada@Example.test",
        name: "Ada Lovelace",
        password: "correct horse battery staple",
        email_verified: true,
        roles: ["reader", { role: "admin", organization: "acme" }],
      },
      { email: "bob@example.test", password: "another long password", status: "disabled" },
    ],
  };
}

type Doc = ReturnType<typeof fullDoc>;

async function counts(workspaceId: string) {
  const count = async (table: typeof clients | typeof apis | typeof apiGrants | typeof roles | typeof rolePermissions | typeof organizations | typeof organizationMembers | typeof users | typeof userRoles | typeof clientSecrets) =>
    (await db.select({ n: sql<number>`count(*)::int` }).from(table).where(eq(table.workspaceId, workspaceId)))[0].n;
  return {
    workspaces: (await db.select().from(workspaces).where(eq(workspaces.id, workspaceId))).length,
    clients: await count(clients),
    clientSecrets: await count(clientSecrets),
    apis: await count(apis),
    apiGrants: await count(apiGrants),
    roles: await count(roles),
    rolePermissions: await count(rolePermissions),
    organizations: await count(organizations),
    organizationMembers: await count(organizationMembers),
    users: await count(users),
    userRoles: await count(userRoles),
  };
}

/** Every row id of the workspace's entity tables, to check that re-import keeps them. */
async function ids(workspaceId: string) {
  const pick = async (table: typeof clients | typeof apis | typeof apiGrants | typeof roles | typeof rolePermissions | typeof organizations | typeof organizationMembers | typeof users | typeof userRoles | typeof clientSecrets) =>
    (await db.select({ id: table.id }).from(table).where(eq(table.workspaceId, workspaceId))).map((r) => r.id).sort();
  return Promise.all([clients, clientSecrets, apis, apiGrants, roles, rolePermissions, organizations, organizationMembers, users, userRoles].map(pick));
}

async function expectInvalid(doc: unknown): Promise<WorkspaceFileIssue[]> {
  const error = await importWorkspace(db, doc, opts).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkspaceFileError);
  return (error as WorkspaceFileError).issues;
}

async function clientRow(workspaceId: string, clientId: string) {
  const [row] = await db.select().from(clients).where(and(eq(clients.workspaceId, workspaceId), eq(clients.clientId, clientId)));
  return row;
}

async function activeSecrets(workspaceId: string, clientId: string) {
  return (await listClientSecrets(db, { workspaceId, clientId, clock })).filter((s) => s.status === "active");
}

describe("importWorkspace", () => {
  it("creates every entity of a valid file", async () => {
    const id = uniqueId("imp");
    const result = await importWorkspace(db, fullDoc(id), opts);
    expect(result).toMatchObject({ workspaceId: id, created: true });
    expect(result.changes).toBeGreaterThan(0);
    expect(result.generatedSecrets).toBeUndefined();

    expect(await counts(id)).toEqual({
      workspaces: 1,
      clients: 3,
      clientSecrets: 2,
      apis: 1,
      apiGrants: 2,
      roles: 2,
      rolePermissions: 2,
      organizations: 1,
      organizationMembers: 1,
      users: 2,
      userRoles: 2,
    });

    const spa = await clientRow(id, "spa");
    expect(spa).toMatchObject({
      type: "PUBLIC",
      active: true,
      redirectUris: ["https://app.example.test/callback", "com.example.app:/callback"],
      allowedOrigins: ["https://app.example.test", "http://localhost:5173"],
      identityScopes: ["openid", "email", "profile"],
      accountSecurity: false,
    });
    expect(await clientRow(id, "web")).toMatchObject({ type: "WEB_CONFIDENTIAL", accountSecurity: true, secretLifetimeDays: 30 });
    const worker = await clientRow(id, "worker");
    expect(worker).toMatchObject({ type: "M2M", identityScopes: [], redirectUris: [], secretLifetimeDays: 90 });

    // Preset secrets: only the SHA-256 is stored, with the configured lifetime.
    const [webSecret] = await db.select().from(clientSecrets).where(eq(clientSecrets.clientPk, (await clientRow(id, "web")).id));
    expect(webSecret.secretHash).toBe(sha256Hex(SECRET_A));
    expect(webSecret.expiresAt.getTime()).toBe(clock.now().getTime() + 30 * DAY);
    const [workerSecret] = await db.select().from(clientSecrets).where(eq(clientSecrets.clientPk, worker.id));
    expect(workerSecret.expiresAt.getTime()).toBe(clock.now().getTime() + 90 * DAY);

    const [ada] = await db.select().from(users).where(and(eq(users.workspaceId, id), eq(users.emailNormalized, "ada@example.test")));
    expect(ada).toMatchObject({ email: "Ada@Example.test", name: "Ada Lovelace", emailVerified: true, status: "active" });
    expect(isArgon2idHash(ada.passwordHash!)).toBe(true);
    expect(await verifyPassword(ada.passwordHash!, "correct horse battery staple")).toBe(true);
    const [bob] = await db.select().from(users).where(and(eq(users.workspaceId, id), eq(users.emailNormalized, "bob@example.test")));
    expect(bob).toMatchObject({ status: "disabled", emailVerified: false, name: null });

    const [acme] = await db.select().from(organizations).where(eq(organizations.workspaceId, id));
    const adaRoles = await db.select().from(userRoles).where(eq(userRoles.userId, ada.id));
    const roleRows = await db.select().from(roles).where(eq(roles.workspaceId, id));
    const roleName = new Map(roleRows.map((r) => [r.id, r.name]));
    expect(adaRoles.map((r) => [roleName.get(r.roleId), r.organizationId]).sort()).toEqual([
      ["admin", acme.id],
      ["reader", null],
    ]);
    expect(roleRows.find((r) => r.name === "reader")?.description).toBe("Reads things");

    const grantRows = await db.select().from(apiGrants).where(eq(apiGrants.workspaceId, id));
    expect(grantRows.find((g) => g.clientPk === worker.id)?.permissions).toEqual(["read:things"]);
  });

  it("re-importing the same file changes nothing and keeps every id", async () => {
    const id = uniqueId("idem");
    await importWorkspace(db, fullDoc(id), opts);
    const beforeCounts = await counts(id);
    const beforeIds = await ids(id);
    const beforeUpdated = (await clientRow(id, "web")).updatedAt;
    const audits = async () => (await db.select().from(auditEvents).where(eq(auditEvents.workspaceId, id))).length;
    const beforeAudits = await audits();

    clock.advance(HOUR);
    const again = await importWorkspace(db, fullDoc(id), opts);
    expect(again).toEqual({ workspaceId: id, created: false, changes: 0, members: { removed: [], kept: [] }, dryRun: false });
    expect(await counts(id)).toEqual(beforeCounts);
    expect(await ids(id)).toEqual(beforeIds);
    expect((await clientRow(id, "web")).updatedAt).toEqual(beforeUpdated);
    expect(await audits()).toBe(beforeAudits);
  });

  it("updates in place: names, redirect lists, permissions, roles and members are replaced", async () => {
    const id = uniqueId("upd");
    await importWorkspace(db, fullDoc(id), opts);
    const webBefore = await clientRow(id, "web");
    const beforeCounts = await counts(id);

    const doc = fullDoc(id);
    doc.name = "Renamed";
    doc.applications[1].name = "Web (renamed)";
    doc.applications[1].redirect_uris = ["https://web.example.test/new-callback"];
    // Dropping a permission from the API drops it from the grant and the roles too.
    doc.apis[0].permissions = ["read:things", "write:things"];
    doc.roles[1].permissions = [{ audience: API, permissions: ["write:things"] }];
    doc.api_grants = [{ client_id: "worker", audience: API, permissions: ["read:things", "write:things"] }];
    doc.users[0].roles = ["admin"];
    doc.organizations[0].members = ["bob@example.test"];
    clock.advance(HOUR);
    const result = await importWorkspace(db, doc, opts);
    expect(result.created).toBe(false);
    expect(result.changes).toBeGreaterThan(0);

    const webAfter = await clientRow(id, "web");
    expect(webAfter.id).toBe(webBefore.id);
    expect(webAfter.name).toBe("Web (renamed)");
    expect(webAfter.redirectUris).toEqual(["https://web.example.test/new-callback"]);
    expect(webAfter.updatedAt.getTime()).toBe(clock.now().getTime());
    expect((await db.select().from(workspaces).where(eq(workspaces.id, id)))[0].name).toBe("Renamed");

    // Nothing the file no longer mentions was deleted (the spa grant stays), but lists were replaced.
    const after = await counts(id);
    expect(after).toEqual({ ...beforeCounts, userRoles: 1 });
    const spaGrant = (await db.select().from(apiGrants).where(eq(apiGrants.clientPk, (await clientRow(id, "spa")).id)))[0];
    expect(spaGrant.permissions).toEqual(["read:things", "write:things"]);

    const exported = await exportWorkspace(db, id);
    expect(exported?.apis[0].permissions).toEqual(["read:things", "write:things"]);
    expect(exported?.roles.find((r) => r.name === "admin")?.permissions).toEqual([{ audience: API, permissions: ["write:things"] }]);
    expect(exported?.users.find((u) => u.email === "Ada@Example.test")?.roles).toEqual(["admin"]);
    expect(exported?.organizations[0].members).toEqual(["bob@example.test"]);
    expect(exported?.api_grants.find((g) => g.client_id === "worker")?.permissions).toEqual(["read:things", "write:things"]);
  });

  it("prunes a removed API permission from grants and roles the file does not mention", async () => {
    const id = uniqueId("prune");
    await importWorkspace(db, fullDoc(id), opts);
    const doc = fullDoc(id);
    doc.apis[0].permissions = ["read:things"];
    doc.api_grants = [];
    doc.roles = [];
    doc.users[0].roles = [];
    await importWorkspace(db, doc, opts);
    const grants = await db.select().from(apiGrants).where(eq(apiGrants.workspaceId, id));
    expect(grants.map((g) => g.permissions)).toEqual([["read:things"], ["read:things"]]);
    const rolePerms = await db.select().from(rolePermissions).where(eq(rolePermissions.workspaceId, id));
    expect(rolePerms.map((r) => r.permissions).sort()).toEqual([["read:things"], ["read:things"]]);
  });

  it("keeps a password hash when the password is unchanged and rehashes when it changes", async () => {
    const id = uniqueId("pw");
    await importWorkspace(db, fullDoc(id), opts);
    const hashOf = async (email: string) =>
      (await db.select().from(users).where(and(eq(users.workspaceId, id), eq(users.emailNormalized, email))))[0].passwordHash;
    const first = await hashOf("ada@example.test");

    await importWorkspace(db, fullDoc(id), opts);
    expect(await hashOf("ada@example.test")).toBe(first);

    const doc = fullDoc(id);
    doc.users[0].password = "a brand new password";
    await importWorkspace(db, doc, opts);
    const changed = await hashOf("ada@example.test");
    expect(changed).not.toBe(first);
    expect(await verifyPassword(changed!, "a brand new password")).toBe(true);

    // A file without a password leaves the stored one alone.
    const withoutPassword = fullDoc(id) as Record<string, unknown> & Doc;
    delete (withoutPassword.users[0] as { password?: string }).password;
    await importWorkspace(db, withoutPassword, opts);
    expect(await hashOf("ada@example.test")).toBe(changed);

    // An argon2id hash is accepted as is.
    const hash = await hashPassword("hashed elsewhere");
    const withHash = fullDoc(id) as unknown as { users: Record<string, unknown>[] };
    delete withHash.users[1].password;
    withHash.users[1].password_hash = hash;
    await importWorkspace(db, withHash, opts);
    expect(await hashOf("bob@example.test")).toBe(hash);
  });
});

describe("invalid files", () => {
  it("reports the JSON path of every problem and writes nothing", async () => {
    const id = uniqueId("bad");
    const doc = fullDoc(id) as unknown as Record<string, unknown> & { applications: Record<string, unknown>[]; users: Record<string, unknown>[] };
    doc.applications[0].redirect_uris = ["https://app.example.test/callback", "http://evil.example/cb"];
    doc.applications[1].type = "CONFIDENTIAL";
    doc.applications[2].secret_lifetime_days = 400;
    doc.users[1].email = "not-an-email";
    doc.unexpected = true;
    const issues = await expectInvalid(doc);
    const paths = issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "$.applications[0].redirect_uris[1]",
        "$.applications[1].type",
        "$.applications[2].secret_lifetime_days",
        "$.users[1].email",
        "$.unexpected",
      ]),
    );
    expect(issues.find((i) => i.path === "$.applications[0].redirect_uris[1]")?.message).toMatch(/https/);
    expect(issues.find((i) => i.path === "$.applications[1].type")?.message).toMatch(/WEB_CONFIDENTIAL/);
    expect(await counts(id)).toMatchObject({ workspaces: 0, clients: 0, users: 0 });
  });

  it("leaves an existing workspace unchanged", async () => {
    const id = uniqueId("keep");
    await importWorkspace(db, fullDoc(id), opts);
    const before = await exportWorkspace(db, id);
    const beforeIds = await ids(id);
    const doc = fullDoc(id);
    doc.name = "Should not be written";
    doc.applications[0].name = "Nor this";
    doc.api_grants.push({ client_id: "ghost", audience: API, permissions: [] });
    await expectInvalid(doc);
    expect(await exportWorkspace(db, id)).toEqual(before);
    expect(await ids(id)).toEqual(beforeIds);
  });

  it("rolls back everything when a write fails part-way", async () => {
    const id = uniqueId("atomic");
    let calls = 0;
    // The second clock reading happens after the workspace and first clients are written.
    const failingClock: Clock = {
      now() {
        if (++calls > 1) throw new Error("clock failure");
        return clock.now();
      },
    };
    await expect(importWorkspace(db, fullDoc(id), { clock: failingClock, masterKey })).rejects.toThrow("clock failure");
    expect(await counts(id)).toMatchObject({ workspaces: 0, clients: 0, clientSecrets: 0 });
  });

  it("rejects a non-object and a reserved id", async () => {
    expect(await expectInvalid([])).toEqual([{ path: "$", message: "must be a JSON object (got an array)" }]);
    const issues = await expectInvalid({ id: "system", name: "Operators" });
    expect(issues).toEqual([{ path: "$.id", message: "is reserved for the operator workspace" }]);
  });

  it("reports cross-reference and client-type problems", async () => {
    const id = uniqueId("xref");
    const doc = {
      id,
      name: "X",
      applications: [
        { client_id: "a", name: "A", type: "M2M", redirect_uris: ["https://a.example.test/cb"], identity_scopes: ["openid"] },
        { client_id: "a", name: "A again", type: "PUBLIC", redirect_uris: ["https://b.example.test/cb"], secret: SECRET_A },
        { client_id: "w", name: "W", type: "WEB_CONFIDENTIAL", redirect_uris: ["com.example.app:/cb"], identity_scopes: ["email"] },
      ],
      apis: [
        { audience: API, name: "Things", permissions: ["read:things", "openid"] },
        { audience: API, name: "Twice", permissions: [] },
      ],
      api_grants: [
        { client_id: "nobody", audience: API, permissions: ["read:things"] },
        { client_id: "w", audience: "https://unknown.example.test", permissions: [] },
        { client_id: "w", audience: API, permissions: ["delete:things"] },
      ],
      roles: [
        { name: "r", permissions: [{ audience: API, permissions: ["fly:things"] }] },
        { name: "r", permissions: [] },
      ],
      organizations: [{ slug: "acme", name: "Acme", members: ["stranger@example.test"] }],
      users: [
        { email: "u@example.test", password: "long enough password", password_hash: "x", roles: ["ghost", { role: "r", organization: "acme" }] },
        { email: "U@EXAMPLE.TEST" },
      ],
    };
    const issues = await expectInvalid(doc);
    const at = (path: string) => issues.filter((i) => i.path === path).map((i) => i.message);
    expect(at("$.applications[0].redirect_uris")[0]).toMatch(/M2M clients cannot have redirect URIs/);
    expect(at("$.applications[0].identity_scopes")[0]).toMatch(/M2M/);
    expect(at("$.applications[1].client_id")[0]).toMatch(/duplicate client_id "a"/);
    expect(at("$.applications[1].secret")[0]).toMatch(/PUBLIC clients have no secret/);
    expect(at("$.applications[2].redirect_uris[0]")[0]).toMatch(/custom URI schemes are allowed only for PUBLIC/);
    expect(at("$.applications[2].identity_scopes")[0]).toMatch(/openid/);
    expect(at("$.apis[0].permissions[1]")[0]).toMatch(/identity scope/);
    expect(at("$.apis[1].audience")[0]).toMatch(/duplicate audience/);
    expect(at("$.api_grants[0].client_id")[0]).toMatch(/unknown client_id "nobody"/);
    expect(at("$.api_grants[1].audience")[0]).toMatch(/unknown audience/);
    expect(at("$.api_grants[2].permissions[0]")[0]).toMatch(/"delete:things" is not defined on API/);
    expect(at("$.roles[0].permissions[0].permissions[0]")[0]).toMatch(/"fly:things" is not defined/);
    expect(at("$.roles[1].name")[0]).toMatch(/duplicate name/);
    expect(at("$.organizations[0].members[0]")[0]).toMatch(/unknown user/);
    expect(at("$.users[0]")[0]).toMatch(/either password or password_hash/);
    expect(at("$.users[0].password_hash")[0]).toMatch(/argon2id/);
    expect(at("$.users[0].roles[0]")[0]).toMatch(/unknown role "ghost"/);
    expect(at("$.users[0].roles[1].organization")[0]).toMatch(/members of organization "acme"/);
    expect(at("$.users[1].email")[0]).toMatch(/duplicate email/);
    expect(await counts(id)).toMatchObject({ workspaces: 0 });
  });

  it("applies the URI rules", async () => {
    const id = uniqueId("uri");
    const app = (type: string, redirect: string, origins: string[] = []) => ({
      id,
      name: "U",
      applications: [{ client_id: "c", name: "C", type, redirect_uris: [redirect], allowed_origins: origins }],
    });
    const problem = async (doc: unknown) => (await expectInvalid(doc)).map((i) => `${i.path}: ${i.message}`);
    expect(await problem(app("PUBLIC", "https://a.example.test/cb#frag"))).toEqual([
      "$.applications[0].redirect_uris[0]: must not contain a fragment (#)",
    ]);
    expect((await problem(app("PUBLIC", "/relative/callback")))[0]).toMatch(/absolute URI/);
    expect((await problem(app("PUBLIC", "https://*.example.test/cb")))[0]).toMatch(/wildcards/);
    expect((await problem(app("PUBLIC", "http://192.168.1.2/cb")))[0]).toMatch(/https/);
    expect((await problem(app("PUBLIC", "myapp://callback")))[0]).toMatch(/reverse domain/);
    expect((await problem(app("PUBLIC", "javascript:alert(1)")))[0]).toMatch(/javascript/);
    expect((await problem(app("PUBLIC", "https://a.example.test/cb", ["https://a.example.test/"])))[0]).toMatch(/origin only/);
    expect((await problem(app("WEB_CONFIDENTIAL", "https://a.example.test/cb", ["https://a.example.test"])))[0]).toMatch(
      /only PUBLIC clients have allowed browser origins/,
    );
    // Loopback http and native schemes are fine for a public client.
    for (const ok of ["http://localhost:8080/cb", "http://127.0.0.1/cb", "http://[::1]:3000/cb", "com.example.app:/oauth"]) {
      await importWorkspace(db, app("PUBLIC", ok, ["http://localhost:8080"]), opts);
    }
  });
});

describe("home_uri (the application's home page)", () => {
  it("must be an https (or loopback http) URI on the origin of the first redirect URI; M2M has none; it is stored, exported and cleared", async () => {
    const id = uniqueId("home");
    const doc = (home: string | undefined, type = "WEB_CONFIDENTIAL", redirect = ["https://a.example.test/cb", "https://b.example.test/cb"]) => ({
      id,
      name: "H",
      applications: [{ client_id: "c", name: "C", type, redirect_uris: type === "M2M" ? [] : redirect, ...(home === undefined ? {} : { home_uri: home }) }],
    });
    const problem = async (d: unknown) => (await expectInvalid(d)).map((i) => `${i.path}: ${i.message}`);
    expect(await problem(doc("https://b.example.test/"))).toEqual(["$.applications[0].home_uri: must be on the origin of the application's first redirect URI"]);
    expect(await problem(doc("http://a.example.test/"))).toEqual(["$.applications[0].home_uri: must use https (http is allowed only for localhost, 127.0.0.1 and [::1])"]);
    expect((await problem(doc("https://a.example.test/#top")))[0]).toMatch(/fragment/);
    expect((await problem(doc("/home")))[0]).toMatch(/absolute URI/);
    expect((await problem(doc("https://a.example.test/", "WEB_CONFIDENTIAL", [])))[0]).toMatch(/origin of the application's first redirect URI/);
    expect((await problem(doc("https://a.example.test/", "M2M")))[0]).toMatch(/M2M clients have no users/);

    await importWorkspace(db, doc("https://a.example.test/home?x=1"), opts);
    const [row] = await db.select().from(clients).where(and(eq(clients.workspaceId, id), eq(clients.clientId, "c")));
    expect(row.homeUri).toBe("https://a.example.test/home?x=1");
    expect((await exportWorkspace(db, id))!.applications[0]).toMatchObject({ home_uri: "https://a.example.test/home?x=1" });
    // Left out: none (the file is the whole registration), and the export leaves it out too.
    await importWorkspace(db, doc(undefined), opts);
    const [cleared] = await db.select().from(clients).where(and(eq(clients.workspaceId, id), eq(clients.clientId, "c")));
    expect(cleared.homeUri).toBeNull();
    expect((await exportWorkspace(db, id))!.applications[0]).not.toHaveProperty("home_uri");
    // Loopback http, as for redirect URIs.
    await importWorkspace(db, doc("http://localhost:4000/", "PUBLIC", ["http://localhost:4000/callback"]), opts);
  });
});

describe("exportWorkspace", () => {
  it("round-trips: export then import is a no-op, and imports elsewhere to the same document", async () => {
    const id = uniqueId("exp");
    await importWorkspace(db, fullDoc(id), opts);
    const exported = await exportWorkspace(db, id);
    expect(exported).not.toBeNull();
    const text = JSON.stringify(exported);
    expect(text).not.toContain(SECRET_A);
    expect(text).not.toContain('"secret"');
    expect(text).not.toContain("correct horse");
    const ada = exported!.users.find((u) => u.email === "Ada@Example.test")!;
    expect(isArgon2idHash(ada.password_hash!)).toBe(true);
    expect(ada.roles).toEqual(["reader", { role: "admin", organization: "acme" }]);
    expect(exported!.applications.find((a) => a.client_id === "worker")).toEqual({
      client_id: "worker",
      name: "Worker",
      type: "M2M",
      redirect_uris: [],
      post_logout_redirect_uris: [],
      allowed_origins: [],
      identity_scopes: [],
      active: true,
      account_security: false,
      secret_lifetime_days: 90,
    });

    const again = await importWorkspace(db, JSON.parse(text), opts);
    expect(again.changes).toBe(0);

    const copyId = uniqueId("copy");
    const copy = await importWorkspace(db, { ...JSON.parse(text), id: copyId }, opts);
    expect(copy.created).toBe(true);
    expect(await exportWorkspace(db, copyId)).toEqual({ ...exported, id: copyId });
    // The copy's users sign in with the same passwords.
    const [copiedAda] = await db.select().from(users).where(and(eq(users.workspaceId, copyId), eq(users.emailNormalized, "ada@example.test")));
    expect(await verifyPassword(copiedAda.passwordHash!, "correct horse battery staple")).toBe(true);
  });

  it("returns null for an unknown workspace", async () => {
    expect(await exportWorkspace(db, uniqueId("none"))).toBeNull();
  });
});

describe("auth_policy", () => {
  it("stores the workspace's policy and each application's overrides, and re-importing changes nothing", async () => {
    const id = uniqueId("pol");
    await importWorkspace(db, fullDoc(id), opts);
    const [ws] = await db.select().from(workspaces).where(eq(workspaces.id, id));
    expect(ws.authPolicy).toEqual({ firstFactors: ["password", "passkey"], passkeyEnrollment: "offer", signUp: true });
    const web = await clientRow(id, "web");
    const spa = await clientRow(id, "spa");
    // The application's row holds only its overrides; what it leaves out is inherited.
    expect(web.authPolicy).toEqual({ firstFactors: ["passkey", "email_otp"], mfa: "required" });
    expect(spa.authPolicy).toEqual({});
    expect(effectivePolicy(ws.authPolicy, web.authPolicy)).toEqual({
      firstFactors: ["passkey", "email_otp"],
      mfa: "required",
      passkeyEnrollment: "offer",
      signUp: true,
    });
    expect(effectivePolicy(ws.authPolicy, spa.authPolicy)).toEqual({ ...DEFAULT_POLICY, firstFactors: ["password", "passkey"], passkeyEnrollment: "offer", signUp: true });

    // jsonb reorders keys; the comparison must not see that as a change.
    expect((await importWorkspace(db, fullDoc(id), opts)).changes).toBe(0);
  });

  it("replaces a changed policy and clears a removed one (no auth_policy means the defaults, or inherit)", async () => {
    const id = uniqueId("polchg");
    await importWorkspace(db, fullDoc(id), opts);
    const doc = fullDoc(id) as Omit<ReturnType<typeof fullDoc>, "auth_policy"> & { auth_policy?: unknown };
    doc.auth_policy = { mfa: "required" };
    delete (doc.applications[1] as { auth_policy?: unknown }).auth_policy;
    const result = await importWorkspace(db, doc, opts);
    expect(result.changes).toBe(2);
    const [ws] = await db.select().from(workspaces).where(eq(workspaces.id, id));
    expect(ws.authPolicy).toEqual({ mfa: "required" });
    expect((await clientRow(id, "web")).authPolicy).toEqual({});
    delete doc.auth_policy;
    await importWorkspace(db, doc, opts);
    const [after] = await db.select().from(workspaces).where(eq(workspaces.id, id));
    expect(after.authPolicy).toEqual({});
  });

  it("exports the policies as the file writes them, only where they override something", async () => {
    const id = uniqueId("polexp");
    await importWorkspace(db, fullDoc(id), opts);
    const exported = (await exportWorkspace(db, id))!;
    expect(exported.auth_policy).toEqual({ first_factors: ["password", "passkey"], passkey_enrollment: "offer", sign_up: true });
    expect(exported.applications.find((a) => a.client_id === "web")?.auth_policy).toEqual({ first_factors: ["passkey", "email_otp"], mfa: "required" });
    expect(exported.applications.find((a) => a.client_id === "spa")).not.toHaveProperty("auth_policy");

    // Import, export, import: equal.
    const copyId = uniqueId("polcopy");
    await importWorkspace(db, { ...exported, id: copyId }, opts);
    expect(await exportWorkspace(db, copyId)).toEqual({ ...exported, id: copyId });

    // A stored value the policy cannot read is not exported (nor enforced).
    await db.update(workspaces).set({ authPolicy: { mfa: "sometimes", signUp: false } }).where(eq(workspaces.id, id));
    expect((await exportWorkspace(db, id))!.auth_policy).toEqual({ sign_up: false });
    await db.update(workspaces).set({ authPolicy: { mfa: "sometimes" } }).where(eq(workspaces.id, id));
    expect(await exportWorkspace(db, id)).not.toHaveProperty("auth_policy");
  });

  it("rejects invalid policies with the JSON path of each problem and writes nothing", async () => {
    const id = uniqueId("polbad");
    const doc = fullDoc(id) as unknown as Record<string, unknown> & { applications: Record<string, unknown>[] };
    doc.auth_policy = { first_factors: ["password", "sms"], mfa: "sometimes", passkey_enrollment: "always", sign_up: "yes", lockout: 3 };
    doc.applications[0].auth_policy = { first_factors: [] };
    doc.applications[1].auth_policy = { first_factors: ["passkey", "passkey"] };
    doc.applications[2].auth_policy = { mfa: "required" };
    const issues = await expectInvalid(doc);
    const at = (path: string) => issues.filter((i) => i.path === path).map((i) => i.message);
    expect(at("$.auth_policy.first_factors[1]")[0]).toMatch(/must be one of "password", "email_otp", "passkey"/);
    expect(at("$.auth_policy.mfa")[0]).toMatch(/must be one of "off", "required"/);
    expect(at("$.auth_policy.passkey_enrollment")[0]).toMatch(/must be one of "never", "offer", "require"/);
    expect(at("$.auth_policy.sign_up")[0]).toMatch(/must be a boolean/);
    expect(at("$.auth_policy.lockout")).toEqual(["is not a recognized field"]);
    expect(at("$.applications[0].auth_policy.first_factors")[0]).toMatch(/at least one first factor/);
    expect(at("$.applications[1].auth_policy.first_factors[1]")[0]).toMatch(/duplicate first factor "passkey"/);
    expect(at("$.applications[2].auth_policy")[0]).toMatch(/M2M clients/);
    expect(await counts(id)).toMatchObject({ workspaces: 0 });

    expect(await expectInvalid({ id, name: "X", auth_policy: "strict" })).toEqual([{ path: "$.auth_policy", message: "must be an object (got a string)" }]);
  });
});

describe("client secrets", () => {
  it("keeps an unchanged preset secret and never leaves more than two active", async () => {
    const id = uniqueId("preset");
    const doc = fullDoc(id);
    await importWorkspace(db, doc, opts);
    const first = await activeSecrets(id, "web");
    expect(first).toHaveLength(1);

    clock.advance(HOUR);
    await importWorkspace(db, doc, opts);
    expect((await activeSecrets(id, "web")).map((s) => s.id)).toEqual(first.map((s) => s.id));

    clock.advance(HOUR);
    doc.applications[1].secret = SECRET_B;
    await importWorkspace(db, doc, opts);
    expect(await activeSecrets(id, "web")).toHaveLength(2);

    clock.advance(HOUR);
    doc.applications[1].secret = SECRET_C;
    await importWorkspace(db, doc, opts);
    const all = await listClientSecrets(db, { workspaceId: id, clientId: "web", clock });
    expect(all.filter((s) => s.status === "active")).toHaveLength(2);
    // The oldest (SECRET_A) was revoked.
    expect(all.find((s) => s.id === first[0].id)?.status).toBe("revoked");
    const hashes = (await db.select().from(clientSecrets).where(and(eq(clientSecrets.workspaceId, id), isNull(clientSecrets.revokedAt)))).map((s) => s.secretHash);
    expect(hashes).toEqual(expect.arrayContaining([sha256Hex(SECRET_B), sha256Hex(SECRET_C)]));
    expect(hashes).not.toContain(sha256Hex(SECRET_A));
  });

  it("creates, rotates with overlap 0 and with overlap, revokes, and lists without hashes", async () => {
    const id = uniqueId("rot");
    const doc = fullDoc(id);
    delete (doc.applications[2] as { secret?: string }).secret;
    await importWorkspace(db, doc, opts);
    const ref = { workspaceId: id, clientId: "worker", clock };

    const created = await createClientSecret(db, { ...ref, lifetimeDays: 10 });
    expect(created.secret).toMatch(/^lks_[A-Za-z0-9_-]{43}$/);
    expect(created.expiresAt.getTime()).toBe(clock.now().getTime() + 10 * DAY);
    const [stored] = await db.select().from(clientSecrets).where(eq(clientSecrets.id, created.id));
    expect(stored.secretHash).toBe(sha256Hex(created.secret));

    // Immediate replacement: the old secret is revoked now.
    clock.advance(HOUR);
    const r0 = await rotateClientSecret(db, { ...ref, overlapHours: 0 });
    expect(r0.previous).toEqual([expect.objectContaining({ id: created.id, status: "revoked", revokedAt: clock.now() })]);
    expect((await activeSecrets(id, "worker")).map((s) => s.id)).toEqual([r0.id]);
    expect(r0.expiresAt.getTime()).toBe(clock.now().getTime() + 90 * DAY);

    // Overlap: the previous secret stays active for 6 hours, then expires.
    clock.advance(HOUR);
    const r1 = await rotateClientSecret(db, { ...ref, overlapHours: 6 });
    expect(r1.previous).toEqual([expect.objectContaining({ id: r0.id, status: "active", expiresAt: new Date(clock.now().getTime() + 6 * HOUR) })]);
    expect((await activeSecrets(id, "worker")).map((s) => s.id).sort()).toEqual([r0.id, r1.id].sort());

    // Rotating again during the overlap keeps at most two active: the oldest is revoked.
    clock.advance(HOUR);
    const r2 = await rotateClientSecret(db, { ...ref, overlapHours: 24 });
    const active = await activeSecrets(id, "worker");
    expect(active.map((s) => s.id).sort()).toEqual([r1.id, r2.id].sort());
    expect(r2.previous.find((p) => p.id === r0.id)?.status).toBe("revoked");

    // Adding a third secret outright is refused.
    await expect(createClientSecret(db, ref)).rejects.toMatchObject({ code: "too_many_active_secrets" });

    // The overlap never extends a secret past its own expiry.
    const short = uniqueId("short");
    const d2 = fullDoc(short);
    delete (d2.applications[2] as { secret?: string }).secret;
    await importWorkspace(db, d2, opts);
    const s1 = await createClientSecret(db, { workspaceId: short, clientId: "worker", clock, lifetimeDays: 1 });
    clock.advance(23 * HOUR);
    const rs = await rotateClientSecret(db, { workspaceId: short, clientId: "worker", clock, overlapHours: 24 });
    expect(rs.previous[0]).toMatchObject({ id: s1.id, expiresAt: s1.expiresAt });
    clock.advance(2 * HOUR);
    expect((await activeSecrets(short, "worker")).map((s) => s.id)).toEqual([rs.id]);

    // Revoke, list.
    const revoked = await revokeClientSecret(db, { ...ref, secretId: r1.id });
    expect(revoked).toMatchObject({ id: r1.id, status: "revoked" });
    expect((await activeSecrets(id, "worker")).map((s) => s.id)).toEqual([r2.id]);
    const listed = await listClientSecrets(db, ref);
    expect(listed).toHaveLength(4);
    for (const s of listed) expect(Object.keys(s).sort()).toEqual(["createdAt", "expiresAt", "id", "lastUsedAt", "revokedAt", "status"]);

    // Argument and client-type checks.
    await expect(rotateClientSecret(db, { ...ref, overlapHours: 25 })).rejects.toBeInstanceOf(ClientSecretError);
    await expect(createClientSecret(db, { ...ref, lifetimeDays: 366 })).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(createClientSecret(db, { workspaceId: id, clientId: "spa", clock })).rejects.toMatchObject({ code: "client_has_no_secrets" });
    await expect(createClientSecret(db, { workspaceId: id, clientId: "nobody", clock })).rejects.toMatchObject({ code: "client_not_found" });
    await expect(revokeClientSecret(db, { ...ref, secretId: "nope" })).rejects.toMatchObject({ code: "secret_not_found" });
  });

  it("generates secrets for new confidential clients on request, once", async () => {
    const id = uniqueId("gen");
    const doc = fullDoc(id);
    delete (doc.applications[2] as { secret?: string }).secret;
    const result = await importWorkspace(db, doc, { ...opts, generateSecrets: true });
    expect(result.generatedSecrets).toEqual([
      { clientId: "worker", secretId: expect.any(String), secret: expect.stringMatching(/^lks_/), expiresAt: expect.any(Date) },
    ]);
    const again = await importWorkspace(db, doc, { ...opts, generateSecrets: true });
    expect(again.generatedSecrets).toBeUndefined();
  });

  it("revokes the secrets of a client that becomes PUBLIC", async () => {
    const id = uniqueId("topub");
    const doc = fullDoc(id) as unknown as { applications: Record<string, unknown>[] };
    await importWorkspace(db, doc, opts);
    Object.assign(doc.applications[1], { type: "PUBLIC", account_security: false });
    delete doc.applications[1].secret;
    delete doc.applications[1].secret_lifetime_days;
    await importWorkspace(db, doc, opts);
    const rows = await db.select().from(clientSecrets).where(eq(clientSecrets.clientPk, (await clientRow(id, "web")).id));
    expect(rows.every((r) => r.revokedAt !== null)).toBe(true);
  });
});

describe("ensureDemoWorkspace", () => {
  it("creates the demo workspace in an empty database, once, and returns the web secret", async () => {
    // Its own in-memory database: the demo is created only when no other workspace exists.
    const fresh = await openFreshEmbeddedDatabase();
    try {
      await fresh.db.insert(workspaces).values({ id: "system", name: "Operators", system: true, createdAt: clock.now(), updatedAt: clock.now() });
      const first = await ensureDemoWorkspace(fresh.db, { ...opts, publicUrl: "http://localhost:3000" });
      expect(first.created).toBe(true);
      expect(first.webSecret).toMatch(/^lks_/);
      const [demoWeb] = await fresh.db.select().from(clients).where(and(eq(clients.workspaceId, "demo"), eq(clients.clientId, "demo-web")));
      const [secret] = await fresh.db.select().from(clientSecrets).where(eq(clientSecrets.clientPk, demoWeb.id));
      expect(secret.secretHash).toBe(sha256Hex(first.webSecret!));
      const [user] = await fresh.db.select().from(users).where(eq(users.workspaceId, "demo"));
      expect(user).toMatchObject({ email: "demo@example.com", name: "Demo User", emailVerified: true });
      expect(await verifyPassword(user.passwordHash!, "demo-password")).toBe(true);

      // The demo shows the sign-in methods: every first factor, a passkey offered, and an application requiring MFA.
      const [demo] = await fresh.db.select().from(workspaces).where(eq(workspaces.id, "demo"));
      const [mfaApp] = await fresh.db.select().from(clients).where(and(eq(clients.workspaceId, "demo"), eq(clients.clientId, DEMO_APP_MFA_CLIENT_ID)));
      expect(effectivePolicy(demo.authPolicy, {})).toEqual({ firstFactors: ["password", "email_otp", "passkey"], mfa: "off", passkeyEnrollment: "offer", signUp: false });
      expect(effectivePolicy(demo.authPolicy, mfaApp.authPolicy)).toMatchObject({ mfa: "required", firstFactors: ["password", "email_otp", "passkey"] });
      expect(effectivePolicy(demo.authPolicy, demoWeb.authPolicy).mfa).toBe("off");
      expect(mfaApp.redirectUris).toEqual(demoWorkspace("http://localhost:3000").applications.find((a) => a.client_id === "demo-app")?.redirect_uris);
      expect(demoClientsLine()).toBe("demo-app (confidential)  demo-app-mfa (confidential, MFA required)  demo-web (confidential)");
      // The demo application's clients hold their derived secrets (only the hashes, for 365 days), and no other.
      for (const app of [DEMO_APP_CLIENT_ID, DEMO_APP_MFA_CLIENT_ID]) {
        const [row] = await fresh.db.select().from(clients).where(and(eq(clients.workspaceId, "demo"), eq(clients.clientId, app)));
        expect(row).toMatchObject({ type: "WEB_CONFIDENTIAL", accountSecurity: true, homeUri: "http://localhost:3000/demo" });
        const secrets = await fresh.db.select().from(clientSecrets).where(eq(clientSecrets.clientPk, row.id));
        expect(secrets.map((s) => s.secretHash)).toEqual([sha256Hex(demoAppSecret(opts.masterKey, app))]);
        expect(secrets[0].expiresAt.getTime() - secrets[0].createdAt.getTime()).toBe(365 * 24 * 3600_000);
      }
      expect(demoAppSecret(opts.masterKey, DEMO_APP_CLIENT_ID)).not.toBe(demoAppSecret(opts.masterKey, DEMO_APP_MFA_CLIENT_ID));

      expect(await ensureDemoWorkspace(fresh.db, { ...opts, publicUrl: "http://localhost:3000" })).toEqual({ created: false });
      // Later starts keep showing the demo sign-in while it works, and stop once the password changed.
      expect(await demoSignInStillWorks(fresh.db)).toBe(true);
      await fresh.db.update(users).set({ passwordHash: await hashPassword("someone changed it") }).where(eq(users.id, user.id));
      expect(await demoSignInStillWorks(fresh.db)).toBe(false);
      const exported = await exportWorkspace(fresh.db, "demo");
      expect(exported?.applications.map((a) => a.client_id)).toEqual(demoWorkspace("http://localhost:3000").applications.map((a) => a.client_id).sort());
    } finally {
      await fresh.close();
    }
  });
});

describe("federation settings", () => {
  const APPLE_KEY = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const env = { ACME_OKTA_SECRET: "okta-secret-1", GOOGLE_SECRET: "google-secret-1", APPLE_KEY };

  function federatedDoc(id: string) {
    const doc = fullDoc(id) as Doc & Record<string, unknown>;
    return {
      ...doc,
      applications: doc.applications.map((a) => (a.client_id === "spa" ? { ...a, social_providers: ["github", "google"] } : a.client_id === "web" ? { ...a, social_providers: [] } : a)),
      organizations: [
        {
          slug: "acme",
          name: "Acme",
          members: ["Ada@Example.test"],
          domains: [{ domain: "Acme.Example." }, { domain: "acme-corp.example", verified: true }],
          connections: [
            {
              name: "Acme Okta",
              issuer: "https://acme.okta.example",
              client_id: "latchkey-app",
              client_secret: { env: "ACME_OKTA_SECRET" },
              default_roles: ["reader"],
              trust_upstream_mfa: true,
            },
          ],
        },
      ],
      social_providers: [
        { key: "google", preset: "google", name: "Google", client_id: "g-client", client_secret: { env: "GOOGLE_SECRET" } },
        { key: "github", preset: "github", name: "GitHub", client_id: "gh-client", api_base: "https://github.example/api/v3", enabled: false },
        { key: "apple", preset: "apple", name: "Apple", client_id: "com.example.web", team_id: "TEAM123", key_id: "KEY456", client_secret: { env: "APPLE_KEY" } },
        { key: "corp", preset: "oidc", name: "Corp ID", client_id: "corp", issuer: "http://127.0.0.1:9000/" },
      ],
    };
  }

  const rows = async (id: string) => ({
    providers: await db.select().from(socialProviders).where(eq(socialProviders.workspaceId, id)).orderBy(socialProviders.position),
    offered: await db.select().from(clientSocialProviders).where(eq(clientSocialProviders.workspaceId, id)),
    connections: await db.select().from(enterpriseConnections).where(eq(enterpriseConnections.workspaceId, id)),
    domains: await db.select().from(organizationDomains).where(eq(organizationDomains.workspaceId, id)).orderBy(organizationDomains.domain),
  });

  describe("SAML connections", () => {
    const idpCert = generateSpKeyPair("idp.acme.example", new Date("2026-01-01T00:00:00Z")).certificatePem;
    const samlDoc = (id: string, saml: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      const doc = federatedDoc(id);
      doc.organizations[0]!.connections.push({ name: "Acme Entra", protocol: "saml", saml, ...extra } as never);
      return doc;
    };
    const ENTRA = { idp_entity_id: "https://sts.windows.example/tenant/", sso_url: "https://login.entra.example/tenant/saml2", idp_certificates: [idpCert], attribute_preset: "entra" };

    it("imports one with a fresh SP key pair sealed under the master key, exports it without the key, and keeps the key on re-import", async () => {
      const id = uniqueId("samlfile");
      await importWorkspace(db, samlDoc(id, { ...ENTRA, idp_initiated_application: "web" }), { ...opts, env });
      const [row] = (await rows(id)).connections.filter((c) => c.kind === "saml");
      expect(row!.config).toMatchObject({ idp_initiated_client_id: "web", idp_entity_id: ENTRA.idp_entity_id, sso_url: ENTRA.sso_url, attribute_preset: "entra", sign_requests: false, allow_sha1: false, name_id_format: "persistent" });
      const privateKey = decryptSecret(masterKey, row!.secretEncrypted!, `enterprise-connection:${row!.id}`);
      expect(keyMatchesCertificate(privateKey, row!.config.sp_certificate as string)).toBe(true);

      const exported = (await exportWorkspace(db, id))!;
      const saml = exported.organizations[0]!.connections.find((c) => c.protocol === "saml")!;
      expect(saml).toEqual({
        name: "Acme Entra",
        protocol: "saml",
        saml: { idp_entity_id: ENTRA.idp_entity_id, sso_url: ENTRA.sso_url, idp_certificates: [idpCert], sign_requests: false, allow_sha1: false, name_id_format: "persistent", attribute_preset: "entra", idp_initiated_application: "web" },
        default_roles: [],
        trust_upstream_mfa: false,
        admission: "verified_domains",
        enabled: true,
      });
      expect(JSON.stringify(exported)).not.toContain("PRIVATE KEY");
      expect((await importWorkspace(db, exported, { ...opts, env: {} })).changes).toBe(0);
      const [after] = (await rows(id)).connections.filter((c) => c.kind === "saml");
      expect(after!.secretEncrypted).toBe(row!.secretEncrypted);
      expect(after!.config.sp_certificate).toBe(row!.config.sp_certificate);
    });

    it("audits a file turning SHA-1 signatures on", async () => {
      const id = uniqueId("samlsha");
      await importWorkspace(db, samlDoc(id, ENTRA), { ...opts, env });
      await importWorkspace(db, samlDoc(id, { ...ENTRA, allow_sha1: true }), { ...opts, env });
      const events = await db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, id), eq(auditEvents.type, "workspace.connection_legacy_signatures_set")));
      expect(events.map((e) => e.data)).toEqual([expect.objectContaining({ name: "Acme Entra", legacy_signatures: true })]);
    });

    it("refuses what cannot work, at its path, and imports nothing", async () => {
      const problems = async (doc: unknown) => {
        const error = await importWorkspace(db, doc, { ...opts, env }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(WorkspaceFileError);
        return (error as WorkspaceFileError).issues.map((i: WorkspaceFileIssue) => `${i.path}: ${i.message}`);
      };
      const id = uniqueId("samlbad");
      expect(await problems(samlDoc(id, { idp_entity_id: "x" }))).toEqual([expect.stringMatching(/connections\[1\]\.saml: needs metadata_xml, or idp_entity_id, sso_url and idp_certificates/)]);
      expect(await problems(samlDoc(id, ENTRA, { admission: "any_vouched" }))).toEqual([expect.stringMatching(/connections\[1\]\.admission: must be "verified_domains" for a SAML connection/)]);
      expect(await problems(samlDoc(id, ENTRA, { issuer: "https://x.example" }))).toEqual([expect.stringMatching(/connections\[1\]\.issuer: belongs to an OIDC connection/)]);
      expect(await problems(samlDoc(id, { ...ENTRA, idp_certificates: ["not a certificate"] }))).toEqual([expect.stringMatching(/connections\[1\]\.saml\.idp_certificates: A signing certificate is not a valid X\.509 certificate/)]);
      expect(await problems(samlDoc(id, { metadata_xml: "<EntityDescriptor/>" }))).toEqual([expect.stringMatching(/saml\.metadata_xml: The metadata describes no SAML identity provider/)]);
      expect(await problems(samlDoc(id, { ...ENTRA, idp_initiated_application: "nobody" }))).toEqual([expect.stringMatching(/saml\.idp_initiated_application: unknown application "nobody"/)]);
      expect((await rows(id)).connections).toEqual([]);
    });

    it("reads the identity provider from metadata_xml", async () => {
      const id = uniqueId("samlmeta");
      const body = idpCert.replace(/-----[^-]+-----|\s/g, "");
      const metadata = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://idp.meta.example/saml"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${body}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor><md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${body}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor><md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.meta.example/post"/><md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.meta.example/redirect"/></md:IDPSSODescriptor></md:EntityDescriptor>`;
      await importWorkspace(db, samlDoc(id, { metadata_xml: metadata, attribute_preset: "custom", attributes: { email: "mail", given_name: "givenName" } }), { ...opts, env });
      const [row] = (await rows(id)).connections.filter((c) => c.kind === "saml");
      expect(row!.config).toMatchObject({ idp_entity_id: "https://idp.meta.example/saml", sso_url: "https://idp.meta.example/redirect", idp_certificates: [idpCert], attributes: { email: "mail", name: null, given_name: "givenName", family_name: null } });
    });
  });

  it("imports providers, connections and domains with secrets from the environment, encrypted", async () => {
    const id = uniqueId("fed");
    await importWorkspace(db, federatedDoc(id), { ...opts, env, actor: "operator-1" });
    const r = await rows(id);
    expect(r.providers.map((p) => [p.key, p.position, p.enabled])).toEqual([
      ["google", 0, true],
      ["github", 1, false],
      ["apple", 2, true],
      ["corp", 3, true],
    ]);
    const [google, github, apple, corp] = r.providers;
    expect(decryptSecret(masterKey, google.secretEncrypted!, `social-provider:${google.id}`)).toBe("google-secret-1");
    expect(google.secretEncrypted).not.toContain("google-secret-1");
    expect(github).toMatchObject({ secretEncrypted: null, config: { api_base: "https://github.example/api/v3" } });
    expect(apple.config).toEqual({ team_id: "TEAM123", key_id: "KEY456" });
    expect(decryptSecret(masterKey, apple.secretEncrypted!, `social-provider:${apple.id}`)).toBe(APPLE_KEY);
    expect(corp.config).toEqual({ issuer: "http://127.0.0.1:9000/" });
    const spa = await clientRow(id, "spa");
    expect(r.offered.filter((o) => o.clientPk === spa.id).map((o) => o.providerId).sort()).toEqual([google.id, github.id].sort());

    const [connection] = r.connections;
    const [reader] = await db.select().from(roles).where(and(eq(roles.workspaceId, id), eq(roles.name, "reader")));
    expect(connection).toMatchObject({ name: "Acme Okta", kind: "oidc", active: true, config: { issuer: "https://acme.okta.example", client_id: "latchkey-app" }, defaultRoleIds: [reader.id], trustUpstreamMfa: true });
    expect(decryptSecret(masterKey, connection.secretEncrypted!, `enterprise-connection:${connection.id}`)).toBe("okta-secret-1");

    expect(r.domains.map((d) => [d.domain, d.verificationMethod])).toEqual([
      ["acme-corp.example", "operator"],
      ["acme.example", null],
    ]);
    const marks = await db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, id), eq(auditEvents.type, "workspace.domain_verified")));
    expect(marks).toHaveLength(1);
    expect(marks[0]).toMatchObject({ actor: "operator-1", subject: "acme", data: { domain: "acme-corp.example", method: "operator" } });
  });

  it("round-trips without secrets: export has none, re-import changes nothing and keeps the stored secrets", async () => {
    const id = uniqueId("fedrt");
    await importWorkspace(db, federatedDoc(id), { ...opts, env });
    expect((await importWorkspace(db, federatedDoc(id), { ...opts, env })).changes).toBe(0);
    const exported = await exportWorkspace(db, id);
    const text = JSON.stringify(exported);
    for (const secret of Object.values(env)) expect(text).not.toContain(secret.slice(0, 40));
    expect(text).not.toContain("client_secret");
    expect(exported!.social_providers.map((p) => p.key)).toEqual(["google", "github", "apple", "corp"]);
    expect(exported!.social_providers[1]).toEqual({ key: "github", preset: "github", name: "GitHub", client_id: "gh-client", api_base: "https://github.example/api/v3", enabled: false });
    expect(exported!.applications.find((a) => a.client_id === "spa")?.social_providers).toEqual(["google", "github"]);
    expect(exported!.organizations[0].domains).toEqual([{ domain: "acme-corp.example", verified: true }, { domain: "acme.example" }]);
    expect(exported!.organizations[0].connections).toEqual([
      { name: "Acme Okta", protocol: "oidc", issuer: "https://acme.okta.example", client_id: "latchkey-app", default_roles: ["reader"], trust_upstream_mfa: true, admission: "verified_domains", enabled: true },
    ]);
    const before = await rows(id);
    // No environment needed: the export refers to none.
    expect((await importWorkspace(db, exported, { ...opts, env: {} })).changes).toBe(0);
    const after = await rows(id);
    expect(after.providers.map((p) => p.secretEncrypted)).toEqual(before.providers.map((p) => p.secretEncrypted));
    expect(after.connections[0].secretEncrypted).toBe(before.connections[0].secretEncrypted);

    // Into another workspace it means the same document (secrets left to set there).
    const copy = uniqueId("fedcopy");
    await importWorkspace(db, { ...exported, id: copy }, { ...opts, env: {} });
    expect({ ...(await exportWorkspace(db, copy)), id }).toEqual(exported);
  });

  it("updates in place: a changed secret, order, default roles and settings; never unverifies or drops a domain", async () => {
    const id = uniqueId("fedup");
    await importWorkspace(db, federatedDoc(id), { ...opts, env });
    const before = await rows(id);
    const doc = federatedDoc(id);
    doc.social_providers.reverse();
    doc.organizations[0].domains = [{ domain: "acme.example", verified: false }];
    doc.organizations[0].connections[0].default_roles = ["admin", "reader"];
    doc.organizations[0].connections[0].trust_upstream_mfa = false;
    const result = await importWorkspace(db, doc, { ...opts, env: { ...env, ACME_OKTA_SECRET: "okta-secret-2" } });
    expect(result.changes).toBeGreaterThan(0);
    const after = await rows(id);
    expect(after.providers.map((p) => p.key)).toEqual(["corp", "apple", "github", "google"]);
    expect(after.providers.map((p) => p.id).sort()).toEqual(before.providers.map((p) => p.id).sort());
    const [connection] = after.connections;
    expect(connection.id).toBe(before.connections[0].id);
    expect(decryptSecret(masterKey, connection.secretEncrypted!, `enterprise-connection:${connection.id}`)).toBe("okta-secret-2");
    expect(connection.defaultRoleIds).toHaveLength(2);
    expect(connection.trustUpstreamMfa).toBe(false);
    expect(after.domains.map((d) => [d.domain, d.verificationMethod])).toEqual([
      ["acme-corp.example", "operator"],
      ["acme.example", null],
    ]);
    expect(after.domains.map((d) => d.verificationToken)).toEqual(before.domains.map((d) => d.verificationToken));
  });

  it("refuses a domain another organization holds, naming it, and writes nothing", async () => {
    const id = uniqueId("fedtaken");
    await importWorkspace(db, federatedDoc(id), { ...opts, env });
    const doc = federatedDoc(id) as ReturnType<typeof federatedDoc> & { organizations: Array<Record<string, unknown>> };
    // Left out of acme's list, the domain stays acme's: import never moves one.
    doc.organizations[0].domains = [{ domain: "acme-corp.example", verified: true }];
    doc.organizations.push({ slug: "globex", name: "Globex", domains: [{ domain: "acme.example" }] });
    const issues = await importWorkspace(db, doc, { ...opts, env }).then(
      () => [],
      (e: WorkspaceFileError) => e.issues,
    );
    expect(issues).toEqual([{ path: "$.organizations[1].domains[0].domain", message: expect.stringContaining("claimed by organization acme") }]);
    expect((await db.select().from(organizations).where(and(eq(organizations.workspaceId, id), eq(organizations.slug, "globex"))))).toEqual([]);
  });

  it("reports an unset secret variable at its JSON path and writes nothing", async () => {
    const id = uniqueId("fedenv");
    const issues = await importWorkspace(db, federatedDoc(id), { ...opts, env: { GOOGLE_SECRET: "x", APPLE_KEY: "not a key" } }).then(
      () => [],
      (e: WorkspaceFileError) => e.issues,
    );
    expect(issues).toEqual([
      { path: "$.social_providers[2].client_secret.env", message: expect.stringContaining("APPLE_KEY must hold Apple's private key") },
      { path: "$.organizations[0].connections[0].client_secret.env", message: expect.stringContaining("ACME_OKTA_SECRET is not set") },
    ]);
    expect(await counts(id)).toMatchObject({ workspaces: 0 });
  });

  it("validates the new sections with JSON paths", async () => {
    const doc = federatedDoc(uniqueId("fedbad")) as unknown as Record<string, any>;
    doc.social_providers[0].tenant = "common";
    doc.social_providers[1].key = "google";
    doc.social_providers[2].team_id = undefined;
    doc.social_providers[3].issuer = "http://corp.example";
    doc.social_providers.push({ key: "x", preset: "facebook", name: "X", client_id: "x" });
    doc.social_providers.push({ key: "y", preset: "oidc", name: "Y", client_id: "y", client_secret: "plain" });
    doc.social_providers.push({ key: "ms", preset: "microsoft", name: "Microsoft", client_id: "m", tenant: "organizations" });
    doc.social_providers.push({ key: "ms2", preset: "microsoft", name: "Microsoft", client_id: "m" });
    doc.applications[0].social_providers = ["google", "nope", "google"];
    doc.applications[2].social_providers = ["google"];
    doc.organizations[0].domains.push({ domain: "co.uk" }, { domain: "ACME.example" });
    doc.organizations[0].connections.push({ name: "Acme Okta", issuer: "ftp://x", client_id: "", default_roles: ["nobody"] });
    const issues = await expectInvalid(doc);
    const at = (path: string) => issues.filter((i) => i.path === path).map((i) => i.message);
    expect(at("$.social_providers[0].tenant")).toEqual(["does not apply to the google preset"]);
    expect(at("$.social_providers[1].key")[0]).toMatch(/duplicate key "google"/);
    expect(at("$.social_providers[2].team_id")).toEqual(["is required for Apple"]);
    expect(at("$.social_providers[3].issuer")[0]).toMatch(/https/);
    expect(at("$.social_providers[4].preset")[0]).toMatch(/must be one of/);
    expect(at("$.social_providers[5].client_secret")[0]).toMatch(/must be an object/);
    expect(at("$.social_providers[6].tenant")[0]).toMatch(/must be one tenant/);
    expect(at("$.social_providers[7].tenant")[0]).toMatch(/is required for Microsoft/);
    expect(at("$.applications[0].social_providers[1]")[0]).toMatch(/unknown social provider "nope"/);
    expect(at("$.applications[0].social_providers[2]")[0]).toMatch(/duplicate/);
    expect(at("$.applications[2].social_providers")[0]).toMatch(/M2M/);
    expect(at("$.organizations[0].domains[2].domain")[0]).toMatch(/public suffix/);
    expect(at("$.organizations[0].domains[3].domain")[0]).toMatch(/duplicate domain "acme.example"/);
    expect(at("$.organizations[0].connections[1].name")[0]).toMatch(/duplicate connection name/);
    expect(at("$.organizations[0].connections[1].issuer")[0]).toMatch(/https/);
    expect(at("$.organizations[0].connections[1].client_id")[0]).toMatch(/blank/);
    expect(at("$.organizations[0].connections[1].default_roles[0]")[0]).toMatch(/unknown role "nobody"/);
  });

  it("sets who a connection admits (verified domains unless the file says any_vouched), exports it, and audits the choice", async () => {
    const id = uniqueId("fedadm");
    await importWorkspace(db, federatedDoc(id), { ...opts, env });
    expect((await rows(id)).connections[0].admission).toBe("verified_domains");
    const admissionEvents = async () =>
      db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, id), eq(auditEvents.type, "workspace.connection_admission_set"))).orderBy(auditEvents.createdAt);
    expect(await admissionEvents()).toEqual([]);

    const doc = federatedDoc(id);
    (doc.organizations[0].connections[0] as Record<string, unknown>).admission = "any_vouched";
    expect((await importWorkspace(db, doc, { ...opts, env })).changes).toBe(1);
    expect((await rows(id)).connections[0].admission).toBe("any_vouched");
    expect((await exportWorkspace(db, id))!.organizations[0].connections[0].admission).toBe("any_vouched");
    const events = await admissionEvents();
    expect(events.map((e) => e.data)).toEqual([{ connection_id: (await rows(id)).connections[0].id, name: "Acme Okta", admission: "any_vouched", previous: "verified_domains", source: "workspace import" }]);

    // Leaving it out of the file means the default again: never a wider rule by omission.
    clock.advance(HOUR);
    await importWorkspace(db, federatedDoc(id), { ...opts, env });
    expect((await rows(id)).connections[0].admission).toBe("verified_domains");
    expect((await admissionEvents()).map((e) => e.data.admission)).toEqual(["any_vouched", "verified_domains"]);

    (doc.organizations[0].connections[0] as Record<string, unknown>).admission = "anyone";
    const issues = await expectInvalid({ ...doc, id: uniqueId("fedadmbad") });
    expect(issues.find((i) => i.path === "$.organizations[0].connections[0].admission")?.message).toMatch(/verified_domains/);
  });
});

describe("organization members the file does not list", () => {
  async function memberRows(id: string) {
    return db
      .select({ email: users.emailNormalized, origin: organizationMembers.origin })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(eq(organizationMembers.workspaceId, id))
      .orderBy(users.emailNormalized);
  }

  /** A user who joined acme outside the file: by signing in (origin sign_in) or in the console (origin console), with a role there. */
  async function joinedOutsideTheFile(id: string, email: string, origin: "sign_in" | "console") {
    const now = clock.now();
    const [org] = await db.select().from(organizations).where(and(eq(organizations.workspaceId, id), eq(organizations.slug, "acme")));
    const [role] = await db.select().from(roles).where(and(eq(roles.workspaceId, id), eq(roles.name, "reader")));
    const userId = `u-${randomBytes(6).toString("hex")}`;
    await db.insert(users).values({ id: userId, workspaceId: id, email, emailNormalized: email, emailVerified: true, status: "active", createdAt: now, updatedAt: now });
    await db.insert(organizationMembers).values({ id: `m-${userId}`, workspaceId: id, organizationId: org.id, userId, origin, createdAt: now });
    await db.insert(userRoles).values({ id: `r-${userId}`, workspaceId: id, userId, roleId: role.id, organizationId: org.id, createdAt: now });
    return userId;
  }

  it("keeps members added by sign-in or in the console and reports them; removes those an import added; the import's memberships say so", async () => {
    const id = uniqueId("keep");
    await importWorkspace(db, fullDoc(id), opts);
    expect(await memberRows(id)).toEqual([{ email: "ada@example.test", origin: "workspace_file" }]);
    const jit = await joinedOutsideTheFile(id, "jit@acme.test", "sign_in");
    await joinedOutsideTheFile(id, "added@acme.test", "console");

    // The same file again: nothing changes, the two members it does not list are kept and reported.
    const again = await importWorkspace(db, fullDoc(id), opts);
    expect(again).toMatchObject({ changes: 0, members: { removed: [], kept: [{ organization: "acme", email: "added@acme.test", origin: "console" }, { organization: "acme", email: "jit@acme.test", origin: "sign_in" }] } });
    expect((await memberRows(id)).map((m) => m.email)).toEqual(["ada@example.test", "added@acme.test", "jit@acme.test"]);
    expect(await db.select().from(userRoles).where(and(eq(userRoles.workspaceId, id), eq(userRoles.userId, jit)))).toHaveLength(1);

    // A member the file added and no longer lists is the file's to remove.
    const doc = fullDoc(id);
    doc.organizations[0].members = [];
    doc.users[0].roles = ["reader"];
    const removed = await importWorkspace(db, doc, opts);
    expect(removed.members.removed).toEqual([{ organization: "acme", email: "Ada@Example.test", origin: "workspace_file" }]);
    expect((await memberRows(id)).map((m) => m.email)).toEqual(["added@acme.test", "jit@acme.test"]);
  });

  it("removes them too when asked to prune, after a dry run that reports the same and writes nothing", async () => {
    const id = uniqueId("prune");
    await importWorkspace(db, fullDoc(id), opts);
    const jit = await joinedOutsideTheFile(id, "jit@acme.test", "sign_in");
    const before = await memberRows(id);

    const dry = await importWorkspace(db, fullDoc(id), { ...opts, pruneMembers: true, dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, changes: 1, members: { removed: [{ organization: "acme", email: "jit@acme.test", origin: "sign_in" }], kept: [] } });
    expect(await memberRows(id)).toEqual(before);

    clock.advance(HOUR);
    const pruned = await importWorkspace(db, fullDoc(id), { ...opts, pruneMembers: true });
    expect(pruned).toMatchObject({ dryRun: false, changes: 1, members: { removed: [{ organization: "acme", email: "jit@acme.test", origin: "sign_in" }], kept: [] } });
    expect((await memberRows(id)).map((m) => m.email)).toEqual(["ada@example.test"]);
    // Leaving the organization ends the roles held in it.
    expect(await db.select().from(userRoles).where(and(eq(userRoles.workspaceId, id), eq(userRoles.userId, jit)))).toEqual([]);
    const [imported] = await db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, id), eq(auditEvents.type, "workspace.imported"))).orderBy(sql`${auditEvents.createdAt} desc`).limit(1);
    expect(imported.data).toMatchObject({ prune_members: true, members_removed: [{ organization: "acme", email: "jit@acme.test", origin: "sign_in" }] });
  });

  it("a dry run of a new workspace creates nothing and shows no generated secret", async () => {
    const id = uniqueId("dry");
    const dry = await importWorkspace(db, fullDoc(id), { ...opts, generateSecrets: true, dryRun: true });
    expect(dry).toMatchObject({ created: true, dryRun: true });
    expect(dry.generatedSecrets).toBeUndefined();
    expect(await exportWorkspace(db, id)).toBeNull();
  });
});
