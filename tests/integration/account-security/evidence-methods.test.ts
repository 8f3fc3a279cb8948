/**
 * The portal's verification methods beyond the password: an emailed code (bound to the portal
 * session), a passkey (phishing-resistant: enough to remove a security key), a security key as MFA.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { EVIDENCE_REUSE_MS } from "../../../lib/authn/evidence";
import { requireEvidence } from "../../../lib/account-security/evidence";
import { livePortalSession } from "../../../lib/account-security/portal-session";
import { loadPortalView } from "../../../lib/account-security/portal-view";
import { call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, WEB, standardWorkspace } from "../../helpers/fixtures";
import { postPassword, userIdOf, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";
import { latestCode, OUTBOX } from "../../helpers/factors/email";
import { SoftAuthenticator } from "../../helpers/factors/webauthn";

let h: Harness;
const ws = uniqueWorkspaceId("portal-methods");
const DAN = { email: "dan@example.test", password: "dan's own long password" };

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX });
  const doc = standardWorkspace(ws);
  for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
  doc.users.push({ email: DAN.email, password: DAN.password, email_verified: true });
  await seed(h, doc);
});

const link = `/t/${ws}/auth/account?client_id=${WEB.client_id}`;

async function openPortal(who: { email: string; password: string }): Promise<Jar> {
  const jar = new Jar();
  const first = await call(h, link);
  jar.take(first);
  const s: PendingSignIn = { workspaceId: ws, tx: new URL(first.headers.get("location")!, PUBLIC_URL).searchParams.get("tx")!, jar, verifier: "", state: "", nonce: "", client: WEB };
  expect((await postPassword(h, s, who.email, who.password)).status).toBe(303);
  jar.take(await call(h, link, { cookie: jar.header() }));
  return jar;
}

async function ctxAndPortal(jar: Jar) {
  const ctx = await workspaceContext(h, ws);
  const portal = await livePortalSession(ctx, jar.header());
  if (!portal) throw new Error("no portal");
  return { ctx, portal };
}

async function post(jar: Jar, path: string, fields: Record<string, string> = {}) {
  const { ctx, portal } = await ctxAndPortal(jar);
  const { csrf } = await loadPortalView(ctx, portal);
  return call(h, `/t/${ws}${path}`, { form: { csrf, ...fields }, cookie: jar.header(), headers: { origin: PUBLIC_URL } });
}

async function need(jar: Jar, what: Parameters<typeof requireEvidence>[2]) {
  const { ctx, portal } = await ctxAndPortal(jar);
  return requireEvidence(ctx, portal, what);
}

describe("an emailed code", () => {
  it("is sent to the account's address, bound to the portal session, and verifies the user", async () => {
    const jar = await openPortal(ADA);
    h.clock.advance(EVIDENCE_REUSE_MS);
    expect(await need(jar, "add")).toMatchObject({ ok: false, verify: { reason: "primary", primary: ["password", "email_otp"] } });
    const sent = await post(jar, "/account/verify/email");
    expect(sent.headers.get("location")).toBe(`/t/${ws}/account?done=code_sent`);
    const { ctx, portal } = await ctxAndPortal(jar);
    expect((await loadPortalView(ctx, portal)).emailCodeSent).toBe(true);
    const code = await latestCode(h, ws, ADA.email);
    expect(code).toMatch(/^\d{6}$/);
    // Another portal session of the same user cannot use it.
    const other = await openPortal(ADA);
    expect((await post(other, "/account/verify/email/code", { code: code! })).headers.get("location")).toContain("error=portal_verification_failed");
    expect((await post(jar, "/account/verify/email/code", { code: code! })).headers.get("location")).toBe(`/t/${ws}/account?done=verified`);
    expect(await need(jar, "add")).toEqual({ ok: true });
    expect(await need(jar, "recovery_codes")).toEqual({ ok: true });
    // Single use.
    expect((await post(jar, "/account/verify/email/code", { code: code! })).headers.get("location")).toContain("error=");
  });
});

describe("passkeys and security keys", () => {
  it("a passkey verifies the user and is strong enough to remove any factor; a security key alone is not primary", async () => {
    const authenticator = new SoftAuthenticator();
    const userId = await userIdOf(h, ws, DAN.email);
    await authenticator.enrol(h, ws, userId, "passkey");
    const keys = new SoftAuthenticator({ uv: false });
    await keys.enrol(h, ws, userId, "security_key");
    const jar = await openPortal(DAN);
    h.clock.advance(EVIDENCE_REUSE_MS);
    const assertWith = async (a: SoftAuthenticator) => {
      const { ctx, portal } = await ctxAndPortal(jar);
      const view = await loadPortalView(ctx, portal);
      expect(view.webauthnOptions).not.toBeNull();
      const options = JSON.parse(view.webauthnOptions!) as { challenge: string; allowCredentials: { id: string }[] };
      const assertion = a.assert({ ...options, allowCredentials: options.allowCredentials.filter((c) => a.credentials.some((k) => k.id === c.id)) });
      return call(h, `/t/${ws}/account/verify/webauthn`, { form: { csrf: view.csrf, response: JSON.stringify(assertion) }, cookie: jar.header(), headers: { origin: PUBLIC_URL } });
    };
    expect((await assertWith(keys)).headers.get("location")).toBe(`/t/${ws}/account?done=verified`);
    expect(await need(jar, "add")).toMatchObject({ ok: false, verify: { reason: "primary" } });
    expect((await assertWith(authenticator)).headers.get("location")).toBe(`/t/${ws}/account?done=verified`);
    expect(await need(jar, "add")).toEqual({ ok: true });
    expect(await need(jar, { remove: "phishing_resistant" })).toEqual({ ok: true });
    // A wrong answer: refused, and the evidence already recorded is unchanged.
    expect((await post(jar, "/account/verify/webauthn", { response: "{}" })).headers.get("location")).toContain("error=portal_verification_failed");
  });
});
