/**
 * What the portal manages, by its form posts: adding an authenticator app, a passkey and a
 * security key, renaming, removing (the policy's last required factor kept), recovery codes shown
 * once; each with its audit event and its step-up evidence (refused without fresh evidence), and
 * another user's factor never reachable.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { auditEvents, clients, totpFactors, webauthnCredentials } from "../../../db/schema";
import { evidenceFor } from "../../../lib/authn/evidence";
import { livePortalSession } from "../../../lib/account-security/portal-session";
import { portalCsrf } from "../../../lib/account-security/portal-view";
import { recordPortalEvidence } from "../../../lib/account-security/evidence";
import { credentialCreationOptions, listCredentials, pendingAuthenticatorApp } from "../../../lib/account-security/credentials";
import { recoveryCodesToShow, RECOVERY_CODES_COOKIE } from "../../../lib/account-security/credential-routes";
import { loadManageView } from "../../../lib/account-security/manage-view";
import { parseRecoveryCode } from "../../../lib/authn/factors/recovery-codes";
import { totpCode, stepAt } from "../../../lib/authn/factors/totp";
import { EVIDENCE_REUSE_MS } from "../../../lib/authn/evidence";
import { SECOND } from "../../../lib/clock";
import { call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { auditCatalogueMismatches } from "../../helpers/audit";
import { WEB, standardWorkspace } from "../../helpers/fixtures";
import { postPassword, userIdOf, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";
import { giveTotp } from "../../helpers/factors/totp";
import { SoftAuthenticator } from "../../helpers/factors/webauthn";

let h: Harness;
const ws = uniqueWorkspaceId("portal-cred");
const PASSWORD = "a long enough password for tests";
let userCount = 0;

beforeAll(async () => {
  h = await createHarness();
  const doc = standardWorkspace(ws) as ReturnType<typeof standardWorkspace> & { users: object[] };
  for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
  for (let i = 0; i < 30; i++) doc.users.push({ email: `user${i}@example.test`, password: PASSWORD, email_verified: true });
  await seed(h, doc);
});

/** A user of their own for each test (factors accumulate). */
const nextUser = () => `user${userCount++}@example.test`;

interface Visit {
  jar: Jar;
  email: string;
  userId: string;
}

/** The direct link with a password sign-in: a browser in the portal, its hosted session's evidence a password just now. */
async function openPortal(email = nextUser()): Promise<Visit> {
  const jar = new Jar();
  const link = `/t/${ws}/auth/account?client_id=${WEB.client_id}`;
  const first = await call(h, link);
  jar.take(first);
  const tx = new URL(first.headers.get("location")!, PUBLIC_URL).searchParams.get("tx")!;
  const s: PendingSignIn = { workspaceId: ws, tx, jar, verifier: "", state: "", nonce: "", client: { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri } };
  expect((await postPassword(h, s, email, PASSWORD)).status).toBe(303);
  const portal = await call(h, link, { cookie: jar.header() });
  expect(portal.status).toBe(303);
  jar.take(portal);
  return { jar, email, userId: await userIdOf(h, ws, email) };
}

async function portalOf(v: Visit) {
  const portal = await livePortalSession(await workspaceContext(h, ws), v.jar.header());
  if (!portal) throw new Error("the portal session is not live");
  return portal;
}

/** Posts a portal form as the page would (its CSRF token, the browser's cookies, same origin); returns where it sent the browser. */
async function post(v: Visit, path: string, fields: Record<string, string> = {}) {
  const ctx = await workspaceContext(h, ws);
  const res = await call(h, `/t/${ws}/account${path}`, {
    form: { csrf: portalCsrf(ctx, await portalOf(v)), ...fields },
    cookie: v.jar.header(),
    headers: { origin: PUBLIC_URL },
  });
  v.jar.take(res);
  return res;
}

function answer(res: Response): { done: string | null; error: string | null } {
  expect(res.status).toBe(303);
  const url = new URL(res.headers.get("location")!, PUBLIC_URL);
  expect(url.pathname).toBe(`/t/${ws}/account`);
  return { done: url.searchParams.get("done"), error: url.searchParams.get("error") };
}

async function eventsOf(userId: string, type: string) {
  return h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, type), eq(auditEvents.subject, userId)));
}

/** A verification made in the portal (what its verification forms record), at the harness clock. */
async function verifiedWith(v: Visit, method: Parameters<typeof evidenceFor>[0], factorId: string | null = null) {
  await recordPortalEvidence(await workspaceContext(h, ws), await portalOf(v), evidenceFor(method, h.clock.now(), factorId));
}

async function credentialsOf(v: Visit) {
  return listCredentials(await workspaceContext(h, ws), v.userId);
}

/** Adds a credential of `kind` through the portal with a software authenticator. */
async function addWebAuthn(v: Visit, kind: "passkey" | "security_key", name = "") {
  const ctx = await workspaceContext(h, ws);
  const options = await credentialCreationOptions(ctx, await portalOf(v), kind);
  const authenticator = new SoftAuthenticator();
  const { response } = authenticator.register(options!);
  return post(v, "/webauthn/register", { kind, response: JSON.stringify(response), name });
}

describe("authenticator apps", () => {
  it("adds one: start, scan, the first code completes it; audited", async () => {
    const v = await openPortal();
    expect(answer(await post(v, "/authenticator-app/start")).error).toBeNull();
    const pending = await pendingAuthenticatorApp(await workspaceContext(h, ws), await portalOf(v));
    expect(pending?.qrSvg).toMatch(/^data:image\/svg\+xml;base64,/);
    const seed = pending!.secret.replace(/\s/g, "");
    const code = totpCode(seed, stepAt(h.clock.now()));
    expect(answer(await post(v, "/authenticator-app/confirm", { code: code === "000000" ? "111111" : "000000" })).error).toBe("portal_credential_not_verified");
    expect(answer(await post(v, "/authenticator-app/confirm", { code })).done).toBe("authenticator_app_added");
    expect((await credentialsOf(v)).authenticatorApps).toHaveLength(1);
    const [event] = await eventsOf(v.userId, "account_security.credential_added");
    expect(event).toMatchObject({ actor: v.userId, data: expect.objectContaining({ kind: "totp" }) });
    expect(auditCatalogueMismatches(event)).toEqual([]);
  });

  it("is refused without fresh evidence (older than ten minutes), and nothing is started", async () => {
    const v = await openPortal();
    h.clock.advance(EVIDENCE_REUSE_MS + SECOND);
    expect(answer(await post(v, "/authenticator-app/start")).error).toBe("portal_verification_required");
    const rows = await h.service.db.select().from(totpFactors).where(and(eq(totpFactors.workspaceId, ws), eq(totpFactors.userId, v.userId)));
    expect(rows).toEqual([]);
    // A verification in the portal counts again.
    await verifiedWith(v, "password");
    expect(answer(await post(v, "/authenticator-app/start")).error).toBeNull();
  });

  it("needs the user's existing MFA once they have a second factor", async () => {
    const v = await openPortal();
    const { factorId } = await giveTotp(h, ws, v.email);
    expect(answer(await post(v, "/authenticator-app/start")).error).toBe("portal_verification_required");
    await verifiedWith(v, "totp", factorId);
    expect(answer(await post(v, "/authenticator-app/start")).error).toBeNull();
  });
});

describe("passkeys and security keys", () => {
  it("adds a passkey and a security key with a challenge bound to the portal session; audited", async () => {
    const v = await openPortal();
    expect(answer(await addWebAuthn(v, "passkey", "Laptop")).done).toBe("passkey_added");
    // The user now has a second factor: adding another needs MFA.
    expect(answer(await addWebAuthn(v, "security_key")).error).toBe("portal_verification_required");
    await verifiedWith(v, "passkey", (await credentialsOf(v)).passkeys[0].id);
    expect(answer(await addWebAuthn(v, "security_key")).done).toBe("security_key_added");
    const list = await credentialsOf(v);
    expect(list.passkeys.map((p) => p.name)).toEqual(["Laptop"]);
    expect(list.securityKeys.map((p) => p.name)).toEqual(["Security key"]);
    expect((await eventsOf(v.userId, "account_security.credential_added")).map((e) => e.data.kind).sort()).toEqual(["passkey", "security_key"]);
  });

  it("refuses an answer to a challenge of another portal session", async () => {
    const v = await openPortal();
    const other = await openPortal();
    const options = await credentialCreationOptions(await workspaceContext(h, ws), await portalOf(other), "passkey");
    const { response } = new SoftAuthenticator().register({ ...options!, user: { id: Buffer.from(v.userId).toString("base64url") } });
    expect(answer(await post(v, "/webauthn/register", { kind: "passkey", response: JSON.stringify(response) })).error).toBe("portal_credential_expired");
    expect((await credentialsOf(v)).passkeys).toEqual([]);
  });

  it("is refused without fresh evidence", async () => {
    const v = await openPortal();
    const options = await credentialCreationOptions(await workspaceContext(h, ws), await portalOf(v), "passkey");
    h.clock.advance(EVIDENCE_REUSE_MS + SECOND);
    const { response } = new SoftAuthenticator().register(options!);
    expect(answer(await post(v, "/webauthn/register", { kind: "passkey", response: JSON.stringify(response) })).error).toBe("portal_verification_required");
    expect((await credentialsOf(v)).passkeys).toEqual([]);
  });

  it("renames one of the user's own; audited; another user's is not found and unchanged", async () => {
    const v = await openPortal();
    await addWebAuthn(v, "passkey");
    const [passkey] = (await credentialsOf(v)).passkeys;
    // With a passkey the user has MFA, which renaming asks for like adding.
    expect(answer(await post(v, "/credentials/rename", { id: passkey.id, name: "Work phone" })).error).toBe("portal_verification_required");
    await verifiedWith(v, "passkey", passkey.id);
    expect(answer(await post(v, "/credentials/rename", { id: passkey.id, name: "  Work   phone " })).done).toBe("credential_renamed");
    expect((await credentialsOf(v)).passkeys[0].name).toBe("Work phone");
    expect(await eventsOf(v.userId, "account_security.credential_renamed")).toHaveLength(1);
    expect(answer(await post(v, "/credentials/rename", { id: passkey.id, name: "" })).error).toBe("portal_credential_name_invalid");
    expect(answer(await post(v, "/credentials/rename", { id: passkey.id, name: "x".repeat(65) })).error).toBe("portal_credential_name_invalid");

    const mallory = await openPortal();
    expect(answer(await post(mallory, "/credentials/rename", { id: passkey.id, name: "Mine now" })).error).toBe("portal_credential_not_found");
    expect((await credentialsOf(v)).passkeys[0].name).toBe("Work phone");
  });
});

describe("removing", () => {
  it("asks for evidence as strong as the factor: a passkey needs a passkey or security key", async () => {
    const v = await openPortal();
    await addWebAuthn(v, "passkey");
    const [passkey] = (await credentialsOf(v)).passkeys;
    // Password just now: enough to add, not to remove a phishing-resistant factor.
    const refused = answer(await post(v, "/credentials/remove", { kind: "passkey", id: passkey.id }));
    expect(refused.error).toBe("portal_stronger_verification_required");
    expect((await credentialsOf(v)).passkeys).toHaveLength(1);

    await verifiedWith(v, "passkey", passkey.id);
    expect(answer(await post(v, "/credentials/remove", { kind: "passkey", id: passkey.id })).done).toBe("credential_removed");
    expect((await credentialsOf(v)).passkeys).toEqual([]);
    const [event] = await eventsOf(v.userId, "account_security.credential_removed");
    expect(event.data).toMatchObject({ kind: "passkey", factor_id: passkey.id });
  });

  it("removes an authenticator app with fresh MFA; refused once the evidence is older than ten minutes", async () => {
    const v = await openPortal();
    const { factorId } = await giveTotp(h, ws, v.email);
    await verifiedWith(v, "totp", factorId);
    h.clock.advance(EVIDENCE_REUSE_MS + SECOND);
    expect(answer(await post(v, "/credentials/remove", { kind: "totp", id: factorId })).error).toBe("portal_stronger_verification_required");
    await verifiedWith(v, "password");
    await verifiedWith(v, "totp", factorId);
    expect(answer(await post(v, "/credentials/remove", { kind: "totp", id: factorId })).done).toBe("credential_removed");
    expect(await h.service.db.select().from(totpFactors).where(eq(totpFactors.id, factorId))).toEqual([]);
  });

  it("refuses another user's factor as not found, whatever the evidence", async () => {
    const v = await openPortal();
    const { factorId } = await giveTotp(h, ws, v.email);
    const mallory = await openPortal();
    await verifiedWith(mallory, "passkey");
    expect(answer(await post(mallory, "/credentials/remove", { kind: "totp", id: factorId })).error).toBe("portal_credential_not_found");
    expect(await h.service.db.select().from(totpFactors).where(eq(totpFactors.id, factorId))).toHaveLength(1);
  });

  it("keeps the last factor the application's policy requires", async () => {
    await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
    h.service.cache.clear();
    try {
      const email = nextUser();
      const { factorId } = await giveTotp(h, ws, email);
      // The portal's own sign-in now asks for the code too: open it on a session that already has it.
      const v = await openPortalWithTotp(email);
      await verifiedWith(v, "totp", factorId);
      expect(answer(await post(v, "/credentials/remove", { kind: "totp", id: factorId })).error).toBe("portal_last_required_factor");
      expect(await h.service.db.select().from(totpFactors).where(eq(totpFactors.id, factorId))).toHaveLength(1);
    } finally {
      await h.service.db.update(clients).set({ authPolicy: {} }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
      h.service.cache.clear();
    }
  });
});

describe("a flagged credential", () => {
  it("can be removed even where the policy requires MFA: it never counted towards it", async () => {
    await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
    h.service.cache.clear();
    try {
      const email = nextUser();
      const { factorId } = await giveTotp(h, ws, email);
      const v = await openPortalWithTotp(email);
      const copied = await new SoftAuthenticator().enrol(h, ws, v.userId, "passkey");
      await h.service.db.update(webauthnCredentials).set({ flaggedAt: h.clock.now() }).where(eq(webauthnCredentials.id, copied.rowId));
      // The authenticator app stays the last required factor.
      await verifiedWith(v, "totp", factorId);
      expect(answer(await post(v, "/credentials/remove", { kind: "totp", id: factorId })).error).toBe("portal_last_required_factor");
      // Removing a phishing-resistant credential still needs phishing-resistant evidence.
      expect(answer(await post(v, "/credentials/remove", { kind: "passkey", id: copied.rowId })).error).toBe("portal_stronger_verification_required");
      await verifiedWith(v, "security_key");
      expect(answer(await post(v, "/credentials/remove", { kind: "passkey", id: copied.rowId })).done).toBe("credential_removed");
    } finally {
      await h.service.db.update(clients).set({ authPolicy: {} }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
      h.service.cache.clear();
    }
  });
});

/** The direct link for a user whose sign-in asks for an authenticator code after the password. */
async function openPortalWithTotp(email: string): Promise<Visit> {
  const jar = new Jar();
  const link = `/t/${ws}/auth/account?client_id=${WEB.client_id}`;
  const first = await call(h, link);
  jar.take(first);
  const tx = new URL(first.headers.get("location")!, PUBLIC_URL).searchParams.get("tx")!;
  const s: PendingSignIn = { workspaceId: ws, tx, jar, verifier: "", state: "", nonce: "", client: { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri } };
  expect((await postPassword(h, s, email, PASSWORD)).status).toBe(303);
  const userId = await userIdOf(h, ws, email);
  const [factor] = await h.service.db.select().from(totpFactors).where(eq(totpFactors.userId, userId));
  const { decryptSecret } = await import("../../../lib/crypto");
  const seed = decryptSecret(h.service.config.masterKey, factor.secretEncrypted, "totp-seed");
  const { postStep } = await import("../../helpers/factors/sign-in");
  const done = await postStep(h, s, "/sign-in/totp", { code: totpCode(seed, stepAt(h.clock.now())) });
  expect(done.headers.get("location")).toBe(link);
  const portal = await call(h, link, { cookie: jar.header() });
  jar.take(portal);
  return { jar, email, userId };
}

describe("recovery codes", () => {
  it("need at least possession: a password alone is refused, an email code is enough", async () => {
    const v = await openPortal();
    expect(answer(await post(v, "/recovery-codes")).error).toBe("portal_stronger_verification_required");
    expect((await credentialsOf(v)).recoveryCodes).toBeNull();
    await verifiedWith(v, "email_otp");
    const res = await post(v, "/recovery-codes");
    expect(answer(res).done).toBe("recovery_codes_generated");
    const set = res.headers.getSetCookie().find((c) => c.startsWith(`${RECOVERY_CODES_COOKIE}=`));
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/Secure/);
    expect(set).toContain(`Path=/t/${ws}/account;`);
  });

  it("are shown once to this portal session, then gone; regenerating voids the old set; audited", async () => {
    const v = await openPortal();
    await verifiedWith(v, "email_otp");
    await post(v, "/recovery-codes");
    const ctx = await workspaceContext(h, ws);
    const codes = recoveryCodesToShow(ctx, await portalOf(v), v.jar.header());
    expect(codes).toHaveLength(10);
    expect(codes!.every((c) => parseRecoveryCode(c) !== null)).toBe(true);
    expect((await credentialsOf(v)).recoveryCodes).toMatchObject({ remaining: 10, total: 10 });
    // Another portal session cannot read them.
    const other = await openPortal();
    expect(recoveryCodesToShow(ctx, await portalOf(other), `${RECOVERY_CODES_COOKIE}=${v.jar.get(RECOVERY_CODES_COOKIE)}`)).toBeNull();
    // Saved: not shown again.
    await post(v, "/recovery-codes/saved");
    expect(recoveryCodesToShow(ctx, await portalOf(v), v.jar.header())).toBeNull();

    await post(v, "/recovery-codes");
    const again = recoveryCodesToShow(ctx, await portalOf(v), v.jar.header());
    expect(again).toHaveLength(10);
    expect(again!.some((c) => codes!.includes(c))).toBe(false);
    const generated = await eventsOf(v.userId, "account_security.recovery_codes_generated");
    expect(generated).toHaveLength(2);
    expect(generated[0]!.data).toEqual({ count: 10, portal_session: (await portalOf(v)).id });
    // One event per generation: the factor's, not another beside it.
    expect(await eventsOf(v.userId, "recovery_codes.generated")).toHaveLength(0);
  });
});

describe("the page's data", () => {
  it("offers creation options only while adding can proceed, and says what the stronger changes need", async () => {
    const v = await openPortal();
    const ctx = await workspaceContext(h, ws);
    const fresh = await loadManageView(ctx, await portalOf(v), v.jar.header());
    expect(JSON.parse(fresh.creation.passkey!).authenticatorSelection).toMatchObject({ residentKey: "required", userVerification: "required" });
    expect(fresh.creation.securityKey).not.toBeNull();
    expect(fresh.verdicts.removePhishingResistant.ok).toBe(false);
    expect(fresh.verdicts.recoveryCodes.ok).toBe(false);
    expect(fresh.newRecoveryCodes).toBeNull();
    h.clock.advance(EVIDENCE_REUSE_MS + SECOND);
    const stale = await loadManageView(ctx, await portalOf(v), v.jar.header());
    expect(stale.creation).toEqual({ passkey: null, securityKey: null });
  });
});

describe("the forms", () => {
  it("refuse a post without the CSRF token, from another site, or without a live portal", async () => {
    const v = await openPortal();
    const noToken = await call(h, `/t/${ws}/account/authenticator-app/start`, { form: {}, cookie: v.jar.header(), headers: { origin: PUBLIC_URL } });
    expect(noToken.status).toBe(403);
    const ctx = await workspaceContext(h, ws);
    const csrf = portalCsrf(ctx, await portalOf(v));
    const crossSite = await call(h, `/t/${ws}/account/authenticator-app/start`, { form: { csrf }, cookie: v.jar.header(), headers: { origin: "https://evil.example" } });
    expect(crossSite.status).toBe(403);
    const noPortal = await call(h, `/t/${ws}/account/authenticator-app/start`, { form: { csrf }, cookie: `lk_session=${v.jar.get("lk_session")}`, headers: { origin: PUBLIC_URL } });
    expect(noPortal.status).toBe(401);
    expect(await h.service.db.select().from(totpFactors).where(eq(totpFactors.userId, v.userId))).toEqual([]);
    expect(await h.service.db.select().from(webauthnCredentials).where(eq(webauthnCredentials.userId, v.userId))).toEqual([]);
  });
});

describe("the audit log", () => {
  it("holds only what the audit catalogue declares for each event written above", async () => {
    const rows = await h.service.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, ws));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.flatMap(auditCatalogueMismatches)).toEqual([]);
  });
});
