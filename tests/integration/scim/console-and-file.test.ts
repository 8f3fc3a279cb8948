/**
 * An organization's directory in the console (lib/organizations/scim/console.ts: turned on with its
 * rules, a token issued once and revoked, refused to viewers, audited) and in the workspace file
 * (`scim_directories`: settings and group mappings by name, never a token; export and import again
 * change nothing).
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, scimDirectories, scimTokens } from "../../../db/schema";
import { runOperation } from "../../../lib/console/operation";
import { ensureSystemWorkspace } from "../../../lib/console/system";
import { issueScimToken, readGroupRoles, revokeScimToken, saveDirectorySettings } from "../../../lib/organizations/scim/console";
import { exportWorkspace } from "../../../lib/workspaces/file";
import { validateWorkspaceDocument } from "../../../lib/workspaces/document";
import { WorkspaceFileError } from "../../../lib/surfaces/workspace-file";
import { ACME, GLOBEX } from "../../helpers/fixtures";
import { uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { connectionIdOf, organizationIdOf, seedWithSecrets } from "../../helpers/federation/setup";
import { consoleSignIn, createConsoleHarness, createOperator } from "../console-helpers";
import { json, scimClient, seedScimWorkspace } from "./helpers";

let h: Harness;
const ws = uniqueWorkspaceId("scimc");
let ids: Awaited<ReturnType<typeof seedScimWorkspace>>;
let admin: string;
let viewer: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  ids = await seedScimWorkspace(h, ws);
  await ensureSystemWorkspace(h.service);
  await createOperator(h, "admin@scim.test", { [ws]: "admin" });
  await createOperator(h, "viewer@scim.test", { [ws]: "viewer" });
  admin = (await consoleSignIn(h, "admin@scim.test")).token;
  viewer = (await consoleSignIn(h, "viewer@scim.test")).token;
});

const settings = (more: Record<string, unknown> = {}) => ({ organization_id: ids.acme, enabled: "on", connection_id: ids.connection, subject_attribute: "externalId", group_roles: "Engineering: writer\nIT Admins: admin, reader", ...more });

describe("the console", () => {
  it("turns the directory on with its rules, issues a token shown once that works at once, and revokes it; every change audited", async () => {
    expect(await runOperation(h.service, admin, ws, saveDirectorySettings, settings())).toMatchObject({ ok: true });
    const [directory] = await h.service.db.select().from(scimDirectories).where(eq(scimDirectories.organizationId, ids.acme));
    expect(directory).toMatchObject({ enabled: true, connectionId: ids.connection, subjectAttribute: "externalId", localSignIn: false, anyDomain: false });
    expect(directory.groupRoles.map((m) => m.group)).toEqual(["Engineering", "IT Admins"]);
    const issued = await runOperation(h.service, admin, ws, issueScimToken, { organization_id: ids.acme, overlap_hours: "0" });
    if (!issued.ok) throw new Error(JSON.stringify(issued));
    const token = (issued.result as { token: string; id: string }).token;
    expect(token).toMatch(/^lks_scim_/);
    const scim = scimClient(h, ws, ACME, token);
    expect((await scim("GET", "/Users")).status).toBe(200);
    expect(await runOperation(h.service, admin, ws, revokeScimToken, { organization_id: ids.acme, token_id: (issued.result as { id: string }).id })).toMatchObject({ ok: true });
    expect((await scim("GET", "/Users")).status).toBe(401);
    const types = (await h.service.db.select({ type: auditEvents.type, data: auditEvents.data }).from(auditEvents).where(eq(auditEvents.workspaceId, ws))).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["console.organization.directory_saved", "console.organization.directory_token_issued", "console.organization.directory_token_revoked"]));
    // The token itself is in no event and no row.
    const everything = JSON.stringify(await h.service.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, ws))) + JSON.stringify(await h.service.db.select().from(scimTokens));
    expect(everything).not.toContain(token);
  });

  it("refuses a viewer, a connection of another organization, an unknown role, and a token before the directory exists", async () => {
    await expect(runOperation(h.service, viewer, ws, saveDirectorySettings, settings())).rejects.toThrow();
    const otherConnection = await runOperation(h.service, admin, ws, saveDirectorySettings, settings({ organization_id: ids.globex }));
    expect(otherConnection).toMatchObject({ ok: false, fieldErrors: { connection_id: expect.stringContaining("this organization's connections") } });
    const badRole = await runOperation(h.service, admin, ws, saveDirectorySettings, settings({ group_roles: "Engineering: nobody" }));
    expect(badRole).toMatchObject({ ok: false, fieldErrors: { group_roles: expect.stringContaining("no role named nobody") } });
    expect(await runOperation(h.service, admin, ws, issueScimToken, { organization_id: ids.globex, overlap_hours: "0" })).toMatchObject({ ok: false, formError: "Turn provisioning on first" });
  });

  it("reads the group mapping as lines of a group, a colon and role names", () => {
    const known = [
      { id: "r1", name: "writer" },
      { id: "r2", name: "Admin" },
    ];
    expect(readGroupRoles("Eng: writer\n\n  Ops: admin, writer  ", known)).toEqual([
      { group: "Eng", roleIds: ["r1"] },
      { group: "Ops", roleIds: ["r2", "r1"] },
    ]);
    expect(() => readGroupRoles("Eng writer", known)).toThrow();
    expect(() => readGroupRoles("Eng: writer\neng: admin", known)).toThrow(/twice/);
  });
});

describe("the workspace file", () => {
  it("exports each directory's settings and mappings by name, without a token; importing it elsewhere gives the same directory", async () => {
    const doc = (await exportWorkspace(h.service.db, ws))!;
    expect(doc.scim_directories).toEqual([
      {
        organization: ACME,
        enabled: true,
        connection: "Acme IdP",
        subject_attribute: "externalId",
        local_sign_in: false,
        any_domain: false,
        group_roles: [
          { group: "Engineering", roles: ["writer"] },
          { group: "IT Admins", roles: ["admin", "reader"] },
        ],
      },
    ]);
    expect(JSON.stringify(doc)).not.toContain("lks_scim_");
    const copy = uniqueWorkspaceId("scimcopy");
    await seedWithSecrets(h, { ...doc, id: copy }, { ACME_SECRET: "x".repeat(32) });
    const copied = (await exportWorkspace(h.service.db, copy))!;
    expect(copied.scim_directories).toEqual(doc.scim_directories);
    const [directory] = await h.service.db
      .select()
      .from(scimDirectories)
      .where(and(eq(scimDirectories.workspaceId, copy), eq(scimDirectories.organizationId, await organizationIdOf(h, copy, ACME))));
    expect(directory.connectionId).toBe(await connectionIdOf(h, copy, ACME, "Acme IdP"));
  });

  it("refuses an unknown organization, connection or role, and a second directory of one organization, naming where", () => {
    const doc = {
      id: "x",
      name: "X",
      roles: [{ name: "writer" }],
      organizations: [{ slug: GLOBEX, name: "Globex", connections: [] }],
      scim_directories: [
        { organization: "nowhere" },
        { organization: GLOBEX, connection: "Nope", group_roles: [{ group: "Eng", roles: ["writer", "ghost"] }] },
        { organization: GLOBEX },
      ],
    };
    let paths: string[] = [];
    try {
      validateWorkspaceDocument(doc);
    } catch (error) {
      paths = (error as WorkspaceFileError).issues.map((i) => `${i.path}: ${i.message}`);
    }
    expect(paths).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\$\.scim_directories\[0\]\.organization: unknown organization/),
        expect.stringMatching(/^\$\.scim_directories\[1\]\.connection: unknown connection/),
        expect.stringMatching(/^\$\.scim_directories\[1\]\.group_roles\[0\]\.roles\[1\]: unknown role "ghost"/),
        expect.stringMatching(/^\$\.scim_directories\[2\]\.organization: duplicate directory/),
      ]),
    );
  });

  it("a directory the file names is changed to what it says; one it leaves out keeps its settings", async () => {
    await runOperation(h.service, admin, ws, saveDirectorySettings, { organization_id: ids.globex, enabled: "on", subject_attribute: "userName", any_domain: "on", group_roles: "" });
    const doc = (await exportWorkspace(h.service.db, ws))!;
    const file = { ...doc, scim_directories: doc.scim_directories.filter((d) => d.organization === ACME).map((d) => ({ ...d, local_sign_in: true })) };
    await seedWithSecrets(h, file, { ACME_SECRET: "x".repeat(32) });
    const rows = await h.service.db.select().from(scimDirectories).where(eq(scimDirectories.workspaceId, ws));
    expect(rows.find((r) => r.organizationId === ids.acme)?.localSignIn).toBe(true);
    expect(rows.find((r) => r.organizationId === ids.globex)).toMatchObject({ subjectAttribute: "userName", anyDomain: true });
    // Unchanged settings import as no change at all.
    const again = (await exportWorkspace(h.service.db, ws))!;
    expect(again.scim_directories).toEqual([...file.scim_directories, ...doc.scim_directories.filter((d) => d.organization === GLOBEX)].sort((a, b) => a.organization.localeCompare(b.organization)));
    const { token } = await (async () => {
      const issued = await runOperation(h.service, admin, ws, issueScimToken, { organization_id: ids.globex, overlap_hours: "0" });
      return issued.ok ? (issued.result as { token: string }) : { token: "" };
    })();
    expect((await json(await scimClient(h, ws, GLOBEX, token)("GET", "/ServiceProviderConfig"))).patch).toEqual({ supported: true });
  });
});
