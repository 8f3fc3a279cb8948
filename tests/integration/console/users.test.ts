/**
 * Users in the console: last sign-in and devices, disable (ends sessions, grants and portal
 * sessions; not revived by enabling) and delete (confirmed by the email; everything goes), each
 * audited once with what it ended.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { accessTokens, auditEvents, hostedSessions, users } from "../../../db/schema";
import { runOperation } from "../../../lib/console/operation";
import { operations } from "../../../lib/console/registry";
import { ensureSystemWorkspace } from "../../../lib/console/system";
import { getUser, listUsers, userFootprint, userLastActivity, userSessionsAndGrants } from "../../../lib/console/users";
import { ADA, BOB, SPA, standardWorkspace } from "../../helpers/fixtures";
import { call, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { humanTokens } from "../../helpers/lifecycle";
import { giveRecoveryCodes } from "../../helpers/factors/recovery-codes";
import { consoleSignIn, createConsoleHarness, createOperator } from "../console-helpers";

let h: Harness;
const W = uniqueWorkspaceId("cusers");
const OTHER = uniqueWorkspaceId("cusers-other");
let admin: string;
let viewer: string;
const CAROL = { email: "carol@example.test", password: "carol's long password" };
const DAN = { email: "dan@example.test", password: "dan's long password here" };

beforeAll(async () => {
  h = await createConsoleHarness();
  const doc = standardWorkspace(W);
  doc.users.push({ email: CAROL.email, password: CAROL.password, email_verified: true }, { email: DAN.email, password: DAN.password, email_verified: true });
  await seed(h, doc);
  await seed(h, standardWorkspace(OTHER));
  await ensureSystemWorkspace(h.service);
  await createOperator(h, "users-admin@operators.test", { [W]: "admin", [OTHER]: "viewer" });
  await createOperator(h, "users-viewer@operators.test", { [W]: "viewer" });
  admin = (await consoleSignIn(h, "users-admin@operators.test")).token;
  viewer = (await consoleSignIn(h, "users-viewer@operators.test")).token;
});

const userId = async (email: string, ws = W) => (await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, email))))[0]?.id;
const sessionCheck = (token: string) => call(h, `/t/${W}/oidc/session`, { headers: { authorization: `Bearer ${token}` } });
const refresh = (token: string) => call(h, `/t/${W}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: token, client_id: SPA.client_id } });
const events = (type: string) => h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, type)));
const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1";

describe("last sign-in and devices", () => {
  it("lists the newest sign-in per user, null for users who never signed in", async () => {
    const signedInAt = h.clock.now();
    await humanTokens(h, W, SPA, ADA);
    const page = await listUsers(h.service, W);
    const ada = page.rows.find((r) => r.email === ADA.email)!;
    const bob = page.rows.find((r) => r.email === BOB.email)!;
    expect(ada.lastSignInAt?.getTime()).toBe(signedInAt.getTime());
    expect(bob.lastSignInAt).toBeNull();
    expect(await userLastActivity(h.service, W, bob.id)).toEqual({ signIn: null, seen: null });
  });

  it("keeps the user agent of each session for the device list", async () => {
    const ada = await userId(ADA.email);
    await h.service.db.update(hostedSessions).set({ userAgent: IPHONE }).where(eq(hostedSessions.userId, ada));
    const { sessions } = await userSessionsAndGrants(h.service, W, ada);
    expect(sessions[0]).toMatchObject({ userAgent: IPHONE, live: true });
    await giveRecoveryCodes(h, W, ADA.email);
    const listed = (await listUsers(h.service, W)).rows;
    expect(listed.find((r) => r.id === ada)).toMatchObject({ deviceUserAgents: [IPHONE], factorKinds: ["recovery_code"] });
    expect(listed.find((r) => r.email === BOB.email)).toMatchObject({ deviceUserAgents: [], factorKinds: [] });
  });
});

describe("disable", () => {
  it("ends the user's sessions: the session check answers 401, refresh is invalid_grant, and enabling does not revive them", async () => {
    const t = await humanTokens(h, W, SPA, CAROL);
    const carol = await userId(CAROL.email);
    expect((await sessionCheck(t.access_token)).status).toBe(200);
    expect(await userFootprint(h.service.db, W, carol, h.clock.now())).toEqual({ sessions: 1, grants: 1, portalSessions: 0 });

    await expect(runOperation(h.service, viewer, W, operations.setUserStatus, { user_id: carol, status: "disabled" })).rejects.toMatchObject({ code: "forbidden" });
    expect(await runOperation(h.service, admin, W, operations.setUserStatus, { user_id: carol, status: "disabled" })).toEqual({ ok: true, result: null });
    expect((await sessionCheck(t.access_token)).status).toBe(401);
    const refused = await refresh(t.refresh_token);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toBe("invalid_grant");
    const [event] = await events("console.user.status_changed");
    expect(event).toMatchObject({ subject: CAROL.email, data: { status: "disabled", sessions_ended: 1, grants_ended: 1, portal_sessions_ended: 0 } });
    const [session] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.userId, carol));
    expect(session).toMatchObject({ endReason: "user_disabled" });

    // Disabled again: nothing changes, nothing is recorded.
    expect(await runOperation(h.service, admin, W, operations.setUserStatus, { user_id: carol, status: "disabled" })).toEqual({ ok: true, result: null });
    expect(await events("console.user.status_changed")).toHaveLength(1);

    expect(await runOperation(h.service, admin, W, operations.setUserStatus, { user_id: carol, status: "active" })).toEqual({ ok: true, result: null });
    expect((await sessionCheck(t.access_token)).status).toBe(401);
    expect((await refresh(t.refresh_token)).status).toBe(400);
    // Signing in again works.
    const again = await humanTokens(h, W, SPA, CAROL);
    expect((await sessionCheck(again.access_token)).status).toBe(200);
  });
});

describe("delete", () => {
  it("needs the user's email typed, then removes the user with their sessions, grants and tokens; audited once", async () => {
    const t = await humanTokens(h, W, SPA, DAN);
    const dan = await userId(DAN.email);
    expect(await runOperation(h.service, admin, W, operations.deleteUser, { user_id: dan })).toMatchObject({ ok: false, fieldErrors: { confirm: expect.stringContaining("email") } });
    expect(await runOperation(h.service, admin, W, operations.deleteUser, { user_id: dan, confirm: "someone@else.test" })).toMatchObject({ ok: false });
    expect(await getUser(h.service, W, dan)).not.toBeNull();
    await expect(runOperation(h.service, viewer, W, operations.deleteUser, { user_id: dan, confirm: DAN.email })).rejects.toMatchObject({ code: "forbidden" });

    expect(await runOperation(h.service, admin, W, operations.deleteUser, { user_id: dan, confirm: ` ${DAN.email} ` })).toEqual({ ok: true, result: null });
    expect(await getUser(h.service, W, dan)).toBeNull();
    expect((await sessionCheck(t.access_token)).status).toBe(401);
    expect((await (await refresh(t.refresh_token)).json()).error).toBe("invalid_grant");
    expect(await h.service.db.select().from(accessTokens).where(eq(accessTokens.userId, dan))).toEqual([]);
    expect(await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.userId, dan))).toEqual([]);
    const deleted = await events("console.user.deleted");
    expect(deleted).toHaveLength(1);
    expect(deleted[0]).toMatchObject({ subject: DAN.email, data: { user_id: dan, sessions_ended: 1, grants_ended: 1 } });
    // Gone: a second attempt says so.
    expect(await runOperation(h.service, admin, W, operations.deleteUser, { user_id: dan, confirm: DAN.email })).toMatchObject({ ok: false, formError: expect.stringContaining("no longer exists") });
  });

  it("cannot reach a user of another workspace", async () => {
    const otherAda = await userId(ADA.email, OTHER);
    expect(await runOperation(h.service, admin, W, operations.deleteUser, { user_id: otherAda, confirm: ADA.email })).toMatchObject({ ok: false, formError: expect.stringContaining("no longer exists") });
    await expect(runOperation(h.service, admin, OTHER, operations.deleteUser, { user_id: otherAda, confirm: ADA.email })).rejects.toMatchObject({ code: "forbidden" });
    expect(await userId(ADA.email, OTHER)).toBe(otherAda);
  });
});
