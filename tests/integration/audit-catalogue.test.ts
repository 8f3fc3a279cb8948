/**
 * What real endpoints write is what the audit catalogue (lib/audit/catalogue.ts) declares: an
 * operator's sign-in to the console, a workspace file's import, a failed hosted sign-in,
 * refresh-token reuse, a revocation request. Every console operation is checked the same way in console/audit-once.test.ts, a factor
 * added in the portal in account-security/credentials.test.ts.
 */
import { and, desc, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents } from "../../db/schema";
import { ensureSystemWorkspace, SYSTEM_WORKSPACE_ID } from "../../lib/console/system";
import { auditCatalogueMismatches } from "../helpers/audit";
import { ADA, BOB, SPA, standardWorkspace, WEB } from "../helpers/fixtures";
import { humanTokens } from "../helpers/lifecycle";
import { basic, call, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { consoleSignIn, createConsoleHarness, createOperator } from "./console-helpers";

let h: Harness;
const W = uniqueWorkspaceId("audit-cat");

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, standardWorkspace(W));
  await ensureSystemWorkspace(h.service);
});

async function latest(workspaceId: string, type: string) {
  const [row] = await h.service.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.workspaceId, workspaceId), eq(auditEvents.type, type)))
    .orderBy(desc(auditEvents.createdAt))
    .limit(1);
  expect(row, type).toBeDefined();
  return row;
}

const refresh = (token: string) => call(h, `/t/${W}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });

describe("events written through real endpoints carry what the catalogue declares", () => {
  it("an operator's sign-in to the console", async () => {
    await createOperator(h, "cat-op@operators.test", { [W]: "admin" });
    await consoleSignIn(h, "cat-op@operators.test");
    const row = await latest(SYSTEM_WORKSPACE_ID, "console.signed_in");
    expect(row.data).toHaveProperty("console_session");
    expect(auditCatalogueMismatches(row)).toEqual([]);
  });

  it("a workspace file's import (written apart from recordAudit)", async () => {
    const row = await latest(W, "workspace.imported");
    expect(row.data).toMatchObject({ created: true });
    expect(auditCatalogueMismatches(row)).toEqual([]);
  });

  it("a failed hosted sign-in, for an account and for an unknown address", async () => {
    await expect(signIn(h, W, { ...SPA, email: ADA.email, password: "not the password 123" })).rejects.toThrow();
    const known = await latest(W, "sign_in.failed");
    expect(known).toMatchObject({ reason: "wrong_password", data: expect.objectContaining({ method: "password" }) });
    expect(auditCatalogueMismatches(known)).toEqual([]);
    h.clock.advance(1000);
    await expect(signIn(h, W, { ...SPA, email: "nobody@example.test", password: "not the password 123" })).rejects.toThrow();
    const unknown = await latest(W, "sign_in.failed");
    expect(unknown).toMatchObject({ subject: null, reason: "unknown_account" });
    expect(auditCatalogueMismatches(unknown)).toEqual([]);
  });

  it("refresh-token reuse, the security warning", async () => {
    const t = await humanTokens(h, W, WEB, BOB);
    expect((await refresh(t.refresh_token)).status).toBe(200);
    h.clock.advance(1000);
    expect((await refresh(t.refresh_token)).status).toBe(400);
    const row = await latest(W, "refresh.reuse_detected");
    expect(row).toMatchObject({ flagged: "possible_token_theft", clientId: WEB.client_id });
    expect(auditCatalogueMismatches(row)).toEqual([]);
  });

  it("a grant ended by the application's revocation request", async () => {
    h.clock.advance(1000);
    const t = await humanTokens(h, W, WEB, ADA);
    const res = await call(h, `/t/${W}/oauth2/revoke`, { form: { token: t.refresh_token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });
    expect(res.status).toBe(200);
    const row = await latest(W, "grant.revoked");
    expect(row).toMatchObject({ reason: "revocation_endpoint", data: expect.objectContaining({ token_type: "refresh_token" }) });
    expect(auditCatalogueMismatches(row)).toEqual([]);
  });
});

describe("the check", () => {
  const row = { type: "sign_in.failed", subject: "u1", clientId: null, reason: "wrong_password", flagged: null, data: { method: "password" } };

  it("names what the catalogue does not declare: a type, a key, a key's type, a missing key, a field", () => {
    expect(auditCatalogueMismatches(row)).toEqual([]);
    expect(auditCatalogueMismatches({ ...row, type: "sign_in.failed_twice" })).toEqual(["sign_in.failed_twice: not in the catalogue"]);
    expect(auditCatalogueMismatches({ ...row, data: { method: "password", email: "ada@example.test" } })).toEqual(["sign_in.failed: data.email is not declared"]);
    expect(auditCatalogueMismatches({ ...row, data: { method: 1 } })).toEqual(["sign_in.failed: data.method is 1, declared string"]);
    expect(auditCatalogueMismatches({ ...row, data: {} })).toEqual(["sign_in.failed: data.method is missing"]);
    expect(auditCatalogueMismatches({ ...row, clientId: "web", flagged: "possible_token_theft" })).toEqual([
      "sign_in.failed: carries a client_id it does not declare",
      "sign_in.failed: flagged possible_token_theft is not declared",
    ]);
    expect(auditCatalogueMismatches({ ...row, reason: "guessed" })).toEqual(["sign_in.failed: reason guessed is not declared"]);
  });

  it("checks a console change's folded effects too", () => {
    const change = { type: "console.user.role_assigned", subject: "ada@example.test", clientId: null, reason: null, flagged: null };
    const data = { operator: "alice@operators.test", role: "admin", user_id: "u1", organization: null };
    expect(auditCatalogueMismatches({ ...change, data: { ...data, role: "reader", effects: [{ type: "authz.user_role.assigned", data: { user_id: "u1", role: "reader", organization: null } }] } })).toEqual([]);
    expect(auditCatalogueMismatches({ ...change, data: { ...data, role: "reader", effects: [{ type: "authz.user_role.assigned", data: { user_id: "u1" } }] } })).toEqual([
      "effect of console.user.role_assigned: authz.user_role.assigned: data.role is missing",
    ]);
  });
});
