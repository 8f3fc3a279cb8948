/**
 * One factor, one set of counters: the guessing limits a factor declares (lib/authn/factors/*)
 * count its failures in the sign-in and in the portal's re-verification together, and the portal's
 * browser passes a factor's account ceiling only when its session passed that factor before.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq, isNull } from "drizzle-orm";
import { clients, recoveryCodes } from "../../../db/schema";
import { CLIENT_ADDRESS_HEADER } from "../../../lib/http/client-address";
import { livePortalSession } from "../../../lib/account-security/portal-session";
import { loadPortalView } from "../../../lib/account-security/portal-view";
import { call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { SPA, standardWorkspace, WEB } from "../../helpers/fixtures";
import { outcome, passwordStep, postPassword, postStep, startSignIn, userIdOf, viewOf, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";
import { codeAt, giveTotp } from "../../helpers/factors/totp";
import { giveRecoveryCodes } from "../../helpers/factors/recovery-codes";
import { SoftAuthenticator } from "../../helpers/factors/webauthn";

// 2 failures per account and address per 5 minutes, so 6 per account per hour.
const PER_ADDRESS = 2;
const PER_ACCOUNT = 6;
const PASSWORD = "a long enough password for tests";
const person = (name: string) => ({ email: `${name}@example.test`, password: PASSWORD });

let h: Harness;
const ws = uniqueWorkspaceId("factor-limits");

beforeAll(async () => {
  h = await createHarness({ rateLimits: { requestsPerMinute: 100_000, failuresPer5Minutes: PER_ADDRESS } });
  const doc = standardWorkspace(ws);
  for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
  doc.users.push(...["pwd", "totp-portal", "totp-signin", "rc-passkey"].map((n) => ({ ...person(n), email_verified: true })));
  await seed(h, doc);
  // Sign-in at SPA requires MFA, so its second-factor step shares counters with WEB's portal.
  await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, SPA.client_id)));
  h.service.cache.clear();
});

const from = (address: string) => ({ [CLIENT_ADDRESS_HEADER]: address });
const link = `/t/${ws}/auth/account?client_id=${WEB.client_id}`;

/** The portal through the direct link, signed in with the password (WEB needs no MFA). */
async function openPortal(who: { email: string; password: string }): Promise<Jar> {
  const jar = new Jar();
  const first = await call(h, link, { cookie: jar.header() });
  jar.take(first);
  const location = new URL(first.headers.get("location")!, PUBLIC_URL);
  const s: PendingSignIn = { workspaceId: ws, tx: location.searchParams.get("tx")!, jar, verifier: "", state: "", nonce: "", client: { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri } };
  expect((await postPassword(h, s, who.email, who.password)).status).toBe(303);
  jar.take(await call(h, link, { cookie: jar.header() }));
  expect(jar.get("lk_portal")).toBeTruthy();
  return jar;
}

/** A portal verification form post from `address`; returns where it went (`done=…` or `error=…`). */
async function portalPost(jar: Jar, path: string, fields: Record<string, string>, address: string): Promise<string> {
  const ctx = await workspaceContext(h, ws);
  const portal = await livePortalSession(ctx, jar.header());
  if (!portal) throw new Error("no live portal session");
  const { csrf } = await loadPortalView(ctx, portal);
  const res = await call(h, `/t/${ws}${path}`, { form: { csrf, ...fields }, cookie: jar.header(), headers: { origin: PUBLIC_URL, ...from(address) } });
  expect(res.status).toBe(303);
  return new URL(res.headers.get("location")!, PUBLIC_URL).search.slice(1);
}

describe("one counter per factor across the sign-in and the portal", () => {
  it("password: wrong passwords in the portal count toward the sign-in's limit for the account and address", async () => {
    const jar = await openPortal(person("pwd"));
    for (let i = 0; i < PER_ADDRESS; i++) {
      expect(await portalPost(jar, "/account/verify/password", { password: "not the password" }, "10.70.0.1")).toBe("error=portal_verification_failed");
    }
    expect(await portalPost(jar, "/account/verify/password", { password: PASSWORD }, "10.70.0.1")).toBe("error=portal_verification_limited");
    // The sign-in from the same address, with the right password: no password is checked.
    const s = await startSignIn(h, ws, WEB);
    const res = await call(h, `/t/${ws}/sign-in/password`, {
      form: { tx: s.tx, csrf: (await viewOf(h, s)).csrf, email: person("pwd").email, password: PASSWORD },
      cookie: s.jar.header(),
      headers: { origin: PUBLIC_URL, ...from("10.70.0.1") },
    });
    expect(outcome(res)).toEqual({ to: "page", error: "rate_limited" });
  });

  it("TOTP: sign-in guesses reach the account ceiling; the portal's browser, whose session passed only the password, is then refused the right code", async () => {
    const { seed: secret } = await giveTotp(h, ws, person("totp-signin").email);
    const portal = await openPortal(person("totp-signin"));
    const s = await passwordStep(h, ws, { ...SPA, ...person("totp-signin") });
    for (let i = 0; i < PER_ACCOUNT; i++) {
      expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret, 10) }, { headers: from(`10.71.0.${Math.floor(i / PER_ADDRESS)}`) }))).toEqual({
        to: "page",
        error: "invalid_code",
      });
    }
    expect(await portalPost(portal, "/account/verify/totp", { code: codeAt(h, secret) }, "10.71.1.1")).toBe("error=portal_verification_limited");
  });

  it("TOTP: portal guesses count toward the sign-in's account ceiling", async () => {
    const { seed: secret } = await giveTotp(h, ws, person("totp-portal").email);
    const portal = await openPortal(person("totp-portal"));
    for (let i = 0; i < PER_ACCOUNT; i++) {
      expect(await portalPost(portal, "/account/verify/totp", { code: codeAt(h, secret, 10) }, `10.72.0.${Math.floor(i / PER_ADDRESS)}`)).toBe("error=portal_verification_failed");
    }
    const s = await passwordStep(h, ws, { ...SPA, ...person("totp-portal") });
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret) }, { headers: from("10.72.1.1") }))).toEqual({ to: "page", error: "invalid_code" });
  });
});

describe("the portal acts only on the methods it offers", () => {
  it("a recovery code is not taken from an account whose only second factor is a passkey (codes stand in for an app or a key): refused, unread", async () => {
    const userId = await userIdOf(h, ws, person("rc-passkey").email);
    await new SoftAuthenticator().enrol(h, ws, userId, "passkey");
    const [code] = await giveRecoveryCodes(h, ws, person("rc-passkey").email);
    const jar = await openPortal(person("rc-passkey"));
    expect(await portalPost(jar, "/account/verify/recovery-code", { code: code! }, "10.73.0.1")).toBe("error=portal_verification_failed");
    const unused = await h.service.db.select().from(recoveryCodes).where(and(eq(recoveryCodes.workspaceId, ws), eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt)));
    expect(unused).toHaveLength(10);
  });
});
