/**
 * Authenticator apps (lib/authn/factors/totp/totp.ts, lib/sign-in/steps/totp.ts): the enrolment in the
 * sign-in, the ±1 step window, one use per step (the enrolment's code included), the seed
 * encrypted at rest, unconfirmed enrolments, and one success among parallel uses of a step.
 */
import { beforeAll, describe, expect, inject, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { clients, totpFactors, users } from "../../../db/schema";
import { decryptSecret } from "../../../lib/crypto";
import { MINUTE } from "../../../lib/clock";
import { ENROLLABLE_KINDS } from "../../../lib/authn/factors/registry";
import { ENROLMENT_TTL_MS, stepAt, totpCode, verifyTotp } from "../../../lib/authn/factors/totp";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { standardWorkspace, WEB } from "../../helpers/fixtures";
import { outcome, passwordStep, postStep, userIdOf, viewOf, workspaceContext } from "../../helpers/factors/sign-in";
import { codeAt, giveTotp, signInWithTotp } from "../../helpers/factors/totp";

let h: Harness;
const ws = uniqueWorkspaceId("totp");
const PASSWORD = "a long enough password for tests";
const user = (name: string) => ({ email: `${name}@example.test`, password: PASSWORD });
const NAMES = ["enrol", "wrong", "setup", "window", "replay", "older", "unconfirmed", "restart", "stale", "has-factor", "race", "evidence", "disabled"];

beforeAll(async () => {
  h = await createHarness();
  const doc = standardWorkspace(ws);
  doc.users.push(...NAMES.map((n) => ({ email: user(n).email, password: PASSWORD, email_verified: true })));
  await seed(h, doc);
  await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
  h.service.cache.clear();
});

const factorsOf = async (email: string) => h.service.db.select().from(totpFactors).where(and(eq(totpFactors.workspaceId, ws), eq(totpFactors.userId, await userIdOf(h, ws, email))));

describe("enrolling an authenticator app in the sign-in", () => {
  it("shows a QR code and the secret once started, stores the seed encrypted, and completes with a valid code", async () => {
    const s = await passwordStep(h, ws, { ...WEB, ...user("enrol") });
    let view = await viewOf(h, s);
    // Every kind the user can enrol, the authenticator app first (lib/authn/factors/registry.test.ts pins them).
    expect(view.step).toEqual({ kind: "enroll_second_factor", options: [...ENROLLABLE_KINDS] });
    expect(ENROLLABLE_KINDS[0]).toBe("totp");
    expect(view.totp.enrollment).toBeNull();

    expect(outcome(await postStep(h, s, "/sign-in/totp/enroll/start"))).toEqual({ to: "page", error: null });
    view = await viewOf(h, s);
    const enrollment = view.totp.enrollment!;
    expect(enrollment.secret).toMatch(/^[A-Z2-7]{32}$/); // 160 bits
    expect(enrollment.qrSvg.startsWith("data:image/svg+xml;base64,")).toBe(true);
    const svg = Buffer.from(enrollment.qrSvg.split(",")[1], "base64").toString();
    expect(svg).toContain("<svg");

    // At rest: AES-256-GCM under the master key, never the seed itself.
    const [row] = await factorsOf(user("enrol").email);
    expect(row.confirmedAt).toBeNull();
    expect(row.secretEncrypted).not.toContain(enrollment.secret);
    expect(row.secretEncrypted.startsWith("v1.")).toBe(true);
    expect(decryptSecret(h.service.config.masterKey, row.secretEncrypted, "totp-seed")).toBe(enrollment.secret);

    const res = await postStep(h, s, "/sign-in/totp/enroll", { code: codeAt(h, enrollment.secret) });
    expect(outcome(res)).toEqual({ to: "page", error: null });
    const [confirmed] = await factorsOf(user("enrol").email);
    expect(confirmed.confirmedAt).toEqual(h.clock.now());
    // The setup code's step counts as used.
    expect(confirmed.lastUsedStep).toBe(stepAt(h.clock.now()));
    view = await viewOf(h, s);
    expect(view.step).toEqual({ kind: "recovery_codes" });
    expect(view.totp.recoveryCodes).toHaveLength(10);
  });

  it("does not complete with a wrong code", async () => {
    const s = await passwordStep(h, ws, { ...WEB, ...user("wrong") });
    await postStep(h, s, "/sign-in/totp/enroll/start");
    const { secret } = (await viewOf(h, s)).totp.enrollment!;
    const wrong = codeAt(h, secret, 5);
    expect(outcome(await postStep(h, s, "/sign-in/totp/enroll", { code: wrong }))).toEqual({ to: "page", error: "invalid_code" });
    expect(outcome(await postStep(h, s, "/sign-in/totp/enroll", { code: "12345" }))).toEqual({ to: "page", error: "invalid_code" });
    const [row] = await factorsOf(user("wrong").email);
    expect(row.confirmedAt).toBeNull();
    expect((await viewOf(h, s)).step.kind).toBe("enroll_second_factor");
  });

  it("refuses the enrolment's code at the next sign-in (same step); the next step's code works", async () => {
    const s = await passwordStep(h, ws, { ...WEB, ...user("setup") });
    await postStep(h, s, "/sign-in/totp/enroll/start");
    const { secret } = (await viewOf(h, s)).totp.enrollment!;
    const setupCode = codeAt(h, secret);
    await postStep(h, s, "/sign-in/totp/enroll", { code: setupCode });
    const done = outcome(await postStep(h, s, "/sign-in/recovery-codes/saved"));
    expect(done.to).toBe("callback");

    const again = await passwordStep(h, ws, { ...WEB, ...user("setup") });
    expect((await viewOf(h, again)).step).toEqual({ kind: "second_factor", options: ["totp", "recovery_code"] });
    expect(outcome(await postStep(h, again, "/sign-in/totp", { code: setupCode }))).toEqual({ to: "page", error: "invalid_code" });
    h.clock.advance(30_000);
    expect(outcome(await postStep(h, again, "/sign-in/totp", { code: codeAt(h, secret) })).to).toBe("callback");
  });

  it("replaces an unfinished enrolment when started again, and refuses one left past its lifetime", async () => {
    const s = await passwordStep(h, ws, { ...WEB, ...user("restart") });
    await postStep(h, s, "/sign-in/totp/enroll/start");
    const first = (await viewOf(h, s)).totp.enrollment!.secret;
    await postStep(h, s, "/sign-in/totp/enroll/start");
    const second = (await viewOf(h, s)).totp.enrollment!.secret;
    expect(second).not.toBe(first);
    expect(await factorsOf(user("restart").email)).toHaveLength(1);
    // The replaced seed's code completes nothing.
    expect(outcome(await postStep(h, s, "/sign-in/totp/enroll", { code: codeAt(h, first) }))).toEqual({ to: "page", error: "invalid_code" });
    // An older unfinished enrolment (another tab) is removed when this one completes.
    const [current] = await factorsOf(user("restart").email);
    await h.service.db.insert(totpFactors).values({ ...current, id: `${current.id}-other`, createdAt: new Date(current.createdAt.getTime() - MINUTE) });
    expect(outcome(await postStep(h, s, "/sign-in/totp/enroll", { code: codeAt(h, second) }))).toEqual({ to: "page", error: null });
    expect((await factorsOf(user("restart").email)).map((f) => [f.id, f.confirmedAt !== null])).toEqual([[current.id, true]]);

    const stale = await passwordStep(h, ws, { ...WEB, ...user("stale") });
    await postStep(h, stale, "/sign-in/totp/enroll/start");
    const { secret } = (await viewOf(h, stale)).totp.enrollment!;
    const [row] = await factorsOf(user("stale").email);
    // Backdate the enrolment past its lifetime (the transaction itself is still open).
    await h.service.db.update(totpFactors).set({ createdAt: new Date(h.clock.now().getTime() - ENROLMENT_TTL_MS - MINUTE) }).where(eq(totpFactors.id, row.id));
    expect((await viewOf(h, stale)).totp.enrollment).toBeNull();
    expect(outcome(await postStep(h, stale, "/sign-in/totp/enroll", { code: codeAt(h, secret) }))).toEqual({ to: "page", error: "enrollment_failed" });
    expect((await factorsOf(user("stale").email))[0].confirmedAt).toBeNull();
  });

  it("cannot add an authenticator app to an account that has a second factor (the first factor alone is not enough)", async () => {
    await giveTotp(h, ws, user("has-factor").email);
    const s = await passwordStep(h, ws, { ...WEB, ...user("has-factor") });
    expect((await viewOf(h, s)).step.kind).toBe("second_factor");
    expect(outcome(await postStep(h, s, "/sign-in/totp/enroll/start"))).toEqual({ to: "page", error: null });
    expect(await factorsOf(user("has-factor").email)).toHaveLength(1);
    expect((await viewOf(h, s)).totp.enrollment).toBeNull();
  });
});

describe("authenticator codes at the second-factor step", () => {
  it("accepts the code of the step before and after the current one, and refuses two steps away", async () => {
    const { seed: secret } = await giveTotp(h, ws, user("window").email);
    const s = await passwordStep(h, ws, { ...WEB, ...user("window") });
    for (const offset of [-2, 2]) {
      expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret, offset) }))).toEqual({ to: "page", error: "invalid_code" });
    }
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret, -1) })).to).toBe("callback");

    const ahead = await passwordStep(h, ws, { ...WEB, ...user("window") });
    expect(outcome(await postStep(h, ahead, "/sign-in/totp", { code: codeAt(h, secret, 1) })).to).toBe("callback");
  });

  it("accepts a code once, and no code of an earlier step after a later one", async () => {
    const { seed: secret } = await giveTotp(h, ws, user("replay").email);
    const first = await signInWithTotp(h, ws, { ...WEB, ...user("replay"), seed: secret });
    expect(first.callback.searchParams.get("code")).toBeTruthy();
    const s = await passwordStep(h, ws, { ...WEB, ...user("replay") });
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret) }))).toEqual({ to: "page", error: "invalid_code" });

    const { seed: other } = await giveTotp(h, ws, user("older").email);
    const later = await passwordStep(h, ws, { ...WEB, ...user("older") });
    expect(outcome(await postStep(h, later, "/sign-in/totp", { code: codeAt(h, other, 1) })).to).toBe("callback");
    const earlier = await passwordStep(h, ws, { ...WEB, ...user("older") });
    expect(outcome(await postStep(h, earlier, "/sign-in/totp", { code: codeAt(h, other, 0) }))).toEqual({ to: "page", error: "invalid_code" });
  });

  it("never verifies with an unconfirmed enrolment", async () => {
    const s = await passwordStep(h, ws, { ...WEB, ...user("unconfirmed") });
    await postStep(h, s, "/sign-in/totp/enroll/start");
    const { secret } = (await viewOf(h, s)).totp.enrollment!;
    const ctx = await workspaceContext(h, ws);
    expect(await verifyTotp(ctx, await userIdOf(h, ws, user("unconfirmed").email), codeAt(h, secret))).toEqual({ ok: false, reason: "invalid" });
    // The sign-in still asks for an enrolment, and the second-factor endpoint does nothing.
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret) }))).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).step.kind).toBe("enroll_second_factor");
  });

  it("refuses a right code once the account is disabled after the password step (the factor's verification judges the account)", async () => {
    const { seed: secret } = await giveTotp(h, ws, user("disabled").email);
    const s = await passwordStep(h, ws, { ...WEB, ...user("disabled") });
    const userId = await userIdOf(h, ws, user("disabled").email);
    await h.service.db.update(users).set({ status: "disabled" }).where(and(eq(users.workspaceId, ws), eq(users.id, userId)));
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret) }))).toEqual({ to: "page", error: "invalid_code" });
    await h.service.db.update(users).set({ status: "active" }).where(and(eq(users.workspaceId, ws), eq(users.id, userId)));
    // Active again, the next step's code signs in (the refused one was spent).
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret, 1) })).to).toBe("callback");
  });

  it("records the factor as evidence: amr pwd, otp, mfa and acr loa:2", async () => {
    const { seed: secret, factorId } = await giveTotp(h, ws, user("evidence").email);
    const ctx = await workspaceContext(h, ws);
    h.clock.advance(30_000);
    const result = await verifyTotp(ctx, await userIdOf(h, ws, user("evidence").email), codeAt(h, secret));
    expect(result).toEqual({ ok: true, userId: expect.any(String), evidence: { method: "totp", amr: ["otp"], strength: "possession", factorId, at: h.clock.now().toISOString() } });
  });
});

describe.runIf(Boolean(inject("databaseUrl")))("parallel uses of one step (PostgreSQL)", () => {
  it("20 parallel uses of one code give exactly one success", async () => {
    const { seed: secret } = await giveTotp(h, ws, user("race").email);
    const ctx = await workspaceContext(h, ws);
    const userId = await userIdOf(h, ws, user("race").email);
    const code = totpCode(secret, stepAt(h.clock.now()));
    const results = await Promise.all(Array.from({ length: 20 }, () => verifyTotp(ctx, userId, code)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });
});

