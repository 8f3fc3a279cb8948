/**
 * A failed sign-in is recorded once (audit sign_in.failed) with the account and why; never the
 * password, the code or the typed address: a wrong password, and a wrong second-factor code.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, clients, users } from "../../../db/schema";
import { ADA, SPA, standardWorkspace, WEB } from "../../helpers/fixtures";
import { outcome, passwordStep, postStep } from "../../helpers/factors/sign-in";
import { giveRecoveryCodes } from "../../helpers/factors/recovery-codes";
import { codeAt, giveTotp } from "../../helpers/factors/totp";
import { createHarness, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";

let h: Harness;
const W = uniqueWorkspaceId("sfail");

const MFA_USER = { email: "second-factor@example.test", password: "a long enough password for tests" };

beforeAll(async () => {
  h = await createHarness();
  const doc = standardWorkspace(W);
  doc.users.push({ email: MFA_USER.email, password: MFA_USER.password, email_verified: true });
  await seed(h, doc);
  // The web application requires MFA: the password is followed by the second-factor step.
  await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, W), eq(clients.clientId, WEB.client_id)));
  h.service.cache.clear();
});

const failures = () => h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, "sign_in.failed"))).orderBy(auditEvents.createdAt);

describe("sign_in.failed", () => {
  it("records a wrong password against the account, an unknown address without one, and a success not at all", async () => {
    const ada = (await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, W), eq(users.emailNormalized, ADA.email))))[0].id;
    await expect(signIn(h, W, { ...SPA, email: ADA.email, password: "wrong password 123" })).rejects.toThrow();
    // A second apart, so that the events' order is their times' order (the clock is the test's).
    h.clock.advance(1000);
    await expect(signIn(h, W, { ...SPA, email: "typo-secret-hunter2@example.test", password: "wrong password 123" })).rejects.toThrow();
    await signIn(h, W, { ...SPA, ...ADA });
    const rows = await failures();
    expect(rows.map((r) => [r.subject, r.reason, r.data.method])).toEqual([
      [ada, "wrong_password", "password"],
      [null, "unknown_account", "password"],
    ]);
    expect(JSON.stringify(rows)).not.toContain("wrong password 123");
    expect(JSON.stringify(rows)).not.toContain("typo-secret-hunter2");
  });

  it("records a wrong authenticator code and a wrong recovery code against the account (not the code)", async () => {
    const userId = (await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, W), eq(users.emailNormalized, MFA_USER.email))))[0].id;
    const { seed: secret } = await giveTotp(h, W, MFA_USER.email);
    await giveRecoveryCodes(h, W, MFA_USER.email);
    // Later than the previous test's events, which are ordered by time like these.
    h.clock.advance(1000);
    const before = (await failures()).length;
    const s = await passwordStep(h, W, { ...WEB, ...MFA_USER });
    const wrong = codeAt(h, secret, 5);
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: wrong }))).toEqual({ to: "page", error: "invalid_code" });
    h.clock.advance(1000);
    expect(outcome(await postStep(h, s, "/sign-in/recovery-code", { code: "zzzz-aaaaaaaa-aaaaaaaa" }))).toEqual({ to: "page", error: "invalid_recovery_code" });
    // The right code signs in and records nothing more.
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, secret) })).to).toBe("callback");
    const rows = (await failures()).slice(before);
    expect(rows.map((r) => [r.subject, r.reason, r.data.method])).toEqual([
      [userId, "wrong_code", "totp"],
      [userId, "wrong_code", "recovery_code"],
    ]);
    expect(JSON.stringify(rows)).not.toContain(wrong);
  });
});
