/**
 * Recovery codes (lib/authn/factors/recovery-codes/recovery-codes.ts): ten codes of 80 secret bits, stored as
 * argon2id hashes, each used once (also under races), a new set voids the old one, a use is
 * audited and counts as a second factor; and the set an enrolment gives is shown once.
 */
import { beforeAll, describe, expect, inject, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { decodeJwt } from "jose";
import { auditEvents, authorizationTransactions, clients, recoveryCodes } from "../../../db/schema";
import { parseRecoveryCode, useRecoveryCode } from "../../../lib/authn/factors/recovery-codes";
import { basic, createHarness, exchangeCode, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { standardWorkspace, WEB } from "../../helpers/fixtures";
import { outcome, passwordStep, postStep, userIdOf, viewOf, workspaceContext } from "../../helpers/factors/sign-in";
import { codeAt, giveTotp } from "../../helpers/factors/totp";
import { giveRecoveryCodes, signInWithRecoveryCode } from "../../helpers/factors/recovery-codes";

let h: Harness;
const ws = uniqueWorkspaceId("recovery");
const PASSWORD = "a long enough password for tests";
const user = (name: string) => ({ email: `${name}@example.test`, password: PASSWORD });
const NAMES = ["format", "use", "once", "regen", "typed", "enrol", "keep", "race"];

beforeAll(async () => {
  h = await createHarness();
  const doc = standardWorkspace(ws);
  doc.users.push(...NAMES.map((n) => ({ email: user(n).email, password: PASSWORD, email_verified: true })));
  await seed(h, doc);
  await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
  h.service.cache.clear();
});

const rowsOf = async (email: string) =>
  h.service.db.select().from(recoveryCodes).where(and(eq(recoveryCodes.workspaceId, ws), eq(recoveryCodes.userId, await userIdOf(h, ws, email))));

describe("a set of recovery codes", () => {
  it("is ten distinct codes of at least 80 secret bits, stored as argon2id hashes of the secret part", async () => {
    const codes = await giveRecoveryCodes(h, ws, user("format").email);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{4}-[a-z2-7]{8}-[a-z2-7]{8}$/);
    // The secret part: 16 characters of a 32-letter alphabet = 80 bits (the lookup part is extra and public).
    expect(parseRecoveryCode(codes[0])!.secret).toHaveLength(16);
    const rows = await rowsOf(user("format").email);
    expect(rows).toHaveLength(10);
    for (const row of rows) {
      expect(row.codeHash).toMatch(/^\$argon2id\$/);
      expect(codes.some((c) => row.codeHash.includes(c) || row.codeHash.includes(parseRecoveryCode(c)!.secret))).toBe(false);
      expect(row.usedAt).toBeNull();
    }
    expect(rows.map((r) => r.lookup).sort()).toEqual(codes.map((c) => c.slice(0, 4)).sort());
  });

  it("signs in once as a second factor, audited, with amr pwd, otp, mfa", async () => {
    await giveTotp(h, ws, user("use").email);
    const [code, other] = await giveRecoveryCodes(h, ws, user("use").email);
    const s = await passwordStep(h, ws, { ...WEB, ...user("use") });
    expect((await viewOf(h, s)).step).toEqual({ kind: "second_factor", options: ["totp", "recovery_code"] });
    const o = outcome(await postStep(h, s, "/sign-in/recovery-code", { code }, { headers: { "x-latchkey-client-address": "203.0.113.7" } }));
    if (o.to !== "callback") throw new Error(`refused: ${o.error}`);

    const token = await exchangeCode(h, ws, { code: o.url.searchParams.get("code")!, redirect_uri: WEB.redirect_uri, verifier: s.verifier, authorization: basic(WEB.client_id, WEB.secret) });
    const claims = decodeJwt((await token.json()).id_token);
    expect(claims).toMatchObject({ amr: ["pwd", "otp", "mfa"], acr: "urn:latchkey:loa:2" });

    const userId = await userIdOf(h, ws, user("use").email);
    const audit = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "recovery_code.used"), eq(auditEvents.subject, userId)));
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ data: { remaining: 9 }, ip: "203.0.113.7" });

    // Used: refused the second time, like a wrong code; another code of the set still works.
    const again = await passwordStep(h, ws, { ...WEB, ...user("use") });
    expect(outcome(await postStep(h, again, "/sign-in/recovery-code", { code }))).toEqual({ to: "page", error: "invalid_recovery_code" });
    expect(outcome(await postStep(h, again, "/sign-in/recovery-code", { code: other })).to).toBe("callback");
  });

  it("refuses wrong codes: an unknown lookup, a wrong secret, garbage", async () => {
    await giveTotp(h, ws, user("once").email);
    const [code] = await giveRecoveryCodes(h, ws, user("once").email);
    const s = await passwordStep(h, ws, { ...WEB, ...user("once") });
    const wrongSecret = `${code.slice(0, 5)}${code[5] === "a" ? "b" : "a"}${code.slice(6)}`;
    for (const bad of [wrongSecret, "zzzz-aaaaaaaa-aaaaaaaa", "not a code", "", "x".repeat(5000)]) {
      expect(outcome(await postStep(h, s, "/sign-in/recovery-code", { code: bad }))).toEqual({ to: "page", error: "invalid_recovery_code" });
    }
    expect((await rowsOf(user("once").email)).every((r) => r.usedAt === null)).toBe(true);
  });

  it("accepts a code typed in capitals, with spaces or without dashes", async () => {
    await giveTotp(h, ws, user("typed").email);
    const [code] = await giveRecoveryCodes(h, ws, user("typed").email);
    const typed = ` ${code.toUpperCase().replace(/-/g, " ")} `;
    expect((await signInWithRecoveryCode(h, ws, { ...WEB, ...user("typed"), code: typed })).callback.searchParams.get("code")).toBeTruthy();
  });

  it("is voided by a new set", async () => {
    await giveTotp(h, ws, user("regen").email);
    const old = await giveRecoveryCodes(h, ws, user("regen").email);
    const fresh = await giveRecoveryCodes(h, ws, user("regen").email);
    expect(await rowsOf(user("regen").email)).toHaveLength(10);
    const s = await passwordStep(h, ws, { ...WEB, ...user("regen") });
    expect(outcome(await postStep(h, s, "/sign-in/recovery-code", { code: old[0] }))).toEqual({ to: "page", error: "invalid_recovery_code" });
    expect(outcome(await postStep(h, s, "/sign-in/recovery-code", { code: fresh[0] })).to).toBe("callback");
  });
});

describe("the set an enrolment gives", () => {
  it("is shown once, after the enrolment, until the user says it is saved; the shown codes work", async () => {
    const s = await passwordStep(h, ws, { ...WEB, ...user("enrol") });
    await postStep(h, s, "/sign-in/totp/enroll/start");
    const { secret } = (await viewOf(h, s)).totp.enrollment!;
    await postStep(h, s, "/sign-in/totp/enroll", { code: codeAt(h, secret) });
    const view = await viewOf(h, s);
    expect(view.step).toEqual({ kind: "recovery_codes" });
    const shown = view.totp.recoveryCodes!;
    expect(shown).toHaveLength(10);
    // Encrypted on the transaction while shown, never in clear.
    const [tx] = await h.service.db.select().from(authorizationTransactions).where(eq(authorizationTransactions.id, s.tx));
    expect(tx.recoveryCodesEncrypted).toBeTruthy();
    for (const c of shown) expect(tx.recoveryCodesEncrypted).not.toContain(c);
    // The sign-in completes only after "I have saved these codes", which drops them from the transaction.
    expect(tx.completedAt).toBeNull();
    const done = outcome(await postStep(h, s, "/sign-in/recovery-codes/saved"));
    expect(done.to).toBe("callback");
    const [after] = await h.service.db.select().from(authorizationTransactions).where(eq(authorizationTransactions.id, s.tx));
    expect(after.recoveryCodesEncrypted).toBeNull();

    expect((await signInWithRecoveryCode(h, ws, { ...WEB, ...user("enrol"), code: shown[3] })).callback.searchParams.get("code")).toBeTruthy();
  });

  it("is not replaced when the user still has unused codes", async () => {
    const kept = await giveRecoveryCodes(h, ws, user("keep").email);
    const s = await passwordStep(h, ws, { ...WEB, ...user("keep") });
    expect((await viewOf(h, s)).step.kind).toBe("enroll_second_factor");
    await postStep(h, s, "/sign-in/totp/enroll/start");
    const { secret } = (await viewOf(h, s)).totp.enrollment!;
    const o = outcome(await postStep(h, s, "/sign-in/totp/enroll", { code: codeAt(h, secret) }));
    // No recovery-codes step: straight to the application.
    expect(o.to).toBe("callback");
    expect((await signInWithRecoveryCode(h, ws, { ...WEB, ...user("keep"), code: kept[0] })).callback.searchParams.get("code")).toBeTruthy();
  });
});

describe.runIf(Boolean(inject("databaseUrl")))("parallel uses of one code (PostgreSQL)", () => {
  it("20 parallel uses of one recovery code give exactly one success", async () => {
    const [code] = await giveRecoveryCodes(h, ws, user("race").email);
    const ctx = await workspaceContext(h, ws);
    const userId = await userIdOf(h, ws, user("race").email);
    const results = await Promise.all(Array.from({ length: 20 }, () => useRecoveryCode(ctx, userId, code)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    const audit = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "recovery_code.used"), eq(auditEvents.subject, userId)));
    expect(audit).toHaveLength(1);
  });
});
