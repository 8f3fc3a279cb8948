/**
 * Verification before sensitive changes in the portal: recent primary verification plus existing
 * MFA to add, stronger evidence to remove or generate recovery codes, ten minutes of reuse bound
 * to user, hosted session and grant, a refresh that extends nothing, the last required factor, and
 * the provider-only account that cannot change anything.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { auditEvents, clients, grants, users } from "../../../db/schema";
import { createHostedSession, readSessionCookie } from "../../../lib/authn/hosted-session";
import { evidenceFor, EVIDENCE_REUSE_MS } from "../../../lib/authn/evidence";
import { DEFAULT_POLICY } from "../../../lib/authn/policy";
import { isLastRequiredFactor, judgeEvidence, requireEvidence, requireRemovalEvidence, verifyMethods } from "../../../lib/account-security/evidence";
import { livePortalSession, openPortalSession } from "../../../lib/account-security/portal-session";
import { loadPortalView } from "../../../lib/account-security/portal-view";
import { SECOND } from "../../../lib/clock";
import { basic, call, createHarness, exchangeCode, Jar, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, BOB, WEB, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postPassword, startSignIn, userIdOf, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";
import { holdHashing, stopHolding } from "../../helpers/hashing";
import { codeAt, giveTotp } from "../../helpers/factors/totp";
import { giveRecoveryCodes } from "../../helpers/factors/recovery-codes";
import { NOTHING_ENROLLED } from "../../../lib/authn/factors";

let h: Harness;
const ws = uniqueWorkspaceId("portal-evidence");
const CAROL = { email: "carol@example.test", password: "carol's long password" };
const FEDERATED = { email: "fed@example.test" };
const DAN = { email: "dan@example.test", password: "dan's long password!" };

beforeAll(async () => {
  h = await createHarness();
  const doc = standardWorkspace(ws);
  for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
  doc.users.push({ email: CAROL.email, password: CAROL.password, email_verified: true }, { email: FEDERATED.email, email_verified: false }, { email: DAN.email, password: DAN.password, email_verified: true });
  await seed(h, doc);
});

const link = `/t/${ws}/auth/account?client_id=${WEB.client_id}`;

/** Signs in through the direct link with the password; returns the browser's jar (hosted and portal cookies). */
async function openByDirectLink(who: { email: string; password: string }, jar = new Jar()): Promise<Jar> {
  const first = await call(h, link, { cookie: jar.header() });
  jar.take(first);
  const location = new URL(first.headers.get("location")!, PUBLIC_URL);
  if (location.pathname === `/t/${ws}/sign-in`) {
    const s: PendingSignIn = { workspaceId: ws, tx: location.searchParams.get("tx")!, jar, verifier: "", state: "", nonce: "", client: { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri } };
    expect((await postPassword(h, s, who.email, who.password)).status).toBe(303);
    const again = await call(h, link, { cookie: jar.header() });
    jar.take(again);
  }
  expect(jar.get("lk_portal")).toBeTruthy();
  return jar;
}

async function portalOf(jar: Jar) {
  const portal = await livePortalSession(await workspaceContext(h, ws), jar.header());
  if (!portal) throw new Error("no live portal session");
  return portal;
}

async function need(jar: Jar, what: Parameters<typeof requireEvidence>[2]) {
  return requireEvidence(await workspaceContext(h, ws), await portalOf(jar), what);
}

/** Posts a portal form as the browser would (same origin, the page's CSRF token). */
async function post(jar: Jar, path: string, fields: Record<string, string>, options: { csrf?: string; origin?: string } = {}): Promise<Response> {
  const ctx = await workspaceContext(h, ws);
  const csrf = options.csrf ?? (await loadPortalView(ctx, await portalOf(jar))).csrf;
  return call(h, `/t/${ws}${path}`, { form: { csrf, ...fields }, cookie: jar.header(), headers: { origin: options.origin ?? PUBLIC_URL } });
}

describe("the rule (pure)", () => {
  const methods = verifyMethods(DEFAULT_POLICY, { ...NOTHING_ENROLLED, hasPassword: true, passkey: 0, security_key: 0, totp: 1, recovery_code: 10 }, true);
  const at = new Date("2026-11-21T12:00:00Z");

  it("asks for a primary verification, then the user's MFA, then a strong enough event", () => {
    expect(judgeEvidence("add", DEFAULT_POLICY, methods, [])).toMatchObject({ ok: false, verify: { reason: "primary", primary: ["password", "email_otp"], mfa: ["totp", "recovery_code"] } });
    const pwd = evidenceFor("password", at);
    expect(judgeEvidence("add", DEFAULT_POLICY, methods, [pwd])).toMatchObject({ ok: false, verify: { reason: "mfa" } });
    const totp = evidenceFor("totp", at, "f1");
    expect(judgeEvidence("add", DEFAULT_POLICY, methods, [pwd, totp])).toEqual({ ok: true });
    expect(judgeEvidence({ remove: "possession" }, DEFAULT_POLICY, methods, [pwd, totp])).toEqual({ ok: true });
    expect(judgeEvidence({ remove: "phishing_resistant" }, DEFAULT_POLICY, methods, [pwd, totp])).toMatchObject({ ok: false, verify: { reason: "stronger" } });
    expect(judgeEvidence({ remove: "phishing_resistant" }, DEFAULT_POLICY, methods, [evidenceFor("passkey", at, "p1")])).toEqual({ ok: true });
  });

  it("counts a federated sign-in as no verification", () => {
    const noSecond = verifyMethods(DEFAULT_POLICY, { ...NOTHING_ENROLLED, hasPassword: true, passkey: 0, security_key: 0, totp: 0, recovery_code: 0 }, false);
    expect(judgeEvidence("add", DEFAULT_POLICY, noSecond, [evidenceFor("federated", at, "c1")])).toMatchObject({ ok: false, verify: { reason: "primary" } });
  });

  it("generating recovery codes needs more than a password alone", () => {
    const noSecond = verifyMethods(DEFAULT_POLICY, { ...NOTHING_ENROLLED, hasPassword: true, passkey: 0, security_key: 0, totp: 0, recovery_code: 0 }, true);
    expect(judgeEvidence("add", DEFAULT_POLICY, noSecond, [evidenceFor("password", at)])).toEqual({ ok: true });
    expect(judgeEvidence("recovery_codes", DEFAULT_POLICY, noSecond, [evidenceFor("password", at)])).toMatchObject({ ok: false, verify: { reason: "stronger" } });
    expect(judgeEvidence("recovery_codes", DEFAULT_POLICY, noSecond, [evidenceFor("email_otp", at)])).toEqual({ ok: true });
  });

  it("refuses removing the last factor the policy requires", () => {
    const one = { ...NOTHING_ENROLLED, hasPassword: true, passkey: 1, security_key: 0, totp: 1, recovery_code: 0 };
    expect(isLastRequiredFactor(DEFAULT_POLICY, one, "totp")).toBe(false);
    const mfa = { ...DEFAULT_POLICY, mfa: "required" as const };
    expect(isLastRequiredFactor(mfa, one, "totp")).toBe(false);
    expect(isLastRequiredFactor(mfa, { ...one, passkey: 0 }, "totp")).toBe(true);
    const passkeys = { ...DEFAULT_POLICY, passkeyEnrollment: "require" as const };
    expect(isLastRequiredFactor(passkeys, one, "passkey")).toBe(true);
    expect(isLastRequiredFactor(passkeys, { ...one, passkey: 2 }, "passkey")).toBe(false);
    expect(isLastRequiredFactor({ ...DEFAULT_POLICY, firstFactors: ["passkey"] }, one, "passkey")).toBe(true);
  });
});

describe("in the portal", () => {
  it("reuses the sign-in's primary verification for ten minutes, then asks again; the password form renews it", async () => {
    const jar = await openByDirectLink(ADA);
    expect(await need(jar, "add")).toEqual({ ok: true });
    h.clock.advance(EVIDENCE_REUSE_MS - SECOND);
    expect(await need(jar, "add")).toEqual({ ok: true });
    h.clock.advance(SECOND);
    expect(await need(jar, "add")).toMatchObject({ ok: false, verify: { reason: "primary" } });

    const wrong = await post(jar, "/account/verify/password", { password: "not the password" });
    expect(wrong.status).toBe(303);
    expect(wrong.headers.get("location")).toBe(`/t/${ws}/account?error=portal_verification_failed`);
    expect(await need(jar, "add")).toMatchObject({ ok: false });

    const right = await post(jar, "/account/verify/password", { password: ADA.password });
    expect(right.headers.get("location")).toBe(`/t/${ws}/account?done=verified`);
    expect(await need(jar, "add")).toEqual({ ok: true });
    const userId = await userIdOf(h, ws, ADA.email);
    const audited = await h.service.db.select({ type: auditEvents.type }).from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.subject, userId)));
    expect(audited.map((a) => a.type)).toEqual(expect.arrayContaining(["account_security.portal_opened", "account_security.verified", "account_security.verification_failed"]));
  });

  it("refuses the correct password of an account disabled while it was being checked, as the sign-in does (one verification for both)", async () => {
    const jar = await openByDirectLink(DAN);
    const danId = await userIdOf(h, ws, DAN.email);
    const held = holdHashing();
    try {
      const posted = post(jar, "/account/verify/password", { password: DAN.password });
      await held.startedCount(1);
      // The portal session was judged live; the account is disabled while its password is hashed.
      await h.service.db.update(users).set({ status: "disabled" }).where(eq(users.id, danId));
      held.releaseAll();
      const res = await posted;
      expect(res.headers.get("location")).toBe(`/t/${ws}/account?error=portal_verification_failed`);
    } finally {
      stopHolding();
      await h.service.db.update(users).set({ status: "active" }).where(eq(users.id, danId));
    }
    // The same in the sign-in: the account disabled while the password is hashed does not sign in.
    const s = await startSignIn(h, ws, WEB);
    const again = holdHashing();
    try {
      const posted = postPassword(h, s, DAN.email, DAN.password);
      await again.startedCount(1);
      await h.service.db.update(users).set({ status: "disabled" }).where(eq(users.id, danId));
      again.releaseAll();
      expect(outcome(await posted)).toEqual({ to: "page", error: "invalid_credentials" });
    } finally {
      stopHolding();
    }
  });

  it("refuses a form post without the portal's CSRF token or from another site", async () => {
    const jar = await openByDirectLink(ADA);
    expect((await post(jar, "/account/verify/password", { password: ADA.password }, { csrf: "forged" })).status).toBe(403);
    expect((await post(jar, "/account/verify/password", { password: ADA.password }, { origin: "https://evil.example" })).status).toBe(403);
    const other = await openByDirectLink(BOB);
    const otherCsrf = (await loadPortalView(await workspaceContext(h, ws), await portalOf(other))).csrf;
    expect((await post(jar, "/account/verify/password", { password: ADA.password }, { csrf: otherCsrf })).status).toBe(403);
  });

  it("asks a user with a second factor for it, and asks stronger evidence to remove a stronger factor", async () => {
    const { seed: totpSeed } = await giveTotp(h, ws, CAROL.email);
    await giveRecoveryCodes(h, ws, CAROL.email);
    const jar = await openByDirectLink(CAROL);
    expect(await need(jar, "add")).toMatchObject({ ok: false, verify: { reason: "mfa", mfa: ["totp", "recovery_code"] } });
    expect((await post(jar, "/account/verify/totp", { code: "000000" === codeAt(h, totpSeed) ? "111111" : "000000" })).headers.get("location")).toContain("error=");
    expect((await post(jar, "/account/verify/totp", { code: codeAt(h, totpSeed) })).headers.get("location")).toBe(`/t/${ws}/account?done=verified`);
    expect(await need(jar, "add")).toEqual({ ok: true });
    expect(await need(jar, "recovery_codes")).toEqual({ ok: true });
    expect(await need(jar, { remove: "possession" })).toEqual({ ok: true });
    expect(await need(jar, { remove: "phishing_resistant" })).toMatchObject({ ok: false, verify: { reason: "stronger" } });
    const ctx = await workspaceContext(h, ws);
    expect(await requireRemovalEvidence(ctx, await portalOf(jar), "totp")).toEqual({ ok: true });
    await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
    try {
      // The policy now requires MFA: the only second factor cannot be removed, whatever the evidence.
      const portal = await portalOf(jar);
      expect(await requireRemovalEvidence(ctx, portal, "totp")).toEqual({ ok: false, lastRequired: true });
    } finally {
      await h.service.db.update(clients).set({ authPolicy: {} }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
    }
  });

  it("binds evidence to the grant, and a token refresh does not extend it", async () => {
    const signedIn = await signIn(h, ws, { ...WEB, email: ADA.email, password: ADA.password });
    const exchanged = await exchangeCode(h, ws, {
      code: signedIn.callback.searchParams.get("code")!,
      redirect_uri: WEB.redirect_uri,
      verifier: signedIn.verifier,
      authorization: basic(WEB.client_id, WEB.secret),
    });
    expect(exchanged.status).toBe(200);
    const { refresh_token } = (await exchanged.json()) as { refresh_token: string };
    const ctx = await workspaceContext(h, ws);
    const sessionId = readSessionCookie(signedIn.jar.header())!.id;
    const [grant] = await h.service.db.select().from(grants).where(and(eq(grants.workspaceId, ws), eq(grants.sessionId, sessionId)));
    const opened = await openPortalSession(ctx, { userId: grant.userId, sessionId, clientPk: grant.clientPk, grantId: grant.id, returnUri: "https://web.example.test/settings" });
    const jar = signedIn.jar.take(new Response(null, { headers: { "set-cookie": opened.cookie } }));
    h.clock.advance(EVIDENCE_REUSE_MS);
    expect(await need(jar, "add")).toMatchObject({ ok: false, verify: { reason: "primary" } });
    expect((await post(jar, "/account/verify/password", { password: ADA.password })).headers.get("location")).toBe(`/t/${ws}/account?done=verified`);
    expect(await need(jar, "add")).toEqual({ ok: true });

    // The same hosted session through the direct link (no grant): the grant's portal evidence does not count.
    const direct = await openByDirectLink(ADA, new Jar().take(new Response(null, { headers: { "set-cookie": `lk_session=${signedIn.jar.get("lk_session")}` } })));
    expect(await need(direct, "add")).toMatchObject({ ok: false, verify: { reason: "primary" } });

    h.clock.advance(EVIDENCE_REUSE_MS - SECOND);
    const refreshed = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });
    expect(refreshed.status).toBe(200);
    h.clock.advance(SECOND);
    expect(await need(jar, "add")).toMatchObject({ ok: false, verify: { reason: "primary" } });
  });

  it("gives a provider-only account ordinary access, but no sensitive change, and says why", async () => {
    const ctx = await workspaceContext(h, ws);
    const userId = await userIdOf(h, ws, FEDERATED.email);
    const [user] = await h.service.db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, userId));
    expect(user.hash).toBeNull();
    const { session, cookie } = await createHostedSession(ctx, { userId, evidence: [evidenceFor("federated", h.clock.now(), null)] });
    const [web] = await h.service.db.select({ id: clients.id }).from(clients).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
    const opened = await openPortalSession(ctx, { userId, sessionId: session.id, clientPk: web.id, grantId: null, returnUri: "https://web.example.test/" });
    const jar = new Jar().take(new Response(null, { headers: [["set-cookie", cookie], ["set-cookie", opened.cookie]] }));
    expect(await need(jar, "add")).toMatchObject({ ok: false, verify: { reason: "provider_only", primary: [] } });
    expect(await need(jar, "recovery_codes")).toMatchObject({ ok: false, verify: { reason: "provider_only" } });
    const view = await loadPortalView(ctx, await portalOf(jar));
    expect(view.addVerdict).toMatchObject({ ok: false, verify: { reason: "provider_only" } });
    // The password form answers nothing useful for an account without a password.
    expect((await post(jar, "/account/verify/password", { password: "anything at all" })).headers.get("location")).toContain("error=portal_verification_failed");
  });
});
