/**
 * MFA in the sign-in (policy `mfa: "required"`): the first sign-in enrols an authenticator app
 * and shows recovery codes, later sign-ins ask for a code, a live password session is stepped
 * up; each step acts only at its own step; and the guessing limits on second factors.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq, like } from "drizzle-orm";
import { decodeJwt } from "jose";
import { auditEvents, clients, factorChallenges, hostedSessions, totpFactors, users, webauthnCredentials } from "../../../db/schema";
import { CLIENT_ADDRESS_HEADER } from "../../../lib/http/client-address";
import { basic, createHarness, exchangeCode, Jar, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { SPA, standardWorkspace, WEB } from "../../helpers/fixtures";
import { outcome, passwordStep, postPassword, postStep, startSignIn, viewOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { enterSignInCode, latestCode, OUTBOX, requestSignInCode } from "../../helpers/factors/email";
import { codeAt, giveTotp, signInWithTotp } from "../../helpers/factors/totp";
import { giveRecoveryCodes, signInWithRecoveryCode } from "../../helpers/factors/recovery-codes";
import { postRegistration, SoftAuthenticator } from "../../helpers/factors/webauthn";

// 3 failures per account and address per 5 minutes, so 9 per account per hour from all addresses.
const PER_ADDRESS = 3;
const PER_ACCOUNT = 9;
const FIVE_MINUTES = 5 * 60_000;
const HOUR = 3600_000;

let h: Harness;
const ws = uniqueWorkspaceId("mfa");
const PASSWORD = "a long enough password for tests";
const user = (name: string) => ({ email: `${name}@example.test`, password: PASSWORD });
const NAMES = ["first", "stepup", "steps", "addr", "account", "recovery", "recovery-ceiling", "emailstep", "emailused", "audited"];

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX, rateLimits: { requestsPerMinute: 100_000, failuresPer5Minutes: PER_ADDRESS } });
  const doc = standardWorkspace(ws);
  doc.users.push(...NAMES.map((n) => ({ email: user(n).email, password: PASSWORD, email_verified: true })));
  await seed(h, doc);
  await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
  h.service.cache.clear();
});

/** Ends the user's hosted sessions (the browsers keep their cookies). */
async function endSessions(name: string) {
  const [row] = await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, user(name).email)));
  await h.service.db.update(hostedSessions).set({ endedAt: h.clock.now(), endReason: "logout" }).where(eq(hostedSessions.userId, row!.id));
}

async function idTokenOf(s: PendingSignIn, callback: URL) {
  const res = await exchangeCode(h, ws, { code: callback.searchParams.get("code")!, redirect_uri: WEB.redirect_uri, verifier: s.verifier, authorization: basic(WEB.client_id, WEB.secret) });
  expect(res.status).toBe(200);
  return decodeJwt((await res.json()).id_token);
}

describe("MFA required", () => {
  it("enrols an authenticator app at the first sign-in, then asks for a code; amr and acr say so", async () => {
    const s = await passwordStep(h, ws, { ...WEB, ...user("first") });
    await postStep(h, s, "/sign-in/totp/enroll/start");
    const { secret } = (await viewOf(h, s)).totp.enrollment!;
    await postStep(h, s, "/sign-in/totp/enroll", { code: codeAt(h, secret) });
    expect((await viewOf(h, s)).totp.recoveryCodes).toHaveLength(10);
    const done = outcome(await postStep(h, s, "/sign-in/recovery-codes/saved"));
    if (done.to !== "callback") throw new Error("not completed");
    expect(await idTokenOf(s, done.url)).toMatchObject({ amr: ["pwd", "otp", "mfa"], acr: "urn:latchkey:loa:2" });

    // Another browser: the password, then the code (of the next step: the enrolment's is used).
    h.clock.advance(30_000);
    const next = await passwordStep(h, ws, { ...WEB, ...user("first") });
    expect((await viewOf(h, next)).step).toEqual({ kind: "second_factor", options: ["totp", "recovery_code"] });
    const o = outcome(await postStep(h, next, "/sign-in/totp", { code: codeAt(h, secret) }));
    if (o.to !== "callback") throw new Error(`refused: ${o.error}`);
    expect(await idTokenOf(next, o.url)).toMatchObject({ amr: ["pwd", "otp", "mfa"], acr: "urn:latchkey:loa:2" });
  });

  it("audits an enrolment at the sign-in as the portal does: account_security.credential_added, the factor and the sign-in; its recovery codes as account_security.recovery_codes_generated", async () => {
    const s = await passwordStep(h, ws, { ...WEB, ...user("audited") });
    const [row] = await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, user("audited").email)));
    const added = () => h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "account_security.credential_added"), eq(auditEvents.subject, row!.id)));
    await postStep(h, s, "/sign-in/totp/enroll/start");
    const { secret } = (await viewOf(h, s)).totp.enrollment!;
    expect(await added()).toEqual([]);
    await postStep(h, s, "/sign-in/totp/enroll", { code: codeAt(h, secret) });
    const [factor] = await h.service.db.select({ id: totpFactors.id }).from(totpFactors).where(eq(totpFactors.userId, row!.id));
    const events = await added();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: row!.id, subject: row!.id });
    expect(events[0]!.data).toEqual({ kind: "totp", factor_id: factor!.id, sign_in: s.tx });
    // The recovery codes this first second factor comes with: the event the portal's generation writes, once.
    const codes = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.subject, row!.id), like(auditEvents.type, "%recovery_codes%")));
    expect(codes.map((e) => [e.type, e.actor, e.data])).toEqual([["account_security.recovery_codes_generated", row!.id, { count: 10, sign_in: s.tx }]]);

    // A security key added at the same step of another sign-in is audited alike.
    await h.service.db.delete(totpFactors).where(eq(totpFactors.userId, row!.id));
    h.clock.advance(30_000);
    const again = await passwordStep(h, ws, { ...WEB, ...user("audited") });
    const { res } = await postRegistration(h, again, new SoftAuthenticator(), "security_key");
    expect(outcome(res).to).toBe("callback");
    const [key] = await h.service.db.select({ id: webauthnCredentials.id }).from(webauthnCredentials).where(eq(webauthnCredentials.userId, row!.id));
    const keyEvent = (await added()).find((e) => e.data.kind === "security_key");
    expect(keyEvent).toMatchObject({ actor: row!.id, subject: row!.id });
    expect(keyEvent!.data).toEqual({ kind: "security_key", factor_id: key!.id, sign_in: again.tx });
  });

  it("steps up a live password session with a code: the same session, a new secret, the factor in its evidence", async () => {
    const { seed: secret, factorId } = await giveTotp(h, ws, user("stepup").email);
    const { jar } = await signIn(h, ws, { ...SPA, ...user("stepup") });
    const before = jar.get("lk_session")!;
    const s = await startSignIn(h, ws, WEB, jar);
    expect((await viewOf(h, s)).step).toEqual({ kind: "second_factor", options: ["totp"] });
    const o = outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret) }));
    expect(o.to).toBe("callback");
    const after = jar.get("lk_session")!;
    expect(after).not.toBe(before);
    const sessionId = after.split(".")[0];
    expect(before.startsWith(`${sessionId}.`)).toBe(true);
    const [row] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.id, sessionId));
    expect(row.evidence.map((e) => [e.method, e.factorId])).toEqual([
      ["password", null],
      ["totp", factorId],
    ]);
  });

  it("acts only at its own step: nothing is verified, enrolled or skipped from another step", async () => {
    const { seed: secret } = await giveTotp(h, ws, user("steps").email);
    // Before the first factor: the code is not even looked at.
    const s = await startSignIn(h, ws, WEB);
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret) }))).toEqual({ to: "page", error: null });
    expect(outcome(await postStep(h, s, "/sign-in/recovery-codes/saved"))).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).step.kind).toBe("first_factor");
    // At the second-factor step, "saved" does not skip it.
    const p = await passwordStep(h, ws, { ...WEB, ...user("steps") }, s.jar);
    expect(outcome(await postStep(h, p, "/sign-in/recovery-codes/saved"))).toEqual({ to: "page", error: null });
    expect((await viewOf(h, p)).step.kind).toBe("second_factor");
  });

  it("acts only on the methods the step offers: an email code at the second-factor step is refused like a wrong code, unread", async () => {
    const { seed: secret } = await giveTotp(h, ws, user("emailstep").email);
    const s = await startSignIn(h, ws, WEB);
    // A code asked for at the first step, then the password instead.
    expect(outcome(await requestSignInCode(h, s, user("emailstep").email))).toEqual({ to: "page", error: null });
    const code = (await latestCode(h, ws, user("emailstep").email))!;
    outcome(await postPassword(h, s, user("emailstep").email, PASSWORD));
    expect((await viewOf(h, s)).step).toEqual({ kind: "second_factor", options: ["totp"] });
    expect(outcome(await enterSignInCode(h, s, code))).toEqual({ to: "page", error: "invalid_code" });
    expect((await viewOf(h, s)).step.kind).toBe("second_factor");
    // The code was not even read: no attempt counted, not consumed.
    const [challenge] = await h.service.db.select().from(factorChallenges).where(and(eq(factorChallenges.workspaceId, ws), eq(factorChallenges.bindingId, s.tx)));
    expect(challenge).toMatchObject({ attempts: 0, consumedAt: null });
    // Nor is a new code sent from this step.
    h.clock.advance(60_000);
    expect(outcome(await requestSignInCode(h, s, user("emailstep").email))).toEqual({ to: "page", error: null });
    expect(await latestCode(h, ws, user("emailstep").email)).toBe(code);
    // The step's own method still works.
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret) })).to).toBe("callback");
  });

  it("answers a code already used for the first factor, posted again at the second-factor step, as used (code_expired), as a parallel post that lost the race to it would be", async () => {
    await giveTotp(h, ws, user("emailused").email);
    const s = await startSignIn(h, ws, WEB);
    expect(outcome(await requestSignInCode(h, s, user("emailused").email))).toEqual({ to: "page", error: null });
    const code = (await latestCode(h, ws, user("emailused").email))!;
    expect(outcome(await enterSignInCode(h, s, code))).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).step.kind).toBe("second_factor");
    expect(outcome(await enterSignInCode(h, s, code))).toEqual({ to: "page", error: "code_expired" });
    expect((await viewOf(h, s)).step.kind).toBe("second_factor");
  });
});

describe("guessing limits on second factors", () => {
  const from = (address: string) => ({ [CLIENT_ADDRESS_HEADER]: address });

  it("per account and address: the right code then answers like a wrong one, until the window ends", async () => {
    const { seed: secret } = await giveTotp(h, ws, user("addr").email);
    const s = await passwordStep(h, ws, { ...WEB, ...user("addr") });
    const wrong = codeAt(h, secret, 10);
    for (let i = 0; i < PER_ADDRESS; i++) {
      expect(outcome(await postStep(h, s, "/sign-in/totp", { code: wrong }, { headers: from("198.51.100.1") }))).toEqual({ to: "page", error: "invalid_code" });
    }
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret) }, { headers: from("198.51.100.1") }))).toEqual({ to: "page", error: "invalid_code" });
    // The limited attempt checked nothing: the code's step is still unused, and another address may use it.
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret) }, { headers: from("198.51.100.2") })).to).toBe("callback");

    h.clock.advance(FIVE_MINUTES);
    const later = await passwordStep(h, ws, { ...WEB, ...user("addr") });
    expect(outcome(await postStep(h, later, "/sign-in/totp", { code: codeAt(h, secret) }, { headers: from("198.51.100.1") })).to).toBe("callback");
  });

  it("per account from every address: a ceiling per hour that only a browser that passed the code before passes; then anyone", async () => {
    const { seed: secret } = await giveTotp(h, ws, user("account").email);
    // The owner passed an authenticator code on this browser before: a known device for TOTP.
    const { jar: owner } = await signInWithTotp(h, ws, { ...WEB, ...user("account"), seed: secret });
    await endSessions("account");
    h.clock.advance(30_000);
    const wrong = codeAt(h, secret, 10);
    const s = await passwordStep(h, ws, { ...WEB, ...user("account") });
    for (let i = 0; i < PER_ACCOUNT; i++) {
      expect(outcome(await postStep(h, s, "/sign-in/totp", { code: wrong }, { headers: from(`192.0.2.${Math.floor(i / PER_ADDRESS)}`) }))).toEqual({ to: "page", error: "invalid_code" });
    }
    // A new address, the right code: refused like a wrong one.
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret) }, { headers: from("192.0.2.200") }))).toEqual({ to: "page", error: "invalid_code" });
    // A fresh session made by the password alone (at an application without MFA), stepped up here: still refused.
    for (let i = 0; i < 3; i++) {
      const { jar } = await signIn(h, ws, { ...SPA, ...user("account") });
      const walkAround = await startSignIn(h, ws, WEB, jar);
      expect((await viewOf(h, walkAround)).step.kind).toBe("second_factor");
      expect(outcome(await postStep(h, walkAround, "/sign-in/totp", { code: codeAt(h, secret) }, { headers: from(`192.0.2.${210 + i}`) }))).toEqual({ to: "page", error: "invalid_code" });
    }
    // The owner's browser gets in.
    const mine = await passwordStep(h, ws, { ...WEB, ...user("account") }, owner);
    expect(outcome(await postStep(h, mine, "/sign-in/totp", { code: codeAt(h, secret) }, { headers: from("192.0.2.201") })).to).toBe("callback");

    h.clock.advance(HOUR);
    const anyone = await passwordStep(h, ws, { ...WEB, ...user("account") });
    expect(outcome(await postStep(h, anyone, "/sign-in/totp", { code: codeAt(h, secret) }, { headers: from("192.0.2.202") })).to).toBe("callback");
  });

  it("recovery codes: the account ceiling holds against fresh password-only sessions; a browser that used one before passes", async () => {
    await giveTotp(h, ws, user("recovery-ceiling").email);
    const codes = await giveRecoveryCodes(h, ws, user("recovery-ceiling").email);
    const { jar: owner } = await signInWithRecoveryCode(h, ws, { ...WEB, ...user("recovery-ceiling"), code: codes[0]! });
    await endSessions("recovery-ceiling");
    const s = await passwordStep(h, ws, { ...WEB, ...user("recovery-ceiling") });
    for (let i = 0; i < PER_ACCOUNT; i++) {
      expect(outcome(await postStep(h, s, "/sign-in/recovery-code", { code: "aaaa-aaaaaaaa-aaaaaaaa" }, { headers: from(`198.18.0.${Math.floor(i / PER_ADDRESS)}`) }))).toEqual({
        to: "page",
        error: "invalid_recovery_code",
      });
    }
    expect(outcome(await postStep(h, s, "/sign-in/recovery-code", { code: codes[1]! }, { headers: from("198.18.1.1") }))).toEqual({ to: "page", error: "invalid_recovery_code" });
    for (let i = 0; i < 3; i++) {
      const { jar } = await signIn(h, ws, { ...SPA, ...user("recovery-ceiling") });
      const walkAround = await startSignIn(h, ws, WEB, jar);
      expect(outcome(await postStep(h, walkAround, "/sign-in/recovery-code", { code: codes[1]! }, { headers: from(`198.18.2.${i}`) }))).toEqual({
        to: "page",
        error: "invalid_recovery_code",
      });
    }
    const mine = await passwordStep(h, ws, { ...WEB, ...user("recovery-ceiling") }, owner);
    expect(outcome(await postStep(h, mine, "/sign-in/recovery-code", { code: codes[1]! }, { headers: from("198.18.3.1") })).to).toBe("callback");
  });

  it("recovery codes have their own limit, answered like a wrong code", async () => {
    await giveTotp(h, ws, user("recovery").email);
    const [code] = await giveRecoveryCodes(h, ws, user("recovery").email);
    const s = await passwordStep(h, ws, { ...WEB, ...user("recovery") });
    for (let i = 0; i < PER_ADDRESS; i++) {
      expect(outcome(await postStep(h, s, "/sign-in/recovery-code", { code: "aaaa-aaaaaaaa-aaaaaaaa" }, { headers: from("203.0.113.9") }))).toEqual({ to: "page", error: "invalid_recovery_code" });
    }
    expect(outcome(await postStep(h, s, "/sign-in/recovery-code", { code }, { headers: from("203.0.113.9") }))).toEqual({ to: "page", error: "invalid_recovery_code" });
    h.clock.advance(FIVE_MINUTES);
    expect(outcome(await postStep(h, s, "/sign-in/recovery-code", { code }, { headers: from("203.0.113.9") })).to).toBe("callback");
  });
});
