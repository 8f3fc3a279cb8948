/**
 * The device authorization grant (RFC 8628, lib/oauth/device-authorization): issuance, the switch
 * per application, polling (pending, slow_down, denied, expired), the tokens an approval yields and
 * how they live, the device code used once, the browser binding, and the approval racing polls.
 */
import { and, eq } from "drizzle-orm";
import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, deviceAuthorizations, grants } from "../../../db/schema";
import { MINUTE, SECOND } from "../../../lib/clock";
import { sha256Hex } from "../../../lib/crypto";
import { MINIMAL, M2M } from "../../helpers/fixtures";
import { basic, call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import {
  ADA,
  API,
  decideOnPage,
  deviceAuthorization,
  deviceWorkspace,
  enterCode,
  errorOf,
  pageId,
  poll,
  rowOf,
  signedInBrowser,
  SPA,
  startDevice,
  userDecides,
  viewOf,
  WEB,
} from "./device-helpers";

let h: Harness;
const ws = uniqueWorkspaceId("device");

beforeAll(async () => {
  h = await createHarness();
  await seed(h, deviceWorkspace(ws));
});

const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

describe("the device authorization endpoint", () => {
  it("issues a device code and a user code, with where to enter it, for at most 10 minutes, polled every 5 seconds", async () => {
    const grant = await startDevice(h, ws);
    expect(grant.user_code).toMatch(USER_CODE);
    expect(grant.verification_uri).toBe(`${PUBLIC_URL}/t/${ws}/device`);
    expect(grant.verification_uri_complete).toBe(`${PUBLIC_URL}/t/${ws}/device?user_code=${grant.user_code}`);
    expect(grant.expires_in).toBeLessThanOrEqual(600);
    expect(grant.interval).toBe(5);
  });

  it("stores only hashes of the codes", async () => {
    const grant = await startDevice(h, ws);
    const [row] = await h.service.db.select().from(deviceAuthorizations).where(eq(deviceAuthorizations.deviceCodeHash, sha256Hex(grant.device_code)));
    expect(row).toBeDefined();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(grant.device_code);
    expect(stored).not.toContain(grant.user_code.replace("-", ""));
    expect(stored).not.toContain(grant.user_code);
  });

  it("authenticates a confidential client with HTTP Basic, as the token endpoint does", async () => {
    const ok = await deviceAuthorization(h, ws, { scope: "openid" }, { authorization: basic(WEB.client_id, WEB.secret) });
    expect(ok.status).toBe(200);
    const wrong = await deviceAuthorization(h, ws, { scope: "openid" }, { authorization: basic(WEB.client_id, "not-the-secret") });
    expect(wrong.status).toBe(401);
    expect(await errorOf(wrong)).toBe("invalid_client");
    const bodySecret = await deviceAuthorization(h, ws, { client_id: WEB.client_id, client_secret: WEB.secret, scope: "openid" });
    expect(bodySecret.status).toBe(400);
  });

  it("answers unauthorized_client to an application that did not switch the grant on, and to a machine client", async () => {
    const minimal = await deviceAuthorization(h, ws, { client_id: MINIMAL.client_id, scope: "openid" });
    expect(minimal.status).toBe(400);
    expect(await errorOf(minimal)).toBe("unauthorized_client");
    const m2m = await deviceAuthorization(h, ws, { scope: "openid" }, { authorization: basic(M2M.client_id, M2M.secret) });
    expect(m2m.status).toBe(400);
    expect(await errorOf(m2m)).toBe("unauthorized_client");
  });

  it("applies the authorization request's scope rule: openid, registered identity scopes, permissions only with a granted resource", async () => {
    const cases: [Record<string, string>, number][] = [
      [{ scope: "email" }, 400],
      [{ scope: "openid read:things" }, 400],
      [{ scope: "openid read:things", resource: "https://unknown.example.test" }, 400],
      [{ scope: "openid admin:things", resource: API }, 400],
      [{ scope: "openid openid" }, 400],
      [{ scope: "openid read:things", resource: API }, 200],
    ];
    for (const [form, status] of cases) {
      const res = await deviceAuthorization(h, ws, { client_id: SPA.client_id, ...form });
      expect(res.status, JSON.stringify(form)).toBe(status);
      if (status === 400) expect(await errorOf(res)).toBe("invalid_scope");
    }
    const minimalProfile = await deviceAuthorization(h, ws, { client_id: MINIMAL.client_id, scope: "openid profile" });
    expect(await errorOf(minimalProfile)).toBe("unauthorized_client");
  });

  it("refuses a parameter it does not know", async () => {
    const res = await deviceAuthorization(h, ws, { client_id: SPA.client_id, scope: "openid", redirect_uri: SPA.redirect_uri });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toBe("invalid_request");
  });

  it("is advertised by discovery, with the grant type", async () => {
    const doc = (await (await call(h, `/t/${ws}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc.device_authorization_endpoint).toBe(`${PUBLIC_URL}/t/${ws}/oauth2/device_authorization`);
    expect(doc.grant_types_supported).toContain("urn:ietf:params:oauth:grant-type:device_code");
  });
});

describe("polling", () => {
  it("answers authorization_pending while the user has not decided", async () => {
    const grant = await startDevice(h, ws);
    const res = await poll(h, ws, grant.device_code);
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toBe("authorization_pending");
  });

  it("answers slow_down to a poll before the interval and raises that device code's interval by 5 seconds, remembered", async () => {
    const grant = await startDevice(h, ws);
    expect(await errorOf(await poll(h, ws, grant.device_code))).toBe("authorization_pending");
    h.clock.advance(1 * SECOND);
    expect(await errorOf(await poll(h, ws, grant.device_code))).toBe("slow_down");
    const [row] = await h.service.db.select().from(deviceAuthorizations).where(eq(deviceAuthorizations.deviceCodeHash, sha256Hex(grant.device_code)));
    expect(row.intervalSeconds).toBe(10);
    // 6 seconds is enough under the first interval, not under the raised one.
    h.clock.advance(6 * SECOND);
    expect(await errorOf(await poll(h, ws, grant.device_code))).toBe("slow_down");
    h.clock.advance(15 * SECOND);
    expect(await errorOf(await poll(h, ws, grant.device_code))).toBe("authorization_pending");
    const [after] = await h.service.db.select().from(deviceAuthorizations).where(eq(deviceAuthorizations.id, row.id));
    expect(after.intervalSeconds).toBe(15);
  });

  it("answers access_denied once the user denied, and records the denial", async () => {
    const grant = await startDevice(h, ws);
    const { id } = await userDecides(h, ws, grant.user_code, "deny");
    const res = await poll(h, ws, grant.device_code);
    expect(await errorOf(res)).toBe("access_denied");
    const events = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "device_authorization.denied")));
    expect(events.some((e) => (e.data as { device_authorization?: string }).device_authorization === id)).toBe(true);
  });

  it("answers expired_token after 10 minutes, approved or not, and the page no longer takes the code", async () => {
    const pending = await startDevice(h, ws);
    const approved = await startDevice(h, ws);
    const jar = await signedInBrowser(h, ws);
    await userDecides(h, ws, approved.user_code, "approve", jar);
    h.clock.advance(10 * MINUTE + SECOND);
    expect(await errorOf(await poll(h, ws, pending.device_code))).toBe("expired_token");
    expect(await errorOf(await poll(h, ws, approved.device_code))).toBe("expired_token");
    const late = await enterCode(h, ws, new Jar(), pending.user_code);
    expect(new URL(late.headers.get("location")!, PUBLIC_URL).searchParams.get("error")).toBe("invalid_code");
  });

  it("answers invalid_grant to an unknown device code and to another client's", async () => {
    expect(await errorOf(await poll(h, ws, "lkd_not-a-device-code"))).toBe("invalid_grant");
    const grant = await startDevice(h, ws);
    const other = await poll(h, ws, grant.device_code, WEB);
    expect(await errorOf(other)).toBe("invalid_grant");
  });

  it("refuses a parameter the grant does not take, and a missing device code", async () => {
    const grant = await startDevice(h, ws);
    const extra = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: grant.device_code, client_id: SPA.client_id, scope: "openid" } });
    expect(await errorOf(extra)).toBe("invalid_request");
    const missing = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "urn:ietf:params:oauth:grant-type:device_code", client_id: SPA.client_id } });
    expect(await errorOf(missing)).toBe("invalid_request");
  });

  it("answers unauthorized_client at the token endpoint to an application without the switch", async () => {
    const res = await poll(h, ws, "lkd_anything", { client_id: MINIMAL.client_id });
    expect(await errorOf(res)).toBe("unauthorized_client");
  });
});

describe("after approval", () => {
  it("issues the code flow's tokens: they work at UserInfo and the session check, refresh rotates with reuse detection, and the grant records the approval", async () => {
    const grant = await startDevice(h, ws);
    const { id } = await userDecides(h, ws, grant.user_code, "approve");
    const res = await poll(h, ws, grant.device_code);
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as { access_token: string; refresh_token: string; id_token: string; token_type: string; scope: string };
    expect(tokens.token_type).toBe("Bearer");
    expect(tokens.scope).toBe("openid email profile");
    const claims = decodeJwt(tokens.id_token);
    expect(claims.aud).toBe(SPA.client_id);
    expect(claims.iss).toBe(`${PUBLIC_URL}/t/${ws}`);
    expect(claims).not.toHaveProperty("nonce");

    const userinfo = await call(h, `/t/${ws}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(userinfo.status).toBe(200);
    expect(((await userinfo.json()) as { email: string }).email).toBe(ADA.email);
    const session = await call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(session.status).toBe(200);

    const refreshed = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: SPA.client_id } });
    expect(refreshed.status).toBe(200);
    const reuse = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: SPA.client_id } });
    expect(await errorOf(reuse)).toBe("invalid_grant");
    const row = await rowOf(h, id);
    const [family] = await h.service.db.select().from(grants).where(eq(grants.id, row.grantId!));
    expect(family.revokeReason).toBe("refresh_token_reuse");
    expect((await call(h, `/t/${ws}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);

    const approvals = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "device_authorization.approved")));
    expect(approvals.some((e) => (e.data as { device_authorization?: string }).device_authorization === id && e.clientId === SPA.client_id)).toBe(true);
  });

  it("grants a confidential client's tokens for the permissions the user holds", async () => {
    const res = await deviceAuthorization(h, ws, { scope: "openid" }, { authorization: basic(WEB.client_id, WEB.secret) });
    const grant = (await res.json()) as { device_code: string; user_code: string };
    await userDecides(h, ws, grant.user_code, "approve");
    const tokens = await poll(h, ws, grant.device_code, WEB);
    expect(tokens.status).toBe(200);
  });

  it("ends with the hosted session: the tokens stop working when the user signs out there", async () => {
    const grant = await startDevice(h, ws);
    const { jar } = await userDecides(h, ws, grant.user_code, "approve");
    const tokens = (await (await poll(h, ws, grant.device_code)).json()) as { access_token: string };
    expect((await call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);
    const [sessionId] = jar.get("lk_session")!.split(".");
    await h.service.db.execute(`update hosted_sessions set ended_at = '${h.clock.now().toISOString()}' where id = '${sessionId}'`);
    expect((await call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  it("refuses the device code a second time", async () => {
    const grant = await startDevice(h, ws);
    await userDecides(h, ws, grant.user_code, "approve");
    expect((await poll(h, ws, grant.device_code)).status).toBe(200);
    h.clock.advance(10 * SECOND);
    const again = await poll(h, ws, grant.device_code);
    expect(again.status).toBe(400);
    expect(await errorOf(again)).toBe("invalid_grant");
  });

  it("decides once: a second decision changes nothing", async () => {
    const grant = await startDevice(h, ws);
    const { jar, id } = await userDecides(h, ws, grant.user_code, "approve");
    const view = await viewOf(h, ws, jar, { d: id });
    expect(view.kind).toBe("approved");
    const denyAfter = await call(h, `/t/${ws}/device/decision`, { form: { d: id, csrf: "x", decision: "deny" }, cookie: jar.header(), headers: { origin: PUBLIC_URL } });
    expect(new URL(denyAfter.headers.get("location")!, PUBLIC_URL).searchParams.get("error")).toBe("ended");
    expect((await rowOf(h, id)).status).toBe("approved");
  });
});

describe("the device page", () => {
  it("fills the code from verification_uri_complete but approves nothing until the user submits and decides", async () => {
    const grant = await startDevice(h, ws);
    const jar = await signedInBrowser(h, ws);
    const view = await viewOf(h, ws, jar, { user_code: grant.user_code.toLowerCase() });
    expect(view).toMatchObject({ kind: "enter", userCode: grant.user_code });
    expect(await errorOf(await poll(h, ws, grant.device_code))).toBe("authorization_pending");
  });

  it("normalizes what the user types once: lowercase, spaces and dashes", async () => {
    const grant = await startDevice(h, ws);
    const jar = await signedInBrowser(h, ws);
    const typed = ` ${grant.user_code.slice(0, 2).toLowerCase()} ${grant.user_code.slice(2)} `.replace("-", " - ");
    const res = await enterCode(h, ws, jar, typed);
    expect(res.status).toBe(303);
    const view = await viewOf(h, ws, jar, { d: pageId(res) });
    expect(view).toMatchObject({ kind: "consent", applicationName: "Single-page app", scope: ["openid", "email", "profile"], userEmail: ADA.email });
  });

  it("signs the user in first, with the application's policy, and comes back to the consent", async () => {
    const grant = await startDevice(h, ws);
    const jar = new Jar();
    const entered = await enterCode(h, ws, jar, grant.user_code);
    const signIn = new URL(entered.headers.get("location")!, PUBLIC_URL);
    expect(signIn.pathname).toBe(`/t/${ws}/sign-in`);
    const { signInView } = await import("../../../lib/sign-in/view");
    const { workspaceContext } = await import("../../helpers/factors/sign-in");
    const tx = signIn.searchParams.get("tx")!;
    const step = await signInView(await workspaceContext(h, ws), tx, jar.header());
    if (step.kind !== "step") throw new Error("no sign-in step");
    const post = await call(h, `/t/${ws}/sign-in/password`, { form: { tx, csrf: step.csrf, email: ADA.email, password: ADA.password }, cookie: jar.header(), headers: { origin: PUBLIC_URL } });
    jar.take(post);
    const back = new URL(post.headers.get("location")!, PUBLIC_URL);
    expect(back.pathname).toBe(`/t/${ws}/device`);
    const id = back.searchParams.get("d")!;
    expect((await viewOf(h, ws, jar, { d: id })).kind).toBe("consent");
    expect((await decideOnPage(h, ws, jar, id, "approve")).status).toBe(303);
    expect((await poll(h, ws, grant.device_code)).status).toBe(200);
  });

  it("binds the code to the browser that entered it: another browser can neither take it nor approve it", async () => {
    const grant = await startDevice(h, ws);
    const first = await signedInBrowser(h, ws);
    const id = pageId(await enterCode(h, ws, first, grant.user_code));
    const firstView = await viewOf(h, ws, first, { d: id });
    if (firstView.kind !== "consent") throw new Error("no consent");

    const other = await signedInBrowser(h, ws);
    const taken = await enterCode(h, ws, other, grant.user_code);
    expect(new URL(taken.headers.get("location")!, PUBLIC_URL).searchParams.get("error")).toBe("code_in_use");
    expect((await viewOf(h, ws, other, { d: id })).kind).toBe("enter");
    // The first browser's form, posted with the other browser's cookies (its session, no binding).
    const forged = await call(h, `/t/${ws}/device/decision`, { form: { d: id, csrf: firstView.csrf, decision: "approve" }, cookie: other.header(), headers: { origin: PUBLIC_URL } });
    expect(new URL(forged.headers.get("location")!, PUBLIC_URL).searchParams.get("error")).toBe("ended");
    // The binding cookie alone, with another session: its CSRF token does not verify.
    const mixed = new Jar();
    mixed.take(new Response(null, { headers: [["set-cookie", `lk_device_${id}=${first.get(`lk_device_${id}`)}`], ["set-cookie", `lk_session=${other.get("lk_session")}`]] }));
    const crossed = await call(h, `/t/${ws}/device/decision`, { form: { d: id, csrf: firstView.csrf, decision: "approve" }, cookie: mixed.header(), headers: { origin: PUBLIC_URL } });
    expect(crossed.status).toBe(403);
    expect((await rowOf(h, id)).status).toBe("pending");
    expect(await errorOf(await poll(h, ws, grant.device_code))).toBe("authorization_pending");

    expect((await decideOnPage(h, ws, first, id, "approve")).status).toBe(303);
    expect((await poll(h, ws, grant.device_code)).status).toBe(200);
  });

  it("refuses a form posted from another site", async () => {
    const grant = await startDevice(h, ws);
    const res = await call(h, `/t/${ws}/device/code`, { form: { user_code: grant.user_code }, headers: { origin: "https://evil.example.test" } });
    expect(res.status).toBe(403);
  });
});

describe("one winner", () => {
  it("gives the tokens to exactly one of many parallel polls of an approved code", async () => {
    const grant = await startDevice(h, ws);
    await userDecides(h, ws, grant.user_code, "approve");
    const answers = await Promise.all(Array.from({ length: 16 }, () => poll(h, ws, grant.device_code)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of answers.filter((a) => a.status !== 200)) expect(await errorOf(r)).toBe("invalid_grant");
    const [row] = await h.service.db.select().from(deviceAuthorizations).where(eq(deviceAuthorizations.deviceCodeHash, sha256Hex(grant.device_code)));
    expect(await h.service.db.select().from(grants).where(eq(grants.id, row.grantId!))).toHaveLength(1);
  });

  it("when the approval races polls, exactly one poll ever receives tokens", async () => {
    for (let round = 0; round < 3; round++) {
      const grant = await startDevice(h, ws);
      const jar = await signedInBrowser(h, ws);
      const id = pageId(await enterCode(h, ws, jar, grant.user_code));
      const view = await viewOf(h, ws, jar, { d: id });
      if (view.kind !== "consent") throw new Error("no consent");
      const decision = call(h, `/t/${ws}/device/decision`, { form: { d: id, csrf: view.csrf, decision: "approve" }, cookie: jar.header(), headers: { origin: PUBLIC_URL } });
      const racing = Array.from({ length: 12 }, () => poll(h, ws, grant.device_code));
      const [decided, ...answers] = await Promise.all([decision, ...racing]);
      expect(decided.status).toBe(303);
      // Whatever the race left, later polls complete the picture: one token answer in all.
      h.clock.advance(60 * SECOND);
      const later = await Promise.all(Array.from({ length: 4 }, () => poll(h, ws, grant.device_code)));
      const all = [...answers, ...later];
      expect(all.filter((r) => r.status === 200)).toHaveLength(1);
      for (const r of all.filter((a) => a.status !== 200)) expect(["authorization_pending", "slow_down", "invalid_grant"]).toContain(await errorOf(r));
    }
  });
});
