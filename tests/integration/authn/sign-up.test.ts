/**
 * Self-service sign-up (lib/sign-in/sign-up.ts): off by default; the address proved by an email
 * code before any account exists; then a password or a passkey; a registered address looks the
 * same on the page and its owner is told by email, with a sign-in code.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { and, eq } from "drizzle-orm";
import { clients, users, workspaces } from "../../../db/schema";
import { verifyPassword } from "../../../lib/authn/password";
import { SEND_WINDOW_MS } from "../../../lib/authn/factors/email-code";
import { call, createHarness, exchangeCode, Jar, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, BOB, SPA, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postPassword, postStep, startSignIn, viewOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { codeAt, giveTotp } from "../../helpers/factors/totp";
import { latestCode, OUTBOX, outboxFor, signUpWithPassword } from "../../helpers/factors/email";

let h: Harness;
const ws = uniqueWorkspaceId("sign-up");
let counter = 0;
const newAddress = () => `new-${++counter}@example.test`;

async function setPolicy(workspace: Record<string, unknown>, application: Record<string, unknown> = {}) {
  await h.service.db.update(workspaces).set({ authPolicy: workspace }).where(eq(workspaces.id, ws));
  await h.service.db.update(clients).set({ authPolicy: application }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, SPA.client_id)));
  h.service.cache.clear();
}

async function userByEmail(email: string) {
  const [row] = await h.service.db.select().from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, email)));
  return row ?? null;
}

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX });
  await seed(h, standardWorkspace(ws));
});

beforeEach(async () => {
  h.clock.current = (Math.floor(h.clock.current / SEND_WINDOW_MS) + 1) * SEND_WINDOW_MS;
  await setPolicy({ signUp: true });
});

const start = () => startSignIn(h, ws, SPA);
const step = async (s: PendingSignIn, path: string, fields: Record<string, string> = {}) => outcome(await postStep(h, s, path, fields));

/** Sign-up up to the proved address. */
async function proveAddress(email: string): Promise<PendingSignIn> {
  const s = await start();
  expect(await step(s, "/sign-up/email", { email })).toEqual({ to: "page", error: null });
  expect(await step(s, "/sign-up/verify", { code: (await latestCode(h, ws, email))! })).toEqual({ to: "page", error: null });
  return s;
}

describe("sign-up", () => {
  it("is off by default: not offered, and refused", async () => {
    await setPolicy({});
    const s = await start();
    expect((await viewOf(h, s)).email.signUp.available).toBe(false);
    const email = newAddress();
    expect(await step(s, "/sign-up/email", { email })).toEqual({ to: "page", error: "method_not_allowed" });
    expect(await outboxFor(h, ws, email)).toHaveLength(0);
  });

  it("follows the application's override", async () => {
    await setPolicy({ signUp: true }, { signUp: false });
    expect(await step(await start(), "/sign-up/email", { email: newAddress() })).toEqual({ to: "page", error: "method_not_allowed" });
    await setPolicy({}, { signUp: true });
    expect(await step(await start(), "/sign-up/email", { email: newAddress() })).toEqual({ to: "page", error: null });
  });

  it("creates no account before the address is proved; then one, verified, with the password; the tokens say amr otp, acr loa:1", async () => {
    const email = newAddress();
    const s = await start();
    expect((await viewOf(h, s)).email.signUp).toMatchObject({ available: true, codeSentTo: null, verifiedAddress: null, credentials: ["password", "passkey"] });
    expect(await step(s, "/sign-up/email", { email: email.toUpperCase() })).toEqual({ to: "page", error: null });
    expect(await userByEmail(email)).toBeNull();
    const [message] = await outboxFor(h, ws, email);
    const code = (await latestCode(h, ws, email))!;
    expect(message.subject).toBe(`${code} is your code to create an account at Workspace ${ws}`);
    expect(message.html).toContain(code);
    expect((await viewOf(h, s)).email.signUp).toMatchObject({ codeSentTo: email, verifiedAddress: null });

    expect(await step(s, "/sign-up/verify", { code })).toEqual({ to: "page", error: null });
    expect(await userByEmail(email)).toBeNull();
    expect((await viewOf(h, s)).email.signUp).toMatchObject({ codeSentTo: null, verifiedAddress: email });

    const done = await step(s, "/sign-up/account", { credential: "password", password: "a new long password" });
    expect(done.to).toBe("callback");
    const user = (await userByEmail(email))!;
    expect(user).toMatchObject({ email, emailVerified: true, status: "active", name: null });
    expect(await verifyPassword(user.passwordHash!, "a new long password")).toBe(true);

    const res = await exchangeCode(h, ws, { code: (done as { url: URL }).url.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: s.verifier, client_id: SPA.client_id });
    const claims = decodeJwt((await res.json()).id_token);
    expect(claims).toMatchObject({ amr: ["otp"], acr: "urn:latchkey:loa:1", email, email_verified: true });

    // The new account signs in with its password.
    const again = await signIn(h, ws, { ...SPA, email, password: "a new long password" });
    expect(again.callback.searchParams.get("code")).toBeTruthy();
  });

  it("refuses a wrong or dead code like the sign-in does, and creates nothing", async () => {
    const email = newAddress();
    const s = await start();
    await step(s, "/sign-up/email", { email });
    const code = (await latestCode(h, ws, email))!;
    const bad = String((Number(code) + 1) % 1_000_000).padStart(6, "0");
    for (let i = 0; i < 4; i++) expect(await step(s, "/sign-up/verify", { code: bad })).toEqual({ to: "page", error: "invalid_code" });
    expect(await step(s, "/sign-up/verify", { code: bad })).toEqual({ to: "page", error: "code_expired" });
    expect(await step(s, "/sign-up/verify", { code })).toEqual({ to: "page", error: "code_expired" });
    expect(await step(s, "/sign-up/account", { credential: "password", password: "a new long password" })).toEqual({ to: "page", error: null });
    expect(await userByEmail(email)).toBeNull();
  });

  it("does not take a sign-up code as a sign-in code, nor the other way round", async () => {
    const s = await start();
    await step(s, "/sign-up/email", { email: ADA.email });
    const code = (await latestCode(h, ws, ADA.email))!;
    expect(await step(s, "/sign-in/email/verify", { code })).toEqual({ to: "page", error: "code_expired" });
    const t = await start();
    h.clock.advance(60_000);
    await step(t, "/sign-in/email", { email: ADA.email });
    const signInCode = (await latestCode(h, ws, ADA.email))!;
    expect(await step(t, "/sign-up/verify", { code: signInCode })).toEqual({ to: "page", error: "code_expired" });
  });

  it("asks for a password of at least 8 characters", async () => {
    const email = newAddress();
    const s = await proveAddress(email);
    expect(await step(s, "/sign-up/account", { credential: "password", password: "short12" })).toEqual({ to: "page", error: "weak_password" });
    expect(await userByEmail(email)).toBeNull();
    expect((await viewOf(h, s)).email.signUp.verifiedAddress).toBe(email);
    expect((await step(s, "/sign-up/account", { credential: "password", password: "longer123" })).to).toBe("callback");
  });

  it("with a passkey: the account has no password, and the sign-in asks for the passkey before it completes", async () => {
    const email = newAddress();
    const s = await proveAddress(email);
    expect(await step(s, "/sign-up/account", { credential: "passkey" })).toEqual({ to: "page", error: null });
    const user = (await userByEmail(email))!;
    expect(user).toMatchObject({ emailVerified: true, passwordHash: null });
    expect((await viewOf(h, s)).step).toEqual({ kind: "passkey_offer", required: true });
  });

  it("offers only the credentials the application accepts as first factors", async () => {
    await setPolicy({ signUp: true, firstFactors: ["email_otp", "passkey"] });
    const email = newAddress();
    const s = await proveAddress(email);
    expect((await viewOf(h, s)).email.signUp.credentials).toEqual(["passkey"]);
    expect(await step(s, "/sign-up/account", { credential: "password", password: "a new long password" })).toEqual({ to: "page", error: "method_not_allowed" });
    expect(await userByEmail(email)).toBeNull();
  });

  it("creates one account from a repeated submission", async () => {
    const email = newAddress();
    const s = await proveAddress(email);
    const view = await viewOf(h, s);
    const post = () =>
      call(h, `/t/${ws}/sign-up/account`, {
        form: { tx: s.tx, csrf: view.csrf, credential: "password", password: "a new long password" },
        cookie: s.jar.header(),
        headers: { origin: PUBLIC_URL },
      });
    const results = (await Promise.all([post(), post(), post()])).map((r) => (r.status === 303 ? outcome(r).to : r.status));
    expect(results.filter((r) => r === "callback")).toHaveLength(1);
    expect(await h.service.db.select().from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, email)))).toHaveLength(1);
  });

  it("creates nothing without a proved address", async () => {
    const s = await start();
    expect(await step(s, "/sign-up/account", { credential: "password", password: "a new long password" })).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).step.kind).toBe("first_factor");
  });

  it("'a different email' drops the proved address", async () => {
    const email = newAddress();
    const s = await proveAddress(email);
    const res = await postStep(h, s, "/sign-in/email/cancel", { then: "sign_up" });
    expect(res.headers.get("location")).toBe(`/t/${ws}/sign-in?tx=${s.tx}&sign_up=1`);
    expect((await viewOf(h, s)).email.signUp.verifiedAddress).toBeNull();
    expect(await step(s, "/sign-up/account", { credential: "password", password: "a new long password" })).toEqual({ to: "page", error: null });
    expect(await userByEmail(email)).toBeNull();
  });
});

describe("sign-up with a registered address", () => {
  it("looks the same on the page; the owner gets the account-exists message with a sign-in code, which signs in to the account", async () => {
    const fresh = newAddress();
    const a = await start();
    const b = await start();
    expect(await step(a, "/sign-up/email", { email: fresh })).toEqual({ to: "page", error: null });
    expect(await step(b, "/sign-up/email", { email: ADA.email })).toEqual({ to: "page", error: null });
    const [va, vb] = [await viewOf(h, a), await viewOf(h, b)];
    expect({ ...vb.email.signUp, codeSentTo: "x" }).toEqual({ ...va.email.signUp, codeSentTo: "x" });

    const [message] = await outboxFor(h, ws, ADA.email);
    const code = (await latestCode(h, ws, ADA.email))!;
    expect(message.subject).toBe(`${code} is your sign-in code for Workspace ${ws}`);
    expect(message.text).toContain("already has one");

    const before = (await userByEmail(ADA.email))!;
    const done = await step(b, "/sign-up/verify", { code });
    expect(done.to).toBe("callback");
    const after = (await userByEmail(ADA.email))!;
    expect(after.id).toBe(before.id);
    expect(after.passwordHash).toBe(before.passwordHash);
    const res = await exchangeCode(h, ws, { code: (done as { url: URL }).url.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: b.verifier, client_id: SPA.client_id });
    expect(decodeJwt((await res.json()).id_token)).toMatchObject({ email: ADA.email, amr: ["otp"] });
  });

  it("acts only at the first step: a registered address's code is refused at the second-factor step, unread", async () => {
    await setPolicy({ signUp: true }, { mfa: "required" });
    const { seed: secret } = await giveTotp(h, ws, BOB.email);
    const s = await start();
    expect(await step(s, "/sign-up/email", { email: BOB.email })).toEqual({ to: "page", error: null });
    const code = (await latestCode(h, ws, BOB.email))!;
    expect(outcome(await postPassword(h, s, BOB.email, BOB.password))).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).step).toEqual({ kind: "second_factor", options: ["totp"] });
    // The code would make the sign-in multi-factor, but this step offers an authenticator code only.
    expect(await step(s, "/sign-up/verify", { code })).toEqual({ to: "page", error: "invalid_code" });
    expect((await viewOf(h, s)).step.kind).toBe("second_factor");
    // Nor is a code sent from this step.
    h.clock.advance(60_000);
    expect(await step(s, "/sign-up/email", { email: BOB.email })).toEqual({ to: "page", error: null });
    expect(await latestCode(h, ws, BOB.email)).toBe(code);
    expect((await step(s, "/sign-in/totp", { code: codeAt(h, secret) })).to).toBe("callback");
  });

  it("without a code where the application does not accept email codes; nothing the user types opens it", async () => {
    await setPolicy({ signUp: true, firstFactors: ["password", "passkey"] });
    const s = await start();
    expect(await step(s, "/sign-up/email", { email: ADA.email })).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).email.signUp.codeSentTo).toBe(ADA.email);
    const [message] = await outboxFor(h, ws, ADA.email);
    expect(message.subject).toBe(`You already have an account at Workspace ${ws}`);
    // No code in it (the workspace's name, which holds random hex, is taken out first).
    expect(message.text.replaceAll(ws, "")).not.toMatch(/\d{6}/);
    expect(await step(s, "/sign-up/verify", { code: "000000" })).toEqual({ to: "page", error: "invalid_code" });
  });

  it("registered between the code and the password: signs in to that account, whose password stays", async () => {
    const email = newAddress();
    const s = await proveAddress(email);
    // Someone else (the console, another sign-up) creates the account meanwhile.
    const other = await signUpWithPassword(h, ws, { ...SPA, email, password: "the first password" }, new Jar()).catch(() => null);
    expect(other).toBeNull(); // the address is in cooldown for a second sign-up at once
    h.clock.advance(60_000);
    await signUpWithPassword(h, ws, { ...SPA, email, password: "the first password" });
    const done = await step(s, "/sign-up/account", { credential: "password", password: "a second password" });
    expect(done.to).toBe("callback");
    const user = (await userByEmail(email))!;
    expect(await verifyPassword(user.passwordHash!, "the first password")).toBe(true);
  });
});
