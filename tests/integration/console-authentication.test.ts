/**
 * The console's authentication settings, tested on lib/console as the server actions run them
 * (runOperation): the workspace's policy and each application's overrides (validated, audited
 * once per change, read back by the sign-in's policyFor), a user's enrolled factors and their
 * removal, and the development outbox.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, clients, recoveryCodes, totpFactors, users, webauthnCredentials, workspaces } from "../../db/schema";
import { storeInOutbox } from "../../lib/authn/email/outbox";
import { enrolledSummary } from "../../lib/authn/factors";
import { DEFAULT_POLICY, policyFor } from "../../lib/authn/policy";
import { requireWorkspaceRole } from "../../lib/console/authz";
import { userFactors } from "../../lib/console/factors";
import { workspaceOutbox } from "../../lib/console/outbox";
import { getApplicationPolicy, getWorkspacePolicy, listApplicationPolicies } from "../../lib/console/policy";
import { runOperation } from "../../lib/console/operation";
import { operations } from "../../lib/console/registry";
import { ensureSystemWorkspace } from "../../lib/console/system";
import { newId } from "../../lib/crypto";
import { MINUTE } from "../../lib/clock";
import { contextFor } from "../../lib/server/router";
import { exportWorkspace } from "../../lib/workspaces/file";
import { ADA, BOB, SPA, standardWorkspace, WEB } from "../helpers/fixtures";
import { seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { consoleSignIn, createConsoleHarness, createOperator } from "./console-helpers";

let h: Harness;
const W = uniqueWorkspaceId("cauth");
const OTHER = uniqueWorkspaceId("cauth-other");
let admin: string;
let viewer: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, standardWorkspace(W));
  await seed(h, { id: OTHER, name: "Other" });
  await ensureSystemWorkspace(h.service);
  await createOperator(h, "admin@operators.test", { [W]: "admin" });
  await createOperator(h, "viewer@operators.test", { [W]: "viewer" });
  admin = (await consoleSignIn(h, "admin@operators.test")).token;
  viewer = (await consoleSignIn(h, "viewer@operators.test")).token;
});

const run = (token: string, name: keyof typeof operations, input: Record<string, unknown>) =>
  runOperation(h.service, token, W, operations[name] as (typeof operations)["setWorkspacePolicy"], input, { ip: "192.0.2.44" });

const audits = (type: string) =>
  h.service.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, type)))
    .orderBy(auditEvents.createdAt);

const ctx = () => contextFor(h.service, { id: W, name: "W" });
const clientPk = async (clientId: string) =>
  (await h.service.db.select({ id: clients.id }).from(clients).where(and(eq(clients.workspaceId, W), eq(clients.clientId, clientId))))[0].id;
const userId = async (email: string) =>
  (await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, W), eq(users.emailNormalized, email))))[0].id;

const WORKSPACE_FORM = { first_factors: ["password", "passkey"], mfa: "required", passkey_enrollment: "offer", sign_up: "on" };

describe("the workspace's policy", () => {
  it("starts at the defaults", async () => {
    expect(await getWorkspacePolicy(h.service, W)).toEqual({ stored: {}, policy: DEFAULT_POLICY });
  });

  it("rejects invalid values beside their fields and changes nothing", async () => {
    const none = await run(admin, "setWorkspacePolicy", { ...WORKSPACE_FORM, first_factors: undefined });
    expect(none).toMatchObject({ ok: false, fieldErrors: { first_factors: "Allow at least one way to sign in" } });
    const bad = await run(admin, "setWorkspacePolicy", { first_factors: ["password", "sms"], mfa: "sometimes", passkey_enrollment: "always", sign_up: "on" });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(Object.keys(bad.fieldErrors).sort()).toEqual(["first_factors", "mfa", "passkey_enrollment"]);
    expect((await getWorkspacePolicy(h.service, W)).stored).toEqual({});
    expect(await audits("console.workspace.auth_policy_changed")).toHaveLength(0);
  });

  it("is refused to a viewer", async () => {
    await expect(run(viewer, "setWorkspacePolicy", WORKSPACE_FORM)).rejects.toMatchObject({ code: "forbidden" });
    expect((await getWorkspacePolicy(h.service, W)).stored).toEqual({});
  });

  it("is saved as chosen, audited once per change with what changed, and saving it unchanged writes nothing", async () => {
    const saved = await run(admin, "setWorkspacePolicy", WORKSPACE_FORM);
    expect(saved).toEqual({ ok: true, result: { changed: ["firstFactors", "mfa", "passkeyEnrollment", "signUp"] } });
    const view = await getWorkspacePolicy(h.service, W);
    expect(view.policy).toEqual({ firstFactors: ["password", "passkey"], mfa: "required", passkeyEnrollment: "offer", signUp: true });
    // The sign-in reads the same policy.
    expect(await policyFor(ctx(), await clientPk(SPA.client_id))).toEqual({ ...view.policy, socialProviderIds: [] });

    expect(await run(admin, "setWorkspacePolicy", WORKSPACE_FORM)).toEqual({ ok: true, result: { changed: [] } });
    h.clock.advance(MINUTE);
    expect(await run(admin, "setWorkspacePolicy", { ...WORKSPACE_FORM, mfa: "off", sign_up: undefined })).toEqual({ ok: true, result: { changed: ["mfa", "signUp"] } });

    const events = await audits("console.workspace.auth_policy_changed");
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({
      subject: W,
      ip: "192.0.2.44",
      data: { operator: "admin@operators.test", role: "admin", changed: ["mfa", "signUp"], before: { mfa: "required", signUp: true }, after: { mfa: "off", signUp: false } },
    });
    // Checkboxes arrive in any order; the policy keeps the canonical one.
    await run(admin, "setWorkspacePolicy", { ...WORKSPACE_FORM, first_factors: ["passkey", "password"] });
    expect((await getWorkspacePolicy(h.service, W)).policy.firstFactors).toEqual(["password", "passkey"]);
  });

  it("is what the workspace file exports", async () => {
    const exported = await exportWorkspace(h.service.db, W);
    expect(exported?.auth_policy).toEqual({ first_factors: ["password", "passkey"], mfa: "required", passkey_enrollment: "offer", sign_up: true });
  });
});

describe("an application's policy", () => {
  const INHERIT_ALL = { client_id: WEB.client_id, first_factors_mode: "inherit", mfa: "inherit", passkey_enrollment: "inherit", sign_up: "inherit" };

  it("inherits every field until it overrides one", async () => {
    await h.service.db.update(workspaces).set({ authPolicy: { firstFactors: ["password", "email_otp"], mfa: "off", passkeyEnrollment: "never", signUp: false } }).where(eq(workspaces.id, W));
    const web = (await getApplicationPolicy(h.service, W, WEB.client_id))!;
    expect(web.overrides).toEqual({});
    expect(web.effective).toEqual((await getWorkspacePolicy(h.service, W)).policy);
    // M2M clients sign no one in: not listed.
    expect((await listApplicationPolicies(h.service, W)).map((a) => a.clientId)).toEqual(["minimal", "spa", "web"]);
  });

  it("stores only the overridden fields, shows the effective policy, and the sign-in enforces it", async () => {
    const saved = await run(admin, "setApplicationPolicy", { ...INHERIT_ALL, mfa: "required", first_factors_mode: "override", first_factors: "passkey" });
    expect(saved).toEqual({ ok: true, result: { changed: ["firstFactors", "mfa"] } });
    const [row] = await h.service.db.select({ authPolicy: clients.authPolicy }).from(clients).where(and(eq(clients.workspaceId, W), eq(clients.clientId, WEB.client_id)));
    expect(row.authPolicy).toEqual({ firstFactors: ["passkey"], mfa: "required" });
    const effective = { firstFactors: ["passkey"], mfa: "required", passkeyEnrollment: "never", signUp: false };
    expect((await getApplicationPolicy(h.service, W, WEB.client_id))!.effective).toEqual(effective);
    expect(await policyFor(ctx(), await clientPk(WEB.client_id))).toEqual({ ...effective, socialProviderIds: [] });
    // Another application still inherits.
    expect((await getApplicationPolicy(h.service, W, SPA.client_id))!.effective.mfa).toBe("off");

    // An inherited field follows the workspace's later changes; an overridden one does not.
    await run(admin, "setWorkspacePolicy", { first_factors: ["password"], mfa: "off", passkey_enrollment: "require", sign_up: "on" });
    expect(await policyFor(ctx(), await clientPk(WEB.client_id))).toEqual({ firstFactors: ["passkey"], mfa: "required", passkeyEnrollment: "require", signUp: true, socialProviderIds: [] });

    const events = await audits("console.application.auth_policy_changed");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ clientId: WEB.client_id, subject: WEB.client_id, data: { changed: ["firstFactors", "mfa"], before: { firstFactors: null, mfa: null }, after: { firstFactors: ["passkey"], mfa: "required" } } });
    expect((await exportWorkspace(h.service.db, W))?.applications.find((a) => a.client_id === WEB.client_id)?.auth_policy).toEqual({ first_factors: ["passkey"], mfa: "required" });
  });

  it("goes back to inheriting a field, and to inheriting everything", async () => {
    await run(admin, "setApplicationPolicy", { ...INHERIT_ALL, mfa: "required", sign_up: "off" });
    expect((await getApplicationPolicy(h.service, W, WEB.client_id))!.overrides).toEqual({ mfa: "required", signUp: false });
    expect(await run(admin, "setApplicationPolicy", INHERIT_ALL)).toEqual({ ok: true, result: { changed: ["mfa", "signUp"] } });
    const web = (await getApplicationPolicy(h.service, W, WEB.client_id))!;
    expect(web.overrides).toEqual({});
    expect(web.effective).toEqual((await getWorkspacePolicy(h.service, W)).policy);
    expect((await exportWorkspace(h.service.db, W))?.applications.find((a) => a.client_id === WEB.client_id)).not.toHaveProperty("auth_policy");
  });

  it("validates overrides, refuses M2M clients, viewers and unknown applications", async () => {
    const empty = await run(admin, "setApplicationPolicy", { ...INHERIT_ALL, first_factors_mode: "override" });
    expect(empty).toMatchObject({ ok: false, fieldErrors: { first_factors: "Allow at least one way to sign in" } });
    const bad = await run(admin, "setApplicationPolicy", { ...INHERIT_ALL, mfa: "sometimes", sign_up: "maybe" });
    expect(bad).toMatchObject({ ok: false, fieldErrors: { mfa: expect.any(String), sign_up: expect.any(String) } });
    expect(await run(admin, "setApplicationPolicy", { ...INHERIT_ALL, client_id: "m2m", mfa: "required" })).toMatchObject({ ok: false, formError: expect.stringMatching(/Machine-to-machine/) });
    expect(await run(admin, "setApplicationPolicy", { ...INHERIT_ALL, client_id: "ghost" })).toMatchObject({ ok: false, formError: "This application no longer exists" });
    await expect(run(viewer, "setApplicationPolicy", { ...INHERIT_ALL, mfa: "required" })).rejects.toMatchObject({ code: "forbidden" });
    expect((await getApplicationPolicy(h.service, W, WEB.client_id))!.overrides).toEqual({});
    const [m2m] = await h.service.db.select({ authPolicy: clients.authPolicy }).from(clients).where(and(eq(clients.workspaceId, W), eq(clients.clientId, "m2m")));
    expect(m2m.authPolicy).toEqual({});
  });
});

describe("a user's factors", () => {
  let ada: string;
  let passkeyId: string;
  let totpId: string;

  beforeAll(async () => {
    ada = await userId(ADA.email);
    const now = h.clock.now();
    passkeyId = newId();
    totpId = newId();
    const credential = (name: string, kind: "passkey" | "security_key", extra = {}) => ({
      id: newId(),
      workspaceId: W,
      userId: ada,
      credentialId: newId(),
      publicKey: "pk",
      kind,
      rpId: "auth.example.test",
      name,
      createdAt: now,
      ...extra,
    });
    await h.service.db.insert(webauthnCredentials).values([
      { ...credential("MacBook", "passkey"), id: passkeyId, lastUsedAt: now },
      credential("YubiKey", "security_key", { flaggedAt: now }),
    ]);
    await h.service.db.insert(totpFactors).values([
      { id: totpId, workspaceId: W, userId: ada, secretEncrypted: "x", name: "Phone", createdAt: now, confirmedAt: now },
      // Never confirmed: not a factor yet, not listed.
      { id: newId(), workspaceId: W, userId: ada, secretEncrypted: "x", name: "Abandoned", createdAt: now },
    ]);
    await h.service.db.insert(recoveryCodes).values(
      Array.from({ length: 10 }, (_, i) => ({ id: newId(), workspaceId: W, userId: ada, lookup: `l${i}`, codeHash: "h", createdAt: now, usedAt: i < 3 ? now : null })),
    );
  });

  it("lists kind, name, times, the flag and the recovery codes left", async () => {
    const factors = await userFactors(h.service, { id: W, name: "W" }, ada);
    expect(factors.map((f) => [f.kind, f.name]).sort()).toEqual([
      ["passkey", "MacBook"],
      ["recovery_code", "Recovery codes"],
      ["security_key", "YubiKey"],
      ["totp", "Phone"],
    ]);
    expect(factors.find((f) => f.kind === "security_key")?.flagged).toBe(true);
    expect(factors.find((f) => f.kind === "passkey")).toMatchObject({ flagged: false, lastUsedAt: h.clock.now() });
    expect(factors.find((f) => f.kind === "recovery_code")?.remaining).toBe(7);
    expect(await userFactors(h.service, { id: W, name: "W" }, await userId(BOB.email))).toEqual([]);
  });

  it("removes one, audited, and it is gone from what the sign-in's policy sees", async () => {
    expect(await enrolledSummary(ctx(), ada)).toMatchObject({ passkey: 1, totp: 1, recovery_code: 7 });
    expect(await run(admin, "removeUserFactor", { user_id: ada, kind: "totp", factor_id: totpId })).toEqual({ ok: true, result: null });
    expect(await enrolledSummary(ctx(), ada)).toMatchObject({ passkey: 1, totp: 0, recovery_code: 7 });
    expect(await run(admin, "removeUserFactor", { user_id: ada, kind: "recovery_code", factor_id: ada })).toEqual({ ok: true, result: null });
    expect(await enrolledSummary(ctx(), ada)).toMatchObject({ recovery_code: 0 });

    const events = await audits("console.user.factor_removed");
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ subject: ADA.email, data: { operator: "admin@operators.test", user_id: ada, kind: "totp", factor_id: totpId, name: "Phone" } });
    expect(events[1]).toMatchObject({ data: { kind: "recovery_code", remaining: 7 } });

    // Twice: refused, and not audited again.
    expect(await run(admin, "removeUserFactor", { user_id: ada, kind: "totp", factor_id: totpId })).toMatchObject({ ok: false, formError: "This factor has already been removed" });
    expect(await audits("console.user.factor_removed")).toHaveLength(2);
  });

  it("refuses a viewer, a kind that does not match the factor, and another user's factor", async () => {
    await expect(run(viewer, "removeUserFactor", { user_id: ada, kind: "passkey", factor_id: passkeyId })).rejects.toMatchObject({ code: "forbidden" });
    expect(await run(admin, "removeUserFactor", { user_id: ada, kind: "security_key", factor_id: passkeyId })).toMatchObject({ ok: false });
    expect(await run(admin, "removeUserFactor", { user_id: await userId(BOB.email), kind: "passkey", factor_id: passkeyId })).toMatchObject({ ok: false });
    expect(await run(admin, "removeUserFactor", { user_id: ada, kind: "password", factor_id: ada })).toMatchObject({ ok: false, fieldErrors: { kind: expect.any(String) } });
    expect((await enrolledSummary(ctx(), ada))?.passkey).toBe(1);
  });
});

describe("the development outbox", () => {
  it("lists the workspace's stored messages, newest first, to administrators only", async () => {
    await storeInOutbox(ctx(), { to: ADA.email, subject: "Your sign-in code", text: "Your code is 123456", html: "<p>Your code is <b>123456</b></p>" });
    h.clock.advance(MINUTE);
    await storeInOutbox(ctx(), { to: BOB.email, subject: "Verify your email", text: "Code 654321", html: "<p>Code 654321</p>" });
    // Another workspace's mail is not listed.
    await storeInOutbox(contextFor(h.service, { id: OTHER, name: "Other" }), { to: ADA.email, subject: "Not here", text: "x", html: "x" });

    const adminAccess = await requireWorkspaceRole(h.service, admin, W, "viewer");
    const view = await workspaceOutbox(h.service, adminAccess);
    // The page says why the outbox exists: here no SMTP_URL on an https PUBLIC_URL.
    expect(view.transport).toBe("unavailable");
    const local = { ...h.service, config: { ...h.service.config, publicUrl: "http://localhost:3000" } };
    expect((await workspaceOutbox(local, adminAccess)).transport).toBe("outbox");
    const smtp = { ...h.service, config: { ...h.service.config, mail: { transport: "smtp" as const, smtpUrl: "smtps://mail.example.test", from: "a@example.test" } } };
    expect((await workspaceOutbox(smtp, adminAccess)).transport).toBe("smtp");
    expect(view.messages.map((m) => [m.recipient, m.subject, m.text])).toEqual([
      [BOB.email, "Verify your email", "Code 654321"],
      [ADA.email, "Your sign-in code", "Your code is 123456"],
    ]);
    expect((await workspaceOutbox(h.service, adminAccess, { recipient: ADA.email })).messages.map((m) => m.subject)).toEqual(["Your sign-in code"]);

    const viewerAccess = await requireWorkspaceRole(h.service, viewer, W, "viewer");
    await expect(workspaceOutbox(h.service, viewerAccess)).rejects.toMatchObject({ code: "forbidden" });
  });
});
