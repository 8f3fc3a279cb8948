/**
 * The console's authority, tested on lib/console directly (the server actions only call
 * runOperation): first-run setup, operator sign-in through the system workspace, per-workspace
 * roles, and the console session's dependence on grant, hosted session and operator status.
 *
 * One file on purpose: the system workspace and "does an operator exist" are service-wide, and on
 * PostgreSQL every test file shares the run's database.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { accessTokens, auditEvents, clients, consoleSessions, grants, hostedSessions, operatorMemberships, users } from "../../db/schema";
import { requireOperator, requireWorkspaceRole } from "../../lib/console/authz";
import { callbackEndpoint, signOutEndpoint, startEndpoint } from "../../lib/console/auth-routes";
import { ConsoleLoginError, endConsoleSession, finishConsoleLogin } from "../../lib/console/login";
import { runOperation } from "../../lib/console/operation";
import { operations } from "../../lib/console/registry";
import { checkSetupToken, completeSetup, issueSetupToken, operatorExists, SETUP_TOKEN_TTL_MS, SetupError } from "../../lib/console/setup";
import { consoleClientSecret, ensureSystemWorkspace, SYSTEM_WORKSPACE_ID } from "../../lib/console/system";
import { canCreateWorkspaces, createWorkspace, listOperatorWorkspaces } from "../../lib/console/workspaces";
import { acceptInvitationAsOperator } from "./console/operators-helpers";
import { listOperators } from "../../lib/operators/memberships";
import { HOUR, MINUTE } from "../../lib/clock";
import { revokeClientSecret } from "../../lib/clients/secrets";
import { sha256Hex } from "../../lib/crypto";
import { contextFor } from "../../lib/server/router";
import { revokeGrant } from "../../lib/oauth/grants/refresh-token";
import { endHostedSession } from "../../lib/authn/hosted-session";
import { ADA, SPA, standardWorkspace } from "../helpers/fixtures";
import { humanTokens } from "../helpers/lifecycle";
import { basic, call, createHarness, Jar, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { consoleCallback, consoleSignIn, createOperator, OPERATOR_PASSWORD, operatorId } from "./console-helpers";

let h: Harness;
const A = uniqueWorkspaceId("ca");
const B = uniqueWorkspaceId("cb");
const FIRST = { email: "first@operators.test", name: "First Operator", password: "first operator password" };

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(A));
  await seed(h, standardWorkspace(B));
  await ensureSystemWorkspace(h.service);
});

const rejectsWith = (promise: Promise<unknown>, code: string) => expect(promise).rejects.toMatchObject({ code });

describe("first-run setup", () => {
  it("creates the system workspace with the console application, idempotently", async () => {
    await ensureSystemWorkspace(h.service);
    const rows = await h.service.db.select().from(clients).where(eq(clients.workspaceId, SYSTEM_WORKSPACE_ID));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      clientId: "console",
      type: "WEB_CONFIDENTIAL",
      redirectUris: ["https://auth.example.test/console/auth/callback"],
      postLogoutRedirectUris: ["https://auth.example.test/console/signed-out"],
    });
    // The secret is kept (encrypted) and stays the same while it is valid.
    expect(await consoleClientSecret(h.service)).toBe(await consoleClientSecret(h.service));
  });

  it("re-syncs the console's redirect URIs when PUBLIC_URL changes", async () => {
    const moved = { ...h.service, config: { ...h.service.config, publicUrl: "https://login.example.test" } };
    await ensureSystemWorkspace(moved);
    const [row] = await h.service.db.select().from(clients).where(eq(clients.workspaceId, SYSTEM_WORKSPACE_ID));
    expect(row.redirectUris).toEqual(["https://login.example.test/console/auth/callback"]);
    await ensureSystemWorkspace(h.service);
    const [back] = await h.service.db.select().from(clients).where(eq(clients.workspaceId, SYSTEM_WORKSPACE_ID));
    expect(back.redirectUris).toEqual(["https://auth.example.test/console/auth/callback"]);
  });

  it("refuses a wrong token and an expired one", async () => {
    expect(await operatorExists(h.service.db)).toBe(false);
    const link = (await issueSetupToken(h.service))!;
    expect(link.url).toBe(`https://auth.example.test/console/setup?token=${link.token}`);
    expect(await checkSetupToken(h.service, link.token)).toBe("valid");
    expect(await checkSetupToken(h.service, link.token + "x")).toBe("invalid");
    await expect(completeSetup(h.service, "wrong-token-wrong-token-wrong-token", FIRST)).rejects.toBeInstanceOf(SetupError);
    // The first operator's password is screened like every operator's (lib/authn/passwords): nothing is created.
    await expect(completeSetup(h.service, link.token, { ...FIRST, password: "123456789012" })).rejects.toMatchObject({ code: "password_common", field: "password" });
    expect(await checkSetupToken(h.service, link.token)).toBe("valid");
    h.clock.advance(SETUP_TOKEN_TTL_MS + 1000);
    expect(await checkSetupToken(h.service, link.token)).toBe("expired");
    await expect(completeSetup(h.service, link.token, FIRST)).rejects.toMatchObject({ state: "expired" });
    expect(await operatorExists(h.service.db)).toBe(false);
  });

  it("a new start replaces the token; a configured one is used as given", async () => {
    const first = (await issueSetupToken(h.service))!;
    const configured = "configured-setup-token-0123456789abcdef";
    const second = (await issueSetupToken(h.service, { token: configured }))!;
    expect(second.token).toBe(configured);
    expect(await checkSetupToken(h.service, first.token)).toBe("invalid");
    expect(await checkSetupToken(h.service, configured)).toBe("valid");
  });

  it("rejects a short password and keeps the token", async () => {
    const link = (await issueSetupToken(h.service))!;
    await expect(completeSetup(h.service, link.token, { ...FIRST, password: "too short" })).rejects.toThrow();
    expect(await checkSetupToken(h.service, link.token)).toBe("valid");
  });

  it("creates the first operator as owner of every workspace and installation operator, once; concurrent attempts yield one", async () => {
    const link = (await issueSetupToken(h.service))!;
    const results = await Promise.allSettled([
      completeSetup(h.service, link.token, FIRST, { ip: "198.51.100.1" }),
      completeSetup(h.service, link.token, FIRST),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const operators = await h.service.db.select().from(users).where(eq(users.workspaceId, SYSTEM_WORKSPACE_ID));
    expect(operators).toHaveLength(1);
    expect(operators[0].passwordHash).toMatch(/^\$argon2id\$/);
    const memberships = await h.service.db.select().from(operatorMemberships).where(eq(operatorMemberships.operatorUserId, operators[0].id));
    expect(memberships.map((m) => [m.workspaceId, m.role]).sort()).toEqual(
      expect.arrayContaining([
        [A, "owner"],
        [B, "owner"],
      ]),
    );
    // Owner of the system workspace: an installation operator, who may create workspaces.
    expect(memberships.filter((m) => m.workspaceId === SYSTEM_WORKSPACE_ID).map((m) => m.role)).toEqual(["owner"]);
  });

  it("refuses once an operator exists, and start-up stops printing a link", async () => {
    expect(await checkSetupToken(h.service, "anything")).toBe("done");
    await expect(completeSetup(h.service, "configured-setup-token-0123456789abcdef", { ...FIRST, email: "late@operators.test" })).rejects.toMatchObject({ state: "done" });
    expect(await issueSetupToken(h.service)).toBeNull();
  });
});

describe("console sign-in through the system workspace", () => {
  it("signs the first operator in and lists their workspaces", async () => {
    const { token } = await consoleSignIn(h, FIRST.email, FIRST.password);
    const operator = await requireOperator(h.service, token);
    expect(operator.email).toBe(FIRST.email);
    const listed = (await listOperatorWorkspaces(h.service, operator.userId)).map((w) => w.id);
    expect(listed).toEqual(expect.arrayContaining([A, B]));
    expect(listed).not.toContain(SYSTEM_WORKSPACE_ID);
    const [session] = await h.service.db.select().from(consoleSessions).where(eq(consoleSessions.operatorUserId, operator.userId));
    expect(session.secretHash).not.toContain(token.split(".")[1]);
    const events = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, SYSTEM_WORKSPACE_ID), eq(auditEvents.type, "console.signed_in")));
    expect(events.at(-1)).toMatchObject({ actor: operator.userId, ip: "203.0.113.7" });
  });

  it("uses a callback once, and only in the browser that started it", async () => {
    const { callback, txCookie } = await consoleCallback(h, FIRST.email, FIRST.password);
    await expect(finishConsoleLogin(h.service, { url: callback, txCookie: txCookie.replace(/\.(.)/, ".x$1") })).rejects.toMatchObject({ code: "expired" });
    await finishConsoleLogin(h.service, { url: callback, txCookie });
    await expect(finishConsoleLogin(h.service, { url: callback, txCookie })).rejects.toBeInstanceOf(ConsoleLoginError);
  });

  it("checks state and the pinned issuer", async () => {
    const wrongState = await consoleCallback(h, FIRST.email, FIRST.password);
    wrongState.callback.searchParams.set("state", "x".repeat(43));
    await expect(finishConsoleLogin(h.service, { url: wrongState.callback, txCookie: wrongState.txCookie })).rejects.toMatchObject({ code: "invalid_callback" });

    const wrongIssuer = await consoleCallback(h, FIRST.email, FIRST.password);
    wrongIssuer.callback.searchParams.set("iss", `https://auth.example.test/t/${A}`);
    await expect(finishConsoleLogin(h.service, { url: wrongIssuer.callback, txCookie: wrongIssuer.txCookie })).rejects.toMatchObject({ code: "invalid_callback" });

    const doubled = await consoleCallback(h, FIRST.email, FIRST.password);
    doubled.callback.searchParams.append("code", "second");
    await expect(finishConsoleLogin(h.service, { url: doubled.callback, txCookie: doubled.txCookie })).rejects.toMatchObject({ code: "invalid_callback" });
  });

  it("a workspace user cannot sign in to the console", async () => {
    await expect(consoleSignIn(h, ADA.email, ADA.password)).rejects.toThrow(/sign-in ended at/);
  });
});

describe("per-workspace roles on every operation", () => {
  let owner: string;
  let viewer: string;
  let admin: string;
  let outsider: string;

  beforeAll(async () => {
    owner = (await consoleSignIn(h, FIRST.email, FIRST.password)).token;
    await createOperator(h, "viewer@operators.test", { [A]: "viewer" });
    await createOperator(h, "admin@operators.test", { [A]: "admin" });
    await createOperator(h, "outsider@operators.test", { [B]: "owner" });
    viewer = (await consoleSignIn(h, "viewer@operators.test")).token;
    admin = (await consoleSignIn(h, "admin@operators.test")).token;
    outsider = (await consoleSignIn(h, "outsider@operators.test")).token;
  });

  const newApp = (clientId: string) => ({
    client_id: clientId,
    name: "Shop",
    kind: "spa",
    redirect_uris: "https://shop.example.test/callback",
    identity_scopes: ["openid", "email"],
    lifetime_days: "90",
  });

  async function appExists(workspaceId: string, clientId: string) {
    const rows = await h.service.db.select().from(clients).where(and(eq(clients.workspaceId, workspaceId), eq(clients.clientId, clientId)));
    return rows.length > 0;
  }

  it("an admin changes the workspace; the change is audited with who and from where", async () => {
    const outcome = await runOperation(h.service, admin, A, operations.createApplication, newApp("shop"), { ip: "192.0.2.10" });
    expect(outcome).toMatchObject({ ok: true });
    expect(await appExists(A, "shop")).toBe(true);
    const [event] = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, A), eq(auditEvents.type, "console.application.created")));
    expect(event).toMatchObject({ actor: await operatorId(h, "admin@operators.test"), ip: "192.0.2.10", subject: "shop", clientId: "shop" });
    expect(event.data).toMatchObject({ operator: "admin@operators.test", role: "admin" });
  });

  it("a viewer can read but cannot change anything", async () => {
    await expect(requireWorkspaceRole(h.service, viewer, A, "viewer")).resolves.toMatchObject({ role: "viewer" });
    await rejectsWith(runOperation(h.service, viewer, A, operations.createApplication, newApp("by-viewer")), "forbidden");
    expect(await appExists(A, "by-viewer")).toBe(false);
    const [ada] = await h.service.db.select().from(users).where(and(eq(users.workspaceId, A), eq(users.emailNormalized, ADA.email)));
    await rejectsWith(runOperation(h.service, viewer, A, operations.setUserStatus, { user_id: ada.id, status: "disabled" }), "forbidden");
    await rejectsWith(runOperation(h.service, viewer, A, operations.rotateSecret, { client_id: "web", overlap_hours: "1" }), "forbidden");
    await rejectsWith(runOperation(h.service, viewer, A, operations.publishKey, {}), "forbidden");
    const [stillActive] = await h.service.db.select({ status: users.status }).from(users).where(eq(users.id, ada.id));
    expect(stillActive.status).toBe("active");
  });

  it("an admin cannot manage operators; an owner can", async () => {
    const input = { email: "new@operators.test", role: "viewer" };
    await rejectsWith(runOperation(h.service, admin, A, operations.inviteOperator, input), "forbidden");
    expect(await runOperation(h.service, owner, A, operations.inviteOperator, input)).toMatchObject({ ok: true, result: { email: "new@operators.test", role: "viewer" } });
  });

  it("an operator of another workspace gets not-found, for reads and changes alike", async () => {
    await rejectsWith(requireWorkspaceRole(h.service, outsider, A, "viewer"), "not_found");
    await rejectsWith(runOperation(h.service, outsider, A, operations.createApplication, newApp("by-outsider")), "not_found");
    expect(await appExists(A, "by-outsider")).toBe(false);
    // Indistinguishable from a workspace that does not exist, and the system workspace is never reachable.
    await rejectsWith(requireWorkspaceRole(h.service, outsider, "no-such-workspace", "viewer"), "not_found");
    await rejectsWith(requireWorkspaceRole(h.service, owner, SYSTEM_WORKSPACE_ID, "viewer"), "not_found");
    await rejectsWith(runOperation(h.service, owner, SYSTEM_WORKSPACE_ID, operations.createUser, { email: "x@y.test" }), "not_found");
  });

  it("no session, or a forged one, is unauthenticated", async () => {
    await rejectsWith(requireOperator(h.service, undefined), "unauthenticated");
    await rejectsWith(requireOperator(h.service, `${owner.split(".")[0]}.forged`), "unauthenticated");
    await rejectsWith(runOperation(h.service, "nonsense", A, operations.createApplication, newApp("x")), "unauthenticated");
  });

  it("validates redirect URIs as SPEC.md says, keeping the problem beside the field", async () => {
    const http = await runOperation(h.service, admin, A, operations.createApplication, { ...newApp("bad1"), redirect_uris: "http://shop.example.test/cb" });
    expect(http).toMatchObject({ ok: false, fieldErrors: { redirect_uris: expect.stringContaining("https") } });
    const fragment = await runOperation(h.service, admin, A, operations.createApplication, { ...newApp("bad2"), redirect_uris: "https://shop.example.test/cb#x" });
    expect(fragment).toMatchObject({ ok: false, fieldErrors: { redirect_uris: expect.stringContaining("fragment") } });
    const loopback = await runOperation(h.service, admin, A, operations.createApplication, { ...newApp("loop"), redirect_uris: "http://127.0.0.1:8080/cb" });
    expect(loopback).toMatchObject({ ok: true });
    const origins = await runOperation(h.service, admin, A, operations.createApplication, {
      ...newApp("conf"),
      kind: "web_confidential",
      allowed_origins: "https://shop.example.test",
    });
    expect(origins).toMatchObject({ ok: false, fieldErrors: { allowed_origins: expect.any(String) } });
    const lifetime = await runOperation(h.service, admin, A, operations.createSecret, { client_id: "web", lifetime_days: "366" });
    expect(lifetime).toMatchObject({ ok: false, fieldErrors: { lifetime_days: expect.any(String) } });
  });

  it("rotation with overlap: both secrets authenticate until the old one expires", async () => {
    const created = await runOperation(h.service, admin, A, operations.createApplication, { client_id: "worker", name: "Worker", kind: "m2m", lifetime_days: "30" });
    if (!created.ok) throw new Error(JSON.stringify(created));
    const oldSecret = created.result.secret!.secret;
    const rotated = await runOperation(h.service, admin, A, operations.rotateSecret, { client_id: "worker", overlap_hours: "2", lifetime_days: "90" });
    if (!rotated.ok) throw new Error(JSON.stringify(rotated));
    const newSecret = rotated.result.secret;
    const introspect = (secret: string) => call(h, `/t/${A}/oauth2/introspect`, { form: { token: "unknown" }, headers: { authorization: basic("worker", secret) } });
    expect((await introspect(oldSecret)).status).toBe(200);
    expect((await introspect(newSecret)).status).toBe(200);
    const rows = await runOperation(h.service, admin, A, operations.expireSecretNow, { client_id: "worker", secret_id: created.result.secret!.id });
    expect(rows).toMatchObject({ ok: true });
    h.clock.advance(1000);
    expect((await introspect(oldSecret)).status).toBe(401);
    expect((await introspect(newSecret)).status).toBe(200);
  });

  it("ending a user's grant or hosted session from the console ends their access", async () => {
    const tokens = await humanTokens(h, A, SPA, ADA);
    const sessionCheck = () => call(h, `/t/${A}/oidc/session`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect((await sessionCheck()).status).toBe(200);
    const [ada] = await h.service.db.select().from(users).where(and(eq(users.workspaceId, A), eq(users.emailNormalized, ADA.email)));
    const [grant] = await h.service.db.select().from(grants).where(and(eq(grants.workspaceId, A), eq(grants.userId, ada.id)));
    await rejectsWith(runOperation(h.service, viewer, A, operations.revokeUserGrant, { user_id: ada.id, grant_id: grant.id }), "forbidden");
    expect(await runOperation(h.service, admin, A, operations.revokeUserGrant, { user_id: ada.id, grant_id: grant.id })).toMatchObject({ ok: true });
    expect((await sessionCheck()).status).toBe(401);

    const again = await humanTokens(h, A, SPA, ADA);
    const [token] = await h.service.db.select().from(accessTokens).where(eq(accessTokens.tokenHash, sha256Hex(again.access_token)));
    const [session] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.id, token.sessionId!));
    expect(await runOperation(h.service, admin, A, operations.endUserSession, { user_id: ada.id, session_id: session.id })).toMatchObject({ ok: true });
    const [ended] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.id, session.id));
    expect(ended.endedAt).not.toBeNull();
    expect((await call(h, `/t/${A}/oidc/session`, { headers: { authorization: `Bearer ${again.access_token}` } })).status).toBe(401);
  });

  it("an owner of A cannot disable an operator account (installation-wide), nor learn of their other workspaces", async () => {
    const outsiderId = await operatorId(h, "outsider@operators.test");
    const invited = await runOperation(h.service, owner, A, operations.inviteOperator, { email: "outsider@operators.test", role: "viewer" });
    if (!invited.ok) throw new Error(JSON.stringify(invited));
    const link = new URL((invited.result as { url: string }).url);
    await acceptInvitationAsOperator(h.service, link.searchParams.get("token")!, outsider);
    // The first operator owns B too and is the installation operator, so use an owner of A alone.
    await createOperator(h, "owner-a@operators.test", { [A]: "owner" });
    const ownerOfA = (await consoleSignIn(h, "owner-a@operators.test")).token;
    const refused = await runOperation(h.service, ownerOfA, A, operations.setOperatorStatus, { operator_user_id: outsiderId, status: "disabled" });
    expect(refused).toMatchObject({ ok: false, formError: expect.stringContaining("Only installation operators") });
    expect(JSON.stringify(refused)).not.toContain("workspaces you do not own");
    await expect(requireOperator(h.service, outsider)).resolves.toBeTruthy();
    const listed = await listOperators(h.service, A, await operatorId(h, "owner-a@operators.test"));
    expect(listed.every((o) => !o.accountManageable)).toBe(true);
  });

  it("a workspace keeps at least one owner", async () => {
    const [m] = await h.service.db.select().from(operatorMemberships).where(and(eq(operatorMemberships.workspaceId, B), eq(operatorMemberships.role, "owner")));
    const owners = await h.service.db.select().from(operatorMemberships).where(and(eq(operatorMemberships.workspaceId, B), eq(operatorMemberships.role, "owner")));
    expect(owners.length).toBe(2); // first operator and outsider
    expect(await runOperation(h.service, outsider, B, operations.removeOperator, { membership_id: m.id })).toMatchObject({ ok: true });
    const [last] = await h.service.db.select().from(operatorMemberships).where(and(eq(operatorMemberships.workspaceId, B), eq(operatorMemberships.role, "owner")));
    const refused = await runOperation(h.service, outsider, B, operations.changeOperatorRole, { membership_id: last.id, role: "viewer" });
    expect(refused).toMatchObject({ ok: false, fieldErrors: { role: expect.stringContaining("at least one owner") } });
  });

  it("only installation operators create workspaces, and the creator owns the new one", async () => {
    await rejectsWith(createWorkspace(h.service, viewer, { id: uniqueWorkspaceId("cv"), name: "By viewer" }), "forbidden");
    // Owning a workspace makes a tenant, not an installation operator.
    await rejectsWith(createWorkspace(h.service, outsider, { id: uniqueWorkspaceId("co"), name: "By an owner of B" }), "forbidden");
    expect(await canCreateWorkspaces(h.service, await operatorId(h, "outsider@operators.test"))).toBe(false);
    const id = uniqueWorkspaceId("cn");
    expect(await createWorkspace(h.service, owner, { id, name: "New" }, { ip: "192.0.2.1" })).toMatchObject({ ok: true });
    await expect(requireWorkspaceRole(h.service, owner, id, "owner")).resolves.toMatchObject({ role: "owner" });
    await rejectsWith(requireWorkspaceRole(h.service, admin, id, "viewer"), "not_found");
    expect(await createWorkspace(h.service, owner, { id: "system", name: "x" })).toMatchObject({ ok: false, fieldErrors: { id: expect.any(String) } });
    expect(await createWorkspace(h.service, owner, { id, name: "Again" })).toMatchObject({ ok: false, fieldErrors: { id: expect.stringContaining("exists") } });
  });
});

describe("console session authority", () => {
  it("disabling an operator ends their console access at once", async () => {
    await createOperator(h, "disable-me@operators.test", { [A]: "admin" });
    const { token } = await consoleSignIn(h, "disable-me@operators.test");
    const owner = (await consoleSignIn(h, FIRST.email, FIRST.password)).token;
    await expect(requireWorkspaceRole(h.service, token, A, "admin")).resolves.toBeTruthy();
    const outcome = await runOperation(h.service, owner, A, operations.setOperatorStatus, { operator_user_id: await operatorId(h, "disable-me@operators.test"), status: "disabled" });
    expect(outcome).toMatchObject({ ok: true });
    await rejectsWith(requireOperator(h.service, token), "unauthenticated");
    await rejectsWith(runOperation(h.service, token, A, operations.createRole, { name: "after-disable" }), "unauthenticated");
    // And they cannot sign in again.
    await expect(consoleSignIn(h, "disable-me@operators.test")).rejects.toThrow();
  });

  it("ends when the operator's grant is revoked", async () => {
    await createOperator(h, "grant@operators.test", { [A]: "viewer" });
    const { token } = await consoleSignIn(h, "grant@operators.test");
    const operator = await requireOperator(h.service, token);
    const system = { id: SYSTEM_WORKSPACE_ID, name: "system" };
    expect(await revokeGrant(contextFor(h.service, system), operator.grantId, "test")).toBe(true);
    await rejectsWith(requireOperator(h.service, token), "unauthenticated");
  });

  it("ends when the console client's secret behind the grant is revoked, and a new secret is made for the next sign-in", async () => {
    await createOperator(h, "secret@operators.test", { [A]: "viewer" });
    const { token } = await consoleSignIn(h, "secret@operators.test");
    const operator = await requireOperator(h.service, token);
    const [grant] = await h.service.db.select({ credentialId: grants.credentialId }).from(grants).where(eq(grants.id, operator.grantId));
    expect(grant.credentialId).toBeTruthy();
    await revokeClientSecret(h.service.db, { workspaceId: SYSTEM_WORKSPACE_ID, clientId: "console", secretId: grant.credentialId!, clock: h.clock });
    await rejectsWith(requireOperator(h.service, token), "unauthenticated");
    const again = await consoleSignIn(h, "secret@operators.test");
    await expect(requireOperator(h.service, again.token)).resolves.toBeTruthy();
  });

  it("ends when the operator's hosted session ends (hosted logout, or ended by an operator)", async () => {
    await createOperator(h, "hosted@operators.test", { [A]: "viewer" });
    const { token } = await consoleSignIn(h, "hosted@operators.test");
    const operator = await requireOperator(h.service, token);
    expect(await endHostedSession(contextFor(h.service, { id: SYSTEM_WORKSPACE_ID, name: "system" }), operator.hostedSessionId, "logout")).toBe(true);
    await rejectsWith(requireWorkspaceRole(h.service, token, A, "viewer"), "unauthenticated");
  });

  it("ends on sign-out, idles out after two hours, and lasts at most twelve", async () => {
    await createOperator(h, "idle@operators.test", { [A]: "viewer" });
    const first = await consoleSignIn(h, "idle@operators.test");
    const { logoutUrl } = await endConsoleSession(h.service, first.token);
    expect(logoutUrl).toBe("https://auth.example.test/t/system/oidc/logout?client_id=console&post_logout_redirect_uri=https%3A%2F%2Fauth.example.test%2Fconsole%2Fsigned-out");
    await rejectsWith(requireOperator(h.service, first.token), "unauthenticated");

    // The hosted session lets the operator back in without a password (same browser).
    const second = await consoleSignIn(h, "idle@operators.test", OPERATOR_PASSWORD, first.jar);
    h.clock.advance(2 * HOUR + MINUTE);
    await rejectsWith(requireOperator(h.service, second.token), "unauthenticated");

    const third = await consoleSignIn(h, "idle@operators.test", OPERATOR_PASSWORD, new Jar());
    for (let i = 0; i < 12; i++) {
      h.clock.advance(HOUR);
      if (i < 11) await expect(requireOperator(h.service, third.token)).resolves.toBeTruthy();
    }
    await rejectsWith(requireOperator(h.service, third.token), "unauthenticated");
  });

  it("the session row keeps only a hash, and each sign-in gets its own session", async () => {
    const rows = await h.service.db.select({ id: consoleSessions.id, hash: consoleSessions.secretHash }).from(consoleSessions);
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    for (const r of rows) expect(r.hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("the console's sign-in routes (lib/console/auth-routes.ts)", () => {
  const signOut = (token: string, headers: Record<string, string>) =>
    signOutEndpoint(new Request("https://auth.example.test/console/auth/sign-out", { method: "POST", headers: { cookie: `lk_console=${token}`, ...headers } }), {
      service: h.service,
      origin: h.service.config.publicUrl,
    });

  it("sign-out refuses a post that is not from the console's own pages, with neither header included, and ends nothing", async () => {
    await createOperator(h, "routes@operators.test", { [A]: "viewer" });
    const { token } = await consoleSignIn(h, "routes@operators.test");
    for (const headers of [{}, { origin: "null" }, { origin: "https://evil.example" }, { origin: "null", "sec-fetch-site": "cross-site" }] as Record<string, string>[]) {
      const res = await signOut(token, headers);
      expect([headers, res.status]).toEqual([headers, 403]);
      expect(await res.text()).toContain("This sign-out was submitted from another site.");
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    await expect(requireOperator(h.service, token)).resolves.toBeTruthy();

    // What a browser sends for the console's own form under no-referrer.
    const res = await signOut(token, { origin: "null", "sec-fetch-site": "same-origin" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("https://auth.example.test/t/system/oidc/logout?client_id=console&post_logout_redirect_uri=https%3A%2F%2Fauth.example.test%2Fconsole%2Fsigned-out");
    expect(res.headers.get("set-cookie")).toMatch(/^lk_console=; Path=\/console; .*Max-Age=0$/);
    await rejectsWith(requireOperator(h.service, token), "unauthenticated");
  });

  it("start sets the browser-bound transaction cookie; the callback shows a failed sign-in as a hosted page and clears it", async () => {
    const start = await startEndpoint(new Request("https://auth.example.test/console/auth/start?next=/console/w/x"), { service: h.service, origin: h.service.config.publicUrl });
    expect(start.status).toBe(303);
    expect(new URL(start.headers.get("location")!).pathname).toBe("/t/system/oauth2/authorize");
    expect(start.headers.get("set-cookie")).toMatch(/^lk_console_tx=[^;]+\.[^;]+; Path=\/console\/auth; /);

    const callback = await callbackEndpoint(new Request("https://auth.example.test/console/auth/callback?code=x&state=y&iss=z"), { service: h.service, origin: h.service.config.publicUrl });
    expect(callback.status).toBe(400);
    const body = await callback.text();
    expect(body).toContain("<h1>Console sign-in failed</h1>");
    expect(body).toContain("<p>This sign-in has expired or was started in another browser. Start again from /console.</p>");
    expect(body).toContain("Error code: <code>expired</code>");
    expect(callback.headers.get("set-cookie")).toMatch(/^lk_console_tx=; Path=\/console\/auth; .*Max-Age=0$/);
  });
});
