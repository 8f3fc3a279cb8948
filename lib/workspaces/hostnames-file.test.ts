import { randomBytes } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database, DatabaseHandle } from "../../db/client";
import { openTestDatabase } from "../../tests/setup/test-database";
import { auditEvents, workspaceHostnames, workspaces } from "../../db/schema";
import type { Clock } from "../clock";
import { exportWorkspace, importWorkspace, WorkspaceFileError, type WorkspaceFileIssue } from "./file";

const clock: Clock = { now: () => new Date("2026-11-21T12:00:00Z") };
const opts = { clock, masterKey: randomBytes(32) };
let handle: DatabaseHandle;
let db: Database;

beforeAll(async () => {
  handle = await openTestDatabase();
  db = handle.db;
});
afterAll(async () => {
  await handle?.close();
});

const uniqueId = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;
const doc = (id: string, extra: Record<string, unknown>) => ({ id, name: "Hostnames", ...extra });

async function problems(input: unknown, options: Partial<typeof opts> & { actor?: string } = {}): Promise<string[]> {
  try {
    await importWorkspace(db, input, { ...opts, ...options });
  } catch (error) {
    if (error instanceof WorkspaceFileError) return error.issues.map((i: WorkspaceFileIssue) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

const rows = (id: string) => db.select().from(workspaceHostnames).where(eq(workspaceHostnames.workspaceId, id));

describe("the workspace file's hostnames", () => {
  it("adds hostnames, verifies on the operator's word (audited), sets the primary and related origins, and exports them as imported", async () => {
    const id = uniqueId("hosts");
    const file = doc(id, {
      hostnames: [{ hostname: "Login.Example-Hosts.test.", verified: true, primary: true }, { hostname: "pending.example-hosts.test" }],
      webauthn_related_origins: true,
    });
    await importWorkspace(db, file, opts);
    const stored = (await rows(id)).sort((a, b) => a.hostname.localeCompare(b.hostname));
    expect(stored.map((r) => [r.hostname, r.verificationMethod, r.verifiedAt !== null, r.primary])).toEqual([
      ["login.example-hosts.test", "operator", true, true],
      ["pending.example-hosts.test", null, false, false],
    ]);
    const [workspace] = await db.select().from(workspaces).where(eq(workspaces.id, id));
    expect(workspace!.relatedOrigins).toBe(true);
    const events = await db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, id), eq(auditEvents.type, "workspace.hostname_verified")));
    expect(events.map((e) => [e.subject, e.data])).toEqual([
      ["login.example-hosts.test", { hostname: "login.example-hosts.test", hostname_id: stored[0]!.id, method: "operator", source: "workspace import" }],
    ]);
    const exported = (await exportWorkspace(db, id))!;
    expect(exported.hostnames).toEqual([{ hostname: "login.example-hosts.test", verified: true, primary: true }, { hostname: "pending.example-hosts.test" }]);
    expect(exported.webauthn_related_origins).toBe(true);
    // The export imports back unchanged.
    expect((await importWorkspace(db, exported, opts)).changes).toBe(0);
  });

  it("never removes nor unverifies a hostname the file leaves out or lists unverified", async () => {
    const id = uniqueId("hosts");
    await importWorkspace(db, doc(id, { hostnames: [{ hostname: "keep.example-hosts.test", verified: true }] }), opts);
    await importWorkspace(db, doc(id, { hostnames: [{ hostname: "keep.example-hosts.test", verified: false }] }), opts);
    await importWorkspace(db, doc(id, {}), opts);
    expect((await rows(id)).map((r) => [r.hostname, r.verifiedAt !== null])).toEqual([["keep.example-hosts.test", true]]);
  });

  it("refuses malformed, duplicate and doubly primary hostnames, naming each", async () => {
    const id = uniqueId("hosts");
    expect(
      await problems(
        doc(id, {
          hostnames: [
            { hostname: "https://login.example.test" },
            { hostname: "192.0.2.1" },
            { hostname: "a.example-hosts.test", primary: true, verified: true },
            { hostname: "A.example-hosts.test", primary: true },
            { hostname: "com" },
          ],
        }),
      ),
    ).toEqual([
      expect.stringMatching(/^\$\.hostnames\[0\]\.hostname: .*is not a hostname/),
      expect.stringMatching(/^\$\.hostnames\[1\]\.hostname: .*address/),
      expect.stringMatching(/^\$\.hostnames\[3\]\.hostname: duplicate hostname "a\.example-hosts\.test"/),
      expect.stringMatching(/^\$\.hostnames\[3\]\.primary: only one hostname can be primary/),
      expect.stringMatching(/^\$\.hostnames\[4\]\.hostname: .*top-level/),
    ]);
    expect(await rows(id)).toEqual([]);
  });

  it("refuses a primary that is not verified, the operator's word from anyone but the operator, and a hostname verified for another workspace", async () => {
    const id = uniqueId("hosts");
    expect(await problems(doc(id, { hostnames: [{ hostname: "p.example-hosts.test", primary: true }] }))).toEqual([
      "$.hostnames[0].primary: a hostname must be verified before it can be primary",
    ]);
    expect(await problems(doc(id, { hostnames: [{ hostname: "p.example-hosts.test", verified: true }] }), { actor: "operator-user" })).toEqual([
      expect.stringMatching(/^\$\.hostnames\[0\]\.verified: can be set only by the installation's operator/),
    ]);
    const owner = uniqueId("owner");
    await importWorkspace(db, doc(owner, { hostnames: [{ hostname: "owned.example-hosts.test", verified: true }] }), opts);
    expect(await problems(doc(id, { hostnames: [{ hostname: "owned.example-hosts.test" }] }))).toEqual([
      "$.hostnames[0].hostname: owned.example-hosts.test is verified for another workspace",
    ]);
    // Nothing of the refused imports was written.
    expect(await rows(id)).toEqual([]);
  });
});
