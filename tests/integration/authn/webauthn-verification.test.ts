/**
 * WebAuthn's one verification (lib/authn/factors/webauthn/verify.ts `verifyWebAuthnFactor`), which
 * the sign-in (a passkey as the first factor, a key as a further factor) and the portal's
 * verification both call: the account is judged once the assertion verified, so an account
 * disabled while its assertion was being checked is refused in every flow (and the failure is
 * counted), and a refused assertion is counted on one gate (the account's, at the client address)
 * whichever of the sign-in and the portal it was posted to.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { and, eq, isNull, sql } from "drizzle-orm";
import { auditEvents, users } from "../../../db/schema";
import { livePortalSession } from "../../../lib/account-security/portal-session";
import { loadPortalView } from "../../../lib/account-security/portal-view";
import { CLIENT_ADDRESS_HEADER } from "../../../lib/http/client-address";
import { call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { SPA, WEB, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postPassword, startSignIn, userIdOf, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";
import { postPasskey, postSecondFactorKey, SoftAuthenticator, type Bend } from "../../helpers/factors/webauthn";

const LIMIT = 3;
const PASSWORD = "a long enough password for tests";
const MFA = { client_id: "mfa", redirect_uri: "https://mfa.example.test/callback" };
const NAMES = ["gate", "first", "second", "portal"];

let h: Harness;
const ws = uniqueWorkspaceId("webauthn-verify");
const email = (name: string) => `${name}@example.test`;
const from = (address: string) => ({ [CLIENT_ADDRESS_HEADER]: address });
const link = `/t/${ws}/auth/account?client_id=${WEB.client_id}`;

beforeAll(async () => {
  h = await createHarness({ rateLimits: { requestsPerMinute: 100_000, failuresPer5Minutes: LIMIT } });
  const doc = standardWorkspace(ws);
  for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
  doc.applications.push({ client_id: MFA.client_id, name: "MFA app", type: "PUBLIC", redirect_uris: [MFA.redirect_uri], identity_scopes: ["openid", "email", "profile"], auth_policy: { mfa: "required" } });
  doc.users.push(...NAMES.map((n) => ({ email: email(n), password: PASSWORD, email_verified: true })));
  await seed(h, doc);
});

/** Opens the portal through the direct link, signing in with the password from `address`; returns the browser's jar. */
async function openPortal(name: string, address: string): Promise<Jar> {
  const jar = new Jar();
  const first = await call(h, link);
  jar.take(first);
  const s: PendingSignIn = { workspaceId: ws, tx: new URL(first.headers.get("location")!, PUBLIC_URL).searchParams.get("tx")!, jar, verifier: "", state: "", nonce: "", client: WEB };
  expect((await postPassword(h, s, email(name), PASSWORD)).status).toBe(303);
  jar.take(await call(h, link, { cookie: jar.header(), headers: from(address) }));
  expect(jar.get("lk_portal")).toBeTruthy();
  return jar;
}

/** Answers the portal's WebAuthn prompt with `authenticator` from `address`; returns where the portal sent the browser. */
async function portalAssert(jar: Jar, authenticator: SoftAuthenticator, address: string, bend: Bend = {}): Promise<string> {
  const ctx = await workspaceContext(h, ws);
  const portal = await livePortalSession(ctx, jar.header());
  if (!portal) throw new Error("no live portal session");
  const view = await loadPortalView(ctx, portal);
  if (!view.webauthnOptions) throw new Error("no WebAuthn options in the portal");
  const assertion = authenticator.assert(JSON.parse(view.webauthnOptions), bend);
  const res = await call(h, `/t/${ws}/account/verify/webauthn`, {
    form: { csrf: view.csrf, response: JSON.stringify(assertion) },
    cookie: jar.header(),
    headers: { origin: PUBLIC_URL, ...from(address) },
  });
  expect(res.status).toBe(303);
  return res.headers.get("location")!;
}

async function atSecondFactor(name: string): Promise<PendingSignIn> {
  const s = await startSignIn(h, ws, MFA);
  expect(outcome(await postPassword(h, s, email(name), PASSWORD))).toEqual({ to: "page", error: null });
  return s;
}

/** The events of `type` about `subject` (null: about no account), as reason and data. */
const eventsOf = async (type: string, subject: string | null) =>
  h.service.db
    .select({ reason: auditEvents.reason, data: auditEvents.data })
    .from(auditEvents)
    .where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, type), subject === null ? isNull(auditEvents.subject) : eq(auditEvents.subject, subject)));

/**
 * Disables the account while its assertion is being checked: once its signature verified and its
 * counter moved (a trigger on the credential's row, standing in for an administrator's change made
 * meanwhile), after the flow judged its sign-in or portal session.
 */
async function disableDuringCheck(userId: string) {
  await stopDisabling();
  await h.service.db.execute(sql.raw(`create or replace function test_disable_during_check() returns trigger language plpgsql as $$
    begin update users set status = 'disabled' where id = new.user_id; return new; end $$`));
  await h.service.db.execute(
    sql.raw(`create trigger test_disable_during_check after update of counter on webauthn_credentials for each row
      when (new.user_id = '${userId}') execute function test_disable_during_check()`),
  );
}

async function stopDisabling() {
  await h.service.db.execute(sql.raw("drop trigger if exists test_disable_during_check on webauthn_credentials"));
  await h.service.db.execute(sql.raw("drop function if exists test_disable_during_check()"));
}

afterEach(stopDisabling);

const statusOf = async (userId: string) => (await h.service.db.select({ status: users.status }).from(users).where(eq(users.id, userId)))[0].status;
const enable = (userId: string) => h.service.db.update(users).set({ status: "active" }).where(eq(users.id, userId));

describe("the account, judged by the one verification", () => {
  it("refuses a valid assertion of an account disabled while it was checked: the passkey sign-in, the second factor and the portal alike, each counted on the gate", async () => {
    // The passkey as the first factor (no account named until it verifies).
    const firstId = await userIdOf(h, ws, email("first"));
    const passkey = new SoftAuthenticator();
    await passkey.enrol(h, ws, firstId, "passkey");
    await disableDuringCheck(firstId);
    expect(outcome(await postPasskey(h, await startSignIn(h, ws, SPA), passkey, {}, from("10.4.0.1")))).toEqual({ to: "page", error: "webauthn_failed" });
    expect(await statusOf(firstId)).toBe("disabled");
    expect(await eventsOf("sign_in.failed", null)).toEqual([{ reason: "assertion_failed", data: { method: "webauthn", client: expect.any(String) } }]);

    // A security key as the second factor.
    const secondId = await userIdOf(h, ws, email("second"));
    const key = new SoftAuthenticator({ uv: false });
    await key.enrol(h, ws, secondId, "security_key");
    const s = await atSecondFactor("second");
    await disableDuringCheck(secondId);
    expect(outcome(await postSecondFactorKey(h, s, key, {}, from("10.4.0.2")))).toEqual({ to: "page", error: "webauthn_failed" });
    expect(await statusOf(secondId)).toBe("disabled");
    expect(await eventsOf("sign_in.failed", secondId)).toEqual([{ reason: "assertion_failed", data: { method: "webauthn", client: expect.any(String) } }]);

    // The portal's verification.
    const portalId = await userIdOf(h, ws, email("portal"));
    const portalKey = new SoftAuthenticator({ uv: false });
    await portalKey.enrol(h, ws, portalId, "security_key");
    const jar = await openPortal("portal", "10.4.0.3");
    await disableDuringCheck(portalId);
    expect(await portalAssert(jar, portalKey, "10.4.0.3")).toBe(`/t/${ws}/account?error=portal_verification_failed`);
    expect(await statusOf(portalId)).toBe("disabled");
    expect(await eventsOf("account_security.verification_failed", portalId)).toHaveLength(1);
    expect(await eventsOf("account_security.verified", portalId)).toEqual([]);

    // Each refusal was counted: with the accounts active again, LIMIT - 1 more failures at the same address limit the next answer.
    for (const id of [firstId, secondId, portalId]) await enable(id);
    for (let i = 0; i < LIMIT - 1; i++) {
      expect(outcome(await postPasskey(h, await startSignIn(h, ws, SPA), passkey, { uv: false }, from("10.4.0.1")))).toEqual({ to: "page", error: "webauthn_failed" });
    }
    expect(outcome(await postPasskey(h, await startSignIn(h, ws, SPA), passkey, {}, from("10.4.0.1")))).toEqual({ to: "page", error: "webauthn_limited" });
    for (let i = 0; i < LIMIT - 1; i++) expect(await portalAssert(jar, portalKey, "10.4.0.3", { up: false })).toBe(`/t/${ws}/account?error=portal_verification_failed`);
    expect(await portalAssert(jar, portalKey, "10.4.0.3")).toBe(`/t/${ws}/account?error=portal_verification_limited`);
  });
});

describe("one gate for the sign-in and the portal", () => {
  it("counts a refused assertion in the portal and in the sign-in's second factor on the same gate (the account's, at the address)", async () => {
    const id = await userIdOf(h, ws, email("gate"));
    const key = new SoftAuthenticator({ uv: false });
    await key.enrol(h, ws, id, "security_key");
    const jar = await openPortal("gate", "10.5.0.1");
    const s = await atSecondFactor("gate");

    // LIMIT - 1 refusals in the portal, one in the sign-in.
    for (let i = 0; i < LIMIT - 1; i++) expect(await portalAssert(jar, key, "10.5.0.1", { up: false })).toBe(`/t/${ws}/account?error=portal_verification_failed`);
    expect(outcome(await postSecondFactorKey(h, s, key, { up: false }, from("10.5.0.1")))).toEqual({ to: "page", error: "webauthn_failed" });

    // Both are limited now, even for the right key.
    expect(outcome(await postSecondFactorKey(h, s, key, {}, from("10.5.0.1")))).toEqual({ to: "page", error: "webauthn_limited" });
    expect(await portalAssert(jar, key, "10.5.0.1")).toBe(`/t/${ws}/account?error=portal_verification_limited`);

    // The same account at another address is not.
    expect(await portalAssert(jar, key, "10.5.0.2")).toBe(`/t/${ws}/account?done=verified`);
    expect(outcome(await postSecondFactorKey(h, s, key, {}, from("10.5.0.2"))).to).toBe("callback");
  });
});
