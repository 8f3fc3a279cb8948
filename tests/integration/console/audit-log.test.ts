/**
 * The console's audit log: readable summaries with the user's email resolved, filters by actor
 * (an operator's email, or system for protocol events) and type (exact or prefix) with keyset
 * paging kept, and the JSON-lines export (same filters; viewer or above; nothing for strangers).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { recordAudit } from "../../../lib/audit/events";
import { AUDIT_EVENT_TYPES, AUDIT_GROUPS } from "../../../lib/audit/catalogue";
import { AUDIT_PAGE_SIZE, auditActors, auditEventLines, auditExportEndpoint, auditFilterFromQuery, listAuditEvents } from "../../../lib/console/audit";
import { runOperation } from "../../../lib/console/operation";
import { operations } from "../../../lib/console/registry";
import { ensureSystemWorkspace } from "../../../lib/console/system";
import { ADA, BOB, standardWorkspace, WEB } from "../../helpers/fixtures";
import { humanTokens } from "../../helpers/lifecycle";
import { basic, call, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { consoleSignIn, createConsoleHarness, createOperator } from "../console-helpers";
import { and, eq } from "drizzle-orm";
import { users } from "../../../db/schema";

let h: Harness;
const W = uniqueWorkspaceId("caudit");
const OTHER = uniqueWorkspaceId("caudit-other");
let alice: string;
let viewer: string;
let stranger: string;
let bobId: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, standardWorkspace(W));
  await seed(h, standardWorkspace(OTHER));
  await ensureSystemWorkspace(h.service);
  await createOperator(h, "alice@operators.test", { [W]: "admin" });
  await createOperator(h, "vera@operators.test", { [W]: "viewer" });
  await createOperator(h, "stranger@operators.test", { [OTHER]: "owner" });
  alice = (await consoleSignIn(h, "alice@operators.test")).token;
  viewer = (await consoleSignIn(h, "vera@operators.test")).token;
  stranger = (await consoleSignIn(h, "stranger@operators.test")).token;
  bobId = (await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, W), eq(users.emailNormalized, BOB.email))))[0].id;
  const adaId = (await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, W), eq(users.emailNormalized, ADA.email))))[0].id;
  // Refresh-token reuse by Bob's application (the event names the grant, not the user), and console changes by Alice.
  const t = await humanTokens(h, W, WEB, BOB);
  const refresh = () => call(h, `/t/${W}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: t.refresh_token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });
  expect((await refresh()).status).toBe(200);
  h.clock.advance(1000);
  expect((await refresh()).status).toBe(400);
  h.clock.advance(1000);
  expect((await runOperation(h.service, alice, W, operations.setApplicationActive, { client_id: "web", active: "false" })).ok).toBe(true);
  h.clock.advance(1000);
  expect((await runOperation(h.service, alice, W, operations.setUserStatus, { user_id: adaId, status: "disabled" })).ok).toBe(true);
  // Protocol events enough for three pages.
  for (let i = 0; i < AUDIT_PAGE_SIZE * 2 + 5; i++) {
    h.clock.advance(1);
    await recordAudit(h.service.db, { workspaceId: W, type: "session.logout", clientId: "spa", subject: bobId, reason: "hosted_logout", at: h.clock.now() });
  }
  await recordAudit(h.service.db, { workspaceId: OTHER, type: "session.logout", reason: "other_workspace", at: h.clock.now() });
});

describe("summaries", () => {
  it("reads each event as one line with actor, subject and outcome", async () => {
    const { entries } = await listAuditEvents(h.service, W, { actor: "alice@operators.test" });
    expect(entries.map((e) => e.summary)).toEqual(["alice@operators.test disabled user ada@example.test", "alice@operators.test disabled application web"]);
    const [reuse] = (await listAuditEvents(h.service, W, { type: "refresh.reuse_detected" })).entries;
    expect(reuse.data).not.toHaveProperty("user_id");
    expect(reuse.summary).toBe("Refresh token reuse detected for bob@example.test at web — grant revoked (possible token theft)");
    expect(reuse.subjectEmail).toBe(BOB.email);
  });

  it("has a summary of its own for every console operation", () => {
    for (const op of Object.values(operations)) expect(AUDIT_EVENT_TYPES).toContain(`console.${op.name}`);
  });
});

describe("filters", () => {
  it("by actor: an operator's email, or system for protocol events; an unknown email matches nothing", async () => {
    const byAlice = await listAuditEvents(h.service, W, { actor: "ALICE@operators.test" });
    expect(byAlice.entries.every((e) => e.actorEmail === "alice@operators.test")).toBe(true);
    expect(byAlice.entries).toHaveLength(2);
    const system = await listAuditEvents(h.service, W, { actor: "system", type: "refresh.*" });
    expect(system.entries.map((e) => e.type)).toEqual(["refresh.reuse_detected"]);
    expect((await listAuditEvents(h.service, W, { actor: "nobody@nowhere.test" })).entries).toEqual([]);
    expect(await auditActors(h.service, W)).toEqual(["alice@operators.test"]);
  });

  it("by type, exact or prefix, with keyset paging through every event once", async () => {
    expect((await listAuditEvents(h.service, W, { type: "console.*" })).entries.map((e) => e.type)).toEqual(["console.user.status_changed", "console.application.status_changed"]);
    expect((await listAuditEvents(h.service, W, { type: "console.user" })).entries).toEqual([]);
    const seen: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await listAuditEvents(h.service, W, { type: "session.logout", actor: "system", before });
      seen.push(...page.entries.map((e) => e.id));
      if (!page.next) break;
      before = page.next;
    }
    expect(seen).toHaveLength(AUDIT_PAGE_SIZE * 2 + 5);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("by the catalogue's group: each of its groups from the page's query, nothing else", async () => {
    for (const group of Object.keys(AUDIT_GROUPS)) expect(auditFilterFromQuery(new URLSearchParams({ group })).group).toBe(group);
    for (const group of ["", "console.*", "hasOwnProperty", "CONSOLE"]) expect(auditFilterFromQuery(new URLSearchParams({ group })).group).toBeUndefined();
    expect((await listAuditEvents(h.service, W, { group: "console" })).entries.map((e) => e.type)).toEqual(["console.user.status_changed", "console.application.status_changed"]);
    expect((await listAuditEvents(h.service, W, { group: "tokens" })).entries.map((e) => e.type)).toEqual(["refresh.reuse_detected"]);
    expect((await listAuditEvents(h.service, W, { group: "account_security" })).entries).toEqual([]);
    expect((await listAuditEvents(h.service, W, { group: "sign_in", actor: "system" })).entries.every((e) => e.type === "session.logout")).toBe(true);
  });
});

describe("export", () => {
  const exportAs = (token: string | null, ws: string, query = "") =>
    auditExportEndpoint(new Request(`https://auth.example.test/console/w/${ws}/audit/export${query}`, { headers: token ? { cookie: `lk_console=${token}` } : {} }), h.service, ws);

  it("downloads the filtered events as JSON lines, one object per line, for a viewer", async () => {
    const res = await exportAs(viewer, W, "?type=console.*");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect(res.headers.get("content-disposition")).toMatch(new RegExp(`^attachment; filename="audit-${W}-[0-9-]+\\.jsonl"$`));
    const text = await res.text();
    expect(text.endsWith("\n")).toBe(true);
    const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(["console.user.status_changed", "console.application.status_changed"]);
    expect(lines[1]).toMatchObject({ summary: "alice@operators.test disabled application web", actor_email: "alice@operators.test", client_id: "web", data: { active: false }, time: expect.stringMatching(/Z$/) });
    expect(Object.keys(lines[0]).sort()).toEqual(["actor", "actor_email", "client_id", "data", "flagged", "id", "ip", "reason", "subject", "subject_email", "summary", "time", "type"]);
  });

  it("exports a group of the catalogue", async () => {
    const lines = (await (await exportAs(viewer, W, "?group=tokens")).text()).trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(["refresh.reuse_detected"]);
  });

  it("exports every matching event across batches, and only this workspace's", async () => {
    const lines = (await (await exportAs(alice, W, "?actor=system")).text()).trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.type === "session.logout")).toHaveLength(AUDIT_PAGE_SIZE * 2 + 5);
    expect(lines.some((l) => l.reason === "other_workspace")).toBe(false);
    // Read in small batches: the same events, in the same order, each once.
    const batched = (await new Response(auditEventLines(h.service, W, { actor: "system" }, 7)).text()).trimEnd().split("\n").map((l) => JSON.parse(l).id);
    expect(batched).toEqual(lines.map((l) => l.id));
  });

  it("gives a stranger, another workspace's operator and no session nothing", async () => {
    const foreign = await exportAs(stranger, W);
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).not.toContain("session.logout");
    expect((await exportAs(null, W)).status).toBe(401);
    expect((await exportAs("lkc_forged.token", W)).status).toBe(401);
    expect((await exportAs(alice, OTHER)).status).toBe(404);
  });
});
