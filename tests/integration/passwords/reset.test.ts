/**
 * Self-service password reset (lib/sign-in/steps/password-reset.ts, lib/authn/passwords/change.ts)
 * and the new password asked in place of a breached one: the policy (off by default), the code,
 * the page that answers alike for every address (the same statements), the account's further
 * factor before the change, the change itself (once; every session and refresh family ended; the
 * old password dead), and the audit events.
 */
import { and, eq, isNull } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, hostedSessions, users, workspaces } from "../../../db/schema";
import { hashPassword } from "../../../lib/authn/password";
import { mailSettled } from "../../../lib/authn/email/transport";
import { SEND_WINDOW_MS, EMAIL_CODE_MAX_ATTEMPTS } from "../../../lib/authn/factors/email-code";
import { loadPasswordPolicy, savePasswordPolicy } from "../../../lib/authn/passwords/policy";
import { exportWorkspace, importWorkspace } from "../../../lib/workspaces/file";
import { WorkspaceFileError } from "../../../lib/surfaces/workspace-file";
import { call, createHarness, exchangeCode, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, BOB, SPA, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postPassword, postStep, startSignIn, userIdOf, viewOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { latestCode, outboxFor, OUTBOX } from "../../helpers/factors/email";
import { codeAt, giveTotp } from "../../helpers/factors/totp";
import { statementsDuring } from "../../helpers/statements";
import { giveRecoveryCodes } from "../../helpers/factors/recovery-codes";

let h: Harness;
const ws = uniqueWorkspaceId("reset");
const NEW = "velvet harbour 93 lantern";
const CAROL = { email: "carol@example.test", password: "carol's long passphrase 77" };
const NOPASS = { email: "nopass@example.test" };

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX });
  const doc = standardWorkspace(ws);
  await seed(h, { ...doc, users: [...doc.users, { ...CAROL, email_verified: true }, { ...NOPASS, email_verified: true }], password_screening: { minimum_score: 2 }, password_reset: "email" });
});

const auditOf = async (type: string) =>
  h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, type)));

/** A fresh sign-in (the send window passed, so earlier tests' sends do not count) that asked for a reset code for `email`. */
async function askReset(email: string): Promise<PendingSignIn> {
  h.clock.advance(SEND_WINDOW_MS);
  const s = await startSignIn(h, ws, SPA);
  expect(outcome(await postStep(h, s, "/sign-in/reset/email", { email }))).toEqual({ to: "page", error: null });
  return s;
}

/** Asks for a code and enters it: the sign-in then asks for the new password. */
async function provedMailbox(email: string): Promise<PendingSignIn> {
  const s = await askReset(email);
  const code = await latestCode(h, ws, email);
  expect(code).not.toBeNull();
  expect(outcome(await postStep(h, s, "/sign-in/reset/verify", { code: code! }))).toEqual({ to: "page", error: null });
  expect((await viewOf(h, s)).step).toEqual({ kind: "new_password", reason: "reset" });
  return s;
}

const passwordWorks = async (email: string, password: string) => {
  const s = await startSignIn(h, ws, SPA);
  const o = outcome(await postPassword(h, s, email, password));
  return o.to === "callback";
};

describe("the policy", () => {
  it("is off by default: no link, and the reset's posts are refused", async () => {
    const off = uniqueWorkspaceId("reset-off");
    await seed(h, standardWorkspace(off));
    expect(await loadPasswordPolicy(h.service.db, off)).toEqual({ screening: null, reset: "off" });
    const s = await startSignIn(h, off, SPA);
    expect((await viewOf(h, s)).passwordReset.available).toBe(false);
    expect(outcome(await postStep(h, s, "/sign-in/reset/email", { email: ADA.email }))).toEqual({ to: "page", error: "method_not_allowed" });
    expect(await outboxFor(h, off, ADA.email)).toHaveLength(0);
  });

  it("is offered only to applications that accept passwords", async () => {
    const s = await startSignIn(h, ws, SPA);
    expect((await viewOf(h, s)).passwordReset.available).toBe(true);
    await h.service.db.update(workspaces).set({ authPolicy: { firstFactors: ["email_otp", "passkey"] } }).where(eq(workspaces.id, ws));
    h.service.cache.clear();
    try {
      const t = await startSignIn(h, ws, SPA);
      expect((await viewOf(h, t)).passwordReset.available).toBe(false);
      expect(outcome(await postStep(h, t, "/sign-in/reset/email", { email: ADA.email }))).toEqual({ to: "page", error: "method_not_allowed" });
    } finally {
      await h.service.db.update(workspaces).set({ authPolicy: {} }).where(eq(workspaces.id, ws));
      h.service.cache.clear();
    }
  });

  it("travels in the workspace file as password_reset, and a file that leaves it out turns it off", async () => {
    const other = uniqueWorkspaceId("reset-file");
    await seed(h, { ...standardWorkspace(other), password_reset: "email" });
    expect((await loadPasswordPolicy(h.service.db, other)).reset).toBe("email");
    const file = (await exportWorkspace(h.service.db, other))!;
    expect(file.password_reset).toBe("email");
    const { password_reset: _left, ...without } = file;
    await importWorkspace(h.service.db, without, { clock: h.clock, masterKey: h.service.config.masterKey });
    expect((await loadPasswordPolicy(h.service.db, other)).reset).toBe("off");
    const bad = await importWorkspace(h.service.db, { ...file, password_reset: "sms" }, { clock: h.clock, masterKey: h.service.config.masterKey }).catch((e: unknown) => e);
    expect((bad as WorkspaceFileError).issues[0]).toMatchObject({ path: "$.password_reset" });
    // Saving the screening keeps the reset, and the other way round.
    await savePasswordPolicy(h.service.db, other, { reset: "email" }, h.clock.now());
    await savePasswordPolicy(h.service.db, other, { screening: { minimumScore: 3 } }, h.clock.now());
    expect(await loadPasswordPolicy(h.service.db, other)).toEqual({ screening: { minimumScore: 3 }, reset: "email" });
  });
});

describe("asking for a code", () => {
  it("sends a code to an account with a password, how it signs in to one without, and nothing to an unknown or disabled one; the page is the same", async () => {
    for (const email of [CAROL.email, NOPASS.email, "nobody@example.test"]) {
      const s = await askReset(email);
      const view = await viewOf(h, s);
      expect(view.passwordReset).toEqual({ available: true, codeSentTo: email, codeDead: false });
    }
    const [toCarol] = await outboxFor(h, ws, CAROL.email);
    expect(toCarol.subject).toMatch(/^\d{6} is your code to reset your password at /);
    const [toNoPass] = await outboxFor(h, ws, NOPASS.email);
    expect(toNoPass.subject).toMatch(/^About your password at /);
    expect(toNoPass.text).toContain("has no password");
    expect(toNoPass.text).not.toMatch(/\bcode\b/i);
    expect(await outboxFor(h, ws, "nobody@example.test")).toHaveLength(0);
    const reasons = (await auditOf("password_reset.requested")).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(["code_sent", "no_password", "unknown_account"]));
  });

  it("runs the same statements for an account with a password, one without, and an unknown address", async () => {
    const statementsOf = async (email: string) => {
      h.clock.advance(SEND_WINDOW_MS);
      const s = await startSignIn(h, ws, SPA);
      const { csrf } = await viewOf(h, s);
      const { statements } = await statementsDuring(h.service.db, async () => {
        expect(outcome(await postStep(h, s, "/sign-in/reset/email", { email }, { csrf }))).toEqual({ to: "page", error: null });
        await mailSettled();
      });
      // The limiter's background writes and the message's own record (after the answer) left out.
      return statements.filter((sql) => !/"rate_limits"|"mail_outbox"/.test(sql));
    };
    const unknown = await statementsOf("someone-else@example.test");
    expect(unknown.length).toBeGreaterThan(0);
    expect(await statementsOf(CAROL.email)).toEqual(unknown);
    expect(await statementsOf(NOPASS.email)).toEqual(unknown);
  });

  it("bounds sending by the email code's limits: a resend waits, and the address's sends are counted with sign-in codes", async () => {
    const s = await askReset(BOB.email);
    expect(outcome(await postStep(h, s, "/sign-in/reset/email", { email: BOB.email }))).toEqual({ to: "page", error: "code_resend_wait" });
    // Sign-in codes and reset codes share one budget per address.
    h.clock.advance(SEND_WINDOW_MS);
    let last: string | null = null;
    for (let i = 0; i < 6; i++) {
      h.clock.advance(31_000);
      const t = await startSignIn(h, ws, SPA);
      last = (outcome(await postStep(h, t, i % 2 ? "/sign-in/email" : "/sign-in/reset/email", { email: BOB.email })) as { error: string | null }).error;
    }
    expect(last).toBe("rate_limited");
  });

  it("refuses a wrong code as the email code does, and kills it after five", async () => {
    const s = await askReset(CAROL.email);
    const right = await latestCode(h, ws, CAROL.email);
    const wrong = right === "000000" ? "111111" : "000000";
    for (let i = 0; i < EMAIL_CODE_MAX_ATTEMPTS - 1; i++) expect(outcome(await postStep(h, s, "/sign-in/reset/verify", { code: wrong }))).toEqual({ to: "page", error: "invalid_code" });
    expect(outcome(await postStep(h, s, "/sign-in/reset/verify", { code: wrong }))).toEqual({ to: "page", error: "code_expired" });
    expect(outcome(await postStep(h, s, "/sign-in/reset/verify", { code: right! }))).toEqual({ to: "page", error: "code_expired" });
    expect((await viewOf(h, s)).step.kind).toBe("first_factor");
    expect((await auditOf("password_reset.refused")).map((e) => e.reason)).toEqual(expect.arrayContaining(["wrong_code", "code_expired"]));
    expect(await passwordWorks(CAROL.email, CAROL.password)).toBe(true);
  });
});

describe("choosing the new password", () => {
  it("screens it, then changes the password, ends every session and refresh family of the account, and says so once", async () => {
    const user = await userIdOf(h, ws, ADA.email);
    // A session and a refresh family from before (another browser).
    const before = await signIn(h, ws, { ...SPA, ...ADA, scope: "openid email" });
    const tokens = await (await exchangeCode(h, ws, { code: before.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: before.verifier, client_id: SPA.client_id })).json();
    expect(tokens.refresh_token).toBeTruthy();

    const s = await provedMailbox(ADA.email);
    expect(outcome(await postStep(h, s, "/sign-in/new-password", { password: "short" }))).toEqual({ to: "page", error: "weak_password" });
    expect(outcome(await postStep(h, s, "/sign-in/new-password", { password: "password123" }))).toEqual({ to: "page", error: "password_common" });
    expect((await auditOf("password_reset.refused")).some((e) => e.reason === "password_refused" && e.subject === user)).toBe(true);
    // Refused: nothing changed yet.
    expect(await passwordWorks(ADA.email, ADA.password)).toBe(true);

    expect(outcome(await postStep(h, s, "/sign-in/new-password", { password: NEW }))).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).step).toEqual({ kind: "password_changed" });
    expect(await passwordWorks(ADA.email, ADA.password)).toBe(false);
    expect(await passwordWorks(ADA.email, NEW)).toBe(true);
    // The earlier browser's session and refresh family ended with the change.
    const refreshed = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: SPA.client_id } });
    expect(refreshed.status).toBe(400);
    expect((await refreshed.json()).error).toBe("invalid_grant");
    const [changed] = (await auditOf("password.changed")).filter((e) => e.subject === user);
    expect(changed.data).toMatchObject({ via: "reset", grants_ended: 1 });
    expect((changed.data as { sessions_ended: number }).sessions_ended).toBeGreaterThanOrEqual(1);

    // "Continue": the application accepts email codes as a first factor, so the code that proved the mailbox completes the sign-in.
    expect(outcome(await postStep(h, s, "/sign-in/password-changed")).to).toBe("callback");
    await h.service.db.update(users).set({ passwordHash: await hashPassword(ADA.password) }).where(eq(users.id, user));
  });

  it("changes it once when two posts race", async () => {
    const s = await provedMailbox(CAROL.email);
    const { csrf } = await viewOf(h, s);
    const candidates = ["first racing passphrase 41", "second racing passphrase 42", "third racing passphrase 43"];
    await Promise.all(candidates.map((password) => postStep(h, s, "/sign-in/new-password", { password }, { csrf })));
    const works = [];
    for (const p of candidates) works.push(await passwordWorks(CAROL.email, p));
    expect(works.filter(Boolean)).toHaveLength(1);
    const user = await userIdOf(h, ws, CAROL.email);
    expect((await auditOf("password.changed")).filter((e) => e.subject === user)).toHaveLength(1);
    await h.service.db.update(users).set({ passwordHash: await hashPassword(CAROL.password) }).where(eq(users.id, user));
  });

  it("asks an account with a further factor for it before the password changes; a recovery code does too", async () => {
    const { seed: totpSeed } = await giveTotp(h, ws, BOB.email);
    const [recovery] = await giveRecoveryCodes(h, ws, BOB.email);
    const s = await provedMailbox(BOB.email);
    expect(outcome(await postStep(h, s, "/sign-in/new-password", { password: NEW }))).toEqual({ to: "page", error: null });
    const view = await viewOf(h, s);
    expect(view.step).toEqual({ kind: "second_factor", options: ["totp", "recovery_code"] });
    expect(view.resetting).toBe(true);
    // Not yet: the mailbox alone changed nothing.
    const bob = await userIdOf(h, ws, BOB.email);
    const [row] = await h.service.db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, bob));
    const { verifyPassword } = await import("../../../lib/authn/password");
    expect(await verifyPassword(row.hash!, BOB.password)).toBe(true);
    // A wrong authenticator code changes nothing either.
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, totpSeed, 5) }))).toEqual({ to: "page", error: "invalid_code" });
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, totpSeed) }))).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).step).toEqual({ kind: "password_changed" });
    const [after] = await h.service.db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, bob));
    expect(await verifyPassword(after.hash!, NEW)).toBe(true);

    // Again with a recovery code in place of the app, for an application that accepts passwords only and requires MFA.
    await h.service.db.update(workspaces).set({ authPolicy: { firstFactors: ["password"], mfa: "required" } }).where(eq(workspaces.id, ws));
    h.service.cache.clear();
    try {
      h.clock.advance(60_000);
      const t = await provedMailbox(BOB.email);
      expect(outcome(await postStep(h, t, "/sign-in/new-password", { password: BOB.password }))).toEqual({ to: "page", error: null });
      expect(outcome(await postStep(h, t, "/sign-in/recovery-code", { code: recovery }))).toEqual({ to: "page", error: null });
      expect((await viewOf(h, t)).step).toEqual({ kind: "password_changed" });
      // After "Continue", the user signs in with the new password; the recovery code the reset took counts as the second factor.
      expect(outcome(await postStep(h, t, "/sign-in/password-changed"))).toEqual({ to: "page", error: null });
      expect((await viewOf(h, t)).step.kind).toBe("first_factor");
      expect(outcome(await postPassword(h, t, BOB.email, BOB.password)).to).toBe("callback");
    } finally {
      await h.service.db.update(workspaces).set({ authPolicy: {} }).where(eq(workspaces.id, ws));
      h.service.cache.clear();
    }
  });

  it("drops what the reset proved when the user goes back", async () => {
    const s = await provedMailbox(CAROL.email);
    expect(outcome(await postStep(h, s, "/sign-in/reset/cancel"))).toEqual({ to: "page", error: null });
    const view = await viewOf(h, s);
    expect(view.step.kind).toBe("first_factor");
    expect(view.userEmail).toBeNull();
    // The new-password step is gone with it.
    expect(outcome(await postStep(h, s, "/sign-in/new-password", { password: NEW }))).toEqual({ to: "page", error: null });
    expect(await passwordWorks(CAROL.email, CAROL.password)).toBe(true);
  });
});

describe("a password known from a breach, at sign-in", () => {
  it("asks for a new one before the sign-in completes, where the workspace screens and offers resets", async () => {
    const DAVE = { email: "dave@example.test", password: "iloveyou" };
    await h.service.db.insert(users).values({
      id: `u-dave-${ws}`,
      workspaceId: ws,
      email: DAVE.email,
      emailNormalized: DAVE.email,
      emailVerified: true,
      passwordHash: await hashPassword(DAVE.password),
      status: "active",
      createdAt: h.clock.now(),
      updatedAt: h.clock.now(),
    });
    const s = await startSignIn(h, ws, SPA);
    expect(outcome(await postPassword(h, s, DAVE.email, DAVE.password))).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).step).toEqual({ kind: "new_password", reason: "breached" });
    expect(outcome(await postStep(h, s, "/sign-in/new-password", { password: "qwerty123" }))).toEqual({ to: "page", error: "password_common" });
    expect(outcome(await postStep(h, s, "/sign-in/new-password", { password: NEW }))).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).step).toEqual({ kind: "password_changed" });
    expect(outcome(await postStep(h, s, "/sign-in/password-changed")).to).toBe("callback");
    const [changed] = (await auditOf("password.changed")).filter((e) => e.subject === `u-dave-${ws}`);
    expect(changed.data).toMatchObject({ via: "breached" });

    // Where resets are off, the sign-in is not held up (the console counts the account instead).
    await h.service.db.update(users).set({ passwordHash: await hashPassword(DAVE.password) }).where(eq(users.id, `u-dave-${ws}`));
    await savePasswordPolicy(h.service.db, ws, { reset: "off" }, h.clock.now());
    try {
      expect(await passwordWorks(DAVE.email, DAVE.password)).toBe(true);
    } finally {
      await savePasswordPolicy(h.service.db, ws, { reset: "email" }, h.clock.now());
    }
    const live = await h.service.db.select({ id: hostedSessions.id }).from(hostedSessions).where(and(eq(hostedSessions.userId, `u-dave-${ws}`), isNull(hostedSessions.endedAt)));
    expect(live.length).toBeGreaterThan(0);
  });
});
