/**
 * Security alerts by email (lib/security-alerts): each alert is made from its audit event once the
 * change committed, sent once to the account's address in its language, only while the
 * workspace's policy has it on; a sign-in alerts only from a browser the account had not used.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, clients, securityAlerts, users, workspaces } from "../../../db/schema";
import { recordAudit } from "../../../lib/audit/events";
import { hashPassword } from "../../../lib/authn/password";
import { MINUTE } from "../../../lib/clock";
import { createService, type Service } from "../../../lib/service";
import { BROWSER_COOKIE } from "../../../lib/security-alerts/browsers";
import { alertPolicyFor } from "../../../lib/security-alerts/console";
import { CLAIM_LEASE_MS, dispatchSecurityAlerts, LOOK_BACK_MS } from "../../../lib/security-alerts/dispatch";
import { ALL_ON, saveAlertPolicy } from "../../../lib/security-alerts/policy";
import { exportWorkspace } from "../../../lib/workspaces/file";
import { ADA, BOB, SPA, WEB, standardWorkspace } from "../../helpers/fixtures";
import { statementsDuring } from "../../helpers/statements";
import { call, createHarness, exchangeCode, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { OUTBOX, outboxFor, signUpWithPassword } from "../../helpers/factors/email";
import { outcome, passwordStep, postStep, startSignIn, userIdOf, viewOf } from "../../helpers/factors/sign-in";
import { codeAt } from "../../helpers/factors/totp";
import { openTestDatabase } from "../../setup/test-database";

let h: Harness;
const ws = uniqueWorkspaceId("alerts");
const quiet = uniqueWorkspaceId("alerts-off");
const CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
const FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0";
const CAROL = { email: "carol@example.test", password: "carol's long password" };
const DAN = { email: "dan@example.test", password: "dan's long password here" };
const GINA = { email: "gina@example.test", password: "gina's long password here" };
let ada: string;
let bob: string;
let carol: string;
let dan: string;

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX });
  const doc = { ...standardWorkspace(ws), security_alerts: { new_password: true, factor_changed: true, new_recovery_codes: true, new_browser: true, token_reuse: true } };
  for (const app of doc.applications) if (app.client_id === WEB.client_id) (app as { account_security?: boolean }).account_security = true;
  doc.users.push({ email: CAROL.email, password: CAROL.password, email_verified: true }, { email: DAN.email, password: DAN.password, email_verified: true }, { email: GINA.email, password: GINA.password, email_verified: true });
  await seed(h, doc);
  await seed(h, standardWorkspace(quiet));
  ada = await userIdOf(h, ws, ADA.email);
  bob = await userIdOf(h, ws, BOB.email);
  carol = await userIdOf(h, ws, CAROL.email);
  dan = await userIdOf(h, ws, DAN.email);
});

const dispatch = (service: Service = h.service) => dispatchSecurityAlerts(service, { workspaceId: ws });
const mail = (address: string, workspaceId = ws) => outboxFor(h, workspaceId, address);

/** A password sign-in at SPA from a browser (its jar), with the browser's headers; returns the callback. */
async function signInFrom(jar: Jar, user: { email: string; password: string }, headers: Record<string, string> = {}) {
  const s = await startSignIn(h, ws, SPA, jar);
  const o = outcome(await postStep(h, s, "/sign-in/password", { email: user.email, password: user.password }, { headers: { "user-agent": CHROME, "x-latchkey-client-address": "203.0.113.7", ...headers } }));
  if (o.to !== "callback") throw new Error(`the sign-in did not complete: ${o.error}`);
  return { ...s, callback: o.url };
}

/** The same browser later: its hosted session gone (signed out), its browser cookie kept. */
function sameBrowser(jar: Jar): Jar {
  return new Jar().take(new Response(null, { headers: [["set-cookie", `${BROWSER_COOKIE}=${jar.get(BROWSER_COOKIE)}; Path=/`]] }));
}

async function event(type: string, subject: string, data: Record<string, unknown> = {}, workspaceId = ws) {
  // One writer for several types: its data is checked by the catalogue's test.
  await recordAudit(h.service.db, { workspaceId, type: type as "account_security.recovery_codes_generated", subject, data: data as never, ip: "198.51.100.4", at: h.clock.now() });
}

describe("a sign-in from a new browser", () => {
  it("does not alert the account's first sign-in, alerts another browser once, and not a known one", async () => {
    const first = new Jar();
    await signInFrom(first, ADA);
    expect(first.get(BROWSER_COOKIE)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await dispatch()).toEqual({ sent: 0, skipped: 0, failed: 0 });

    h.clock.advance(MINUTE);
    const second = new Jar();
    await signInFrom(second, ADA, { "user-agent": FIREFOX, "accept-language": "de-DE,de;q=0.9" });
    const [signedIn] = await h.service.db
      .select({ data: auditEvents.data })
      .from(auditEvents)
      .where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "sign_in.succeeded"), eq(auditEvents.createdAt, h.clock.now())));
    expect(signedIn.data).toMatchObject({ new_browser: true, browser: "Firefox 121 on Windows" });
    expect((await h.service.db.select({ locale: users.locale }).from(users).where(eq(users.id, ada)))[0].locale).toBe("de");

    expect(await dispatch()).toEqual({ sent: 1, skipped: 0, failed: 0 });
    const [alert] = await mail(ADA.email);
    expect(alert.subject).toBe(`Neue Anmeldung bei Ihrem Konto bei Workspace ${ws}`);
    expect(alert.text).toContain("Browser: Firefox 121 on Windows");
    expect(alert.text).toContain("Von: 203.0.113.7");
    expect(alert.text).toContain("UTC");
    expect(alert.text).toContain(`${PUBLIC_URL}/t/${ws}/auth/account?client_id=${WEB.client_id}`);
    expect(alert.html).toContain(`<a href="${PUBLIC_URL}/t/${ws}/auth/account?client_id=${WEB.client_id}">`);

    // The same browser again, and the first one again: both known.
    h.clock.advance(MINUTE);
    await signInFrom(sameBrowser(second), ADA);
    await signInFrom(sameBrowser(first), ADA);
    expect(await dispatch()).toEqual({ sent: 0, skipped: 0, failed: 0 });
    expect(await mail(ADA.email)).toHaveLength(1);
  });

  it("does not alert an account just signed up; its next sign-in from another browser does", async () => {
    await h.service.db.update(workspaces).set({ authPolicy: { signUp: true } }).where(eq(workspaces.id, ws));
    h.service.cache.clear();
    const erin = { email: "erin@example.test", password: "erin's long enough password" };
    const signedUp = await signUpWithPassword(h, ws, { ...SPA, ...erin });
    expect(signedUp.callback).not.toBeNull();
    expect(await dispatch()).toEqual({ sent: 0, skipped: 0, failed: 0 });
    h.clock.advance(MINUTE);
    await signInFrom(new Jar(), erin);
    expect(await dispatch()).toEqual({ sent: 1, skipped: 0, failed: 0 });
    // Besides the sign-up's code.
    expect((await mail(erin.email)).map((m) => m.subject).filter((subject) => !/^\d{6} /.test(subject))).toEqual([`New sign-in to your Workspace ${ws} account`]);
  });

  it("costs a completed sign-in one statement, which also keeps the account's language", async () => {
    const s = await startSignIn(h, ws, SPA, new Jar());
    const { statements } = await statementsDuring(h.service.db, async () => {
      const o = outcome(await postStep(h, s, "/sign-in/password", { email: GINA.email, password: GINA.password }, { headers: { "accept-language": "fr" } }));
      expect(o.to).toBe("callback");
    });
    expect(statements.filter((q) => /known_browsers|locale/.test(q))).toHaveLength(1);
    expect((await h.service.db.select({ locale: users.locale }).from(users).where(eq(users.id, await userIdOf(h, ws, GINA.email))))[0].locale).toBe("fr");
  });

  it("tells one account's browser from another's: a browser new to this account alerts it", async () => {
    const shared = new Jar();
    await signInFrom(shared, CAROL);
    // Carol's browser is new to Dan, who signed in elsewhere before.
    await signInFrom(new Jar(), DAN);
    h.clock.advance(MINUTE);
    await signInFrom(sameBrowser(shared), DAN);
    expect(await dispatch()).toMatchObject({ sent: 1 });
    expect((await mail(DAN.email))[0].subject).toBe(`New sign-in to your Workspace ${ws} account`);
    expect(await mail(CAROL.email)).toHaveLength(0);
  });
});

describe("the alerts", () => {
  it("sends one message per alerting event, to the account the event is about", async () => {
    await event("account_security.recovery_codes_generated", bob, { portal_session: "p1", count: 10 });
    await event("account_security.credential_added", bob, { portal_session: "p1", kind: "passkey", factor_id: "f1" });
    await event("account_security.credential_removed", bob, { portal_session: "p1", kind: "totp", factor_id: "f2", name: null });
    await event("password.changed", bob, { via: "reset", sessions_ended: 1, grants_ended: 0 });
    await recordAudit(h.service.db, { workspaceId: ws, type: "console.user.password_set", actor: "op", subject: BOB.email, data: { operator: "op@x.test", role: "admin", user_id: bob }, at: h.clock.now() });
    await recordAudit(h.service.db, {
      workspaceId: ws,
      type: "console.user.factor_removed",
      actor: "op",
      subject: BOB.email,
      data: { operator: "op@x.test", role: "admin", user_id: bob, kind: "security_key", factor_id: "f3", name: "YubiKey" },
      at: h.clock.now(),
    });
    expect(await dispatch()).toEqual({ sent: 6, skipped: 0, failed: 0 });
    const subjects = (await mail(BOB.email)).map((m) => m.subject).sort();
    const W = `Workspace ${ws}`;
    expect(subjects).toEqual(
      [
        `A sign-in method was added to your ${W} account`,
        `A sign-in method was removed from your ${W} account`,
        `A sign-in method was removed from your ${W} account`,
        `New recovery codes for your ${W} account`,
        `Your ${W} password was changed`,
        `Your ${W} password was changed`,
      ].sort(),
    );
    const texts = (await mail(BOB.email)).map((m) => m.text).join("\n");
    expect(texts).toContain("A passkey was added");
    expect(texts).toContain("An administrator of");
    expect(texts).toContain("removed a security key from your account");
    expect(texts).toContain("From: 198.51.100.4");
    // Sent already: never again.
    expect(await dispatch()).toEqual({ sent: 0, skipped: 0, failed: 0 });
  });

  it("alerts an authenticator app enrolled while signing in, and the recovery codes it came with", async () => {
    const frank = { email: "frank@example.test", password: "frank's long enough password" };
    const at = h.clock.now();
    await h.service.db.insert(users).values({ id: `${ws}-frank`, workspaceId: ws, email: frank.email, emailNormalized: frank.email, emailVerified: true, passwordHash: await hashPassword(frank.password), createdAt: at, updatedAt: at });
    const [web] = await h.service.db.select({ authPolicy: clients.authPolicy }).from(clients).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
    await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
    h.service.cache.clear();
    try {
      const s = await passwordStep(h, ws, { ...WEB, ...frank });
      await postStep(h, s, "/sign-in/totp/enroll/start");
      const { secret } = (await viewOf(h, s)).totp.enrollment!;
      await postStep(h, s, "/sign-in/totp/enroll", { code: codeAt(h, secret) });
      expect(outcome(await postStep(h, s, "/sign-in/recovery-codes/saved")).to).toBe("callback");
    } finally {
      await h.service.db.update(clients).set({ authPolicy: web.authPolicy }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
      h.service.cache.clear();
    }
    expect(await dispatch()).toEqual({ sent: 2, skipped: 0, failed: 0 });
    const texts = (await mail(frank.email)).map((m) => m.text).join("\n");
    expect(texts).toContain(`An authenticator app was added to your Workspace ${ws} account.`);
    expect(texts).toContain("A new set of recovery codes was generated");
  });

  it("alerts a refresh token's reuse to the grant's user, naming the application", async () => {
    const s = await signInFrom(new Jar(), BOB);
    const code = s.callback.searchParams.get("code")!;
    const tokens = await (await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier: s.verifier, client_id: SPA.client_id })).json();
    const refresh = (rt: string) => call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: rt, client_id: SPA.client_id } });
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
    expect((await refresh(tokens.refresh_token)).status).toBe(400);
    expect(await dispatch()).toMatchObject({ sent: 1 });
    const alert = (await mail(BOB.email)).find((m) => m.subject === `A sign-in to your Workspace ${ws} account was ended`)!;
    expect(alert.text).toContain("Your sign-in to Single-page app was ended");
  });

  it("sends nothing for an event type that does not alert", async () => {
    await event("account_security.credential_renamed", bob, { portal_session: "p1", kind: "passkey", factor_id: "f1", name: "Phone" });
    await event("sign_in.failed", bob, { method: "password" });
    expect(await dispatch()).toEqual({ sent: 0, skipped: 0, failed: 0 });
  });

  it("sends nothing for a change that rolled back", async () => {
    await expect(
      h.service.db.transaction(async (tx) => {
        await recordAudit(tx, { workspaceId: ws, type: "account_security.recovery_codes_generated", subject: bob, data: { count: 10 }, at: h.clock.now() });
        throw new Error("the change failed");
      }),
    ).rejects.toThrow("the change failed");
    expect(await dispatch()).toEqual({ sent: 0, skipped: 0, failed: 0 });
  });

  it("skips an event whose account is gone, once", async () => {
    await event("account_security.recovery_codes_generated", "no-such-user", { count: 10 });
    expect(await dispatch()).toEqual({ sent: 0, skipped: 1, failed: 0 });
    expect(await dispatch()).toEqual({ sent: 0, skipped: 0, failed: 0 });
  });

  it("does not look further back than a day", async () => {
    await event("account_security.recovery_codes_generated", carol, { count: 10 });
    h.clock.advance(LOOK_BACK_MS + MINUTE);
    expect(await dispatch()).toEqual({ sent: 0, skipped: 0, failed: 0 });
  });
});

describe("the place", () => {
  it("names an approximate place where the installation looks one up, and the address alone when the lookup fails", async () => {
    const asked: string[] = [];
    const lookup = http.createServer((req, res) => {
      asked.push(req.url ?? "");
      if (req.url?.includes("198.51.100.4")) return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ city: "Lyon", region: "Auvergne-Rhône-Alpes", country: "FR" }));
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => lookup.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(lookup.address() as AddressInfo).port}/{address}/json`;
      const looking = createService(h.service.db, { ...h.service.config, alertPlaceLookupUrl: url }, h.clock);
      await event("account_security.recovery_codes_generated", carol, { count: 10 });
      await recordAudit(h.service.db, { workspaceId: ws, type: "account_security.recovery_codes_generated", subject: dan, data: { count: 10 }, ip: "192.0.2.9", at: h.clock.now() });
      expect(await dispatch(looking)).toMatchObject({ sent: 2 });
      expect(asked.sort()).toEqual(["/192.0.2.9/json", "/198.51.100.4/json"]);
      expect((await mail(CAROL.email))[0].text).toContain("From: 198.51.100.4 (approximately Lyon, Auvergne-Rhône-Alpes, FR)");
      expect((await mail(DAN.email))[0].text).toContain("From: 192.0.2.9\n");
    } finally {
      lookup.close();
    }
    // Without ALERT_PLACE_LOOKUP_URL nothing is asked (the other tests' messages say the address alone).
  });
});

describe("the policy", () => {
  it("sends nothing where the workspace's alerts are off (the default)", async () => {
    const quietBob = await userIdOf(h, quiet, BOB.email);
    await event("account_security.recovery_codes_generated", quietBob, { count: 10 }, quiet);
    expect(await dispatchSecurityAlerts(h.service, { workspaceId: quiet })).toEqual({ sent: 0, skipped: 0, failed: 0 });
    expect(await mail(BOB.email, quiet)).toHaveLength(0);
    expect(await exportWorkspace(h.service.db, quiet)).toMatchObject({ security_alerts: "off" });
  });

  it("sends only the alerts that are on, and none for events before they were turned on", async () => {
    await saveAlertPolicy(h.service.db, ws, { ...ALL_ON, new_recovery_codes: false }, h.clock.now());
    await event("account_security.recovery_codes_generated", carol, { count: 10 });
    expect(await dispatch()).toEqual({ sent: 0, skipped: 0, failed: 0 });
    h.clock.advance(MINUTE);
    await saveAlertPolicy(h.service.db, ws, ALL_ON, h.clock.now());
    expect(await dispatch()).toEqual({ sent: 0, skipped: 0, failed: 0 });
    await event("account_security.recovery_codes_generated", carol, { count: 10 });
    expect(await dispatch()).toMatchObject({ sent: 1 });
    expect(await alertPolicyFor(h.service.db, ws)).toEqual(ALL_ON);
    expect(await exportWorkspace(h.service.db, ws)).toMatchObject({ security_alerts: ALL_ON });
  });
});

describe("delivery", () => {
  it("retries a message the mail server refused after the claim's lease, and sends it once", async () => {
    const refusing = createService(h.service.db, { ...h.service.config, mail: { transport: "smtp", smtpUrl: "smtp://127.0.0.1:9", from: "x@auth.example.test" } }, h.clock);
    await event("account_security.credential_added", carol, { portal_session: "p2", kind: "totp", factor_id: "f9" });
    const before = (await mail(CAROL.email)).length;
    expect(await dispatch(refusing)).toEqual({ sent: 0, skipped: 0, failed: 1 });
    // Within the lease nobody takes it again.
    expect(await dispatch()).toEqual({ sent: 0, skipped: 0, failed: 0 });
    h.clock.advance(CLAIM_LEASE_MS + MINUTE);
    expect(await dispatch()).toEqual({ sent: 1, skipped: 0, failed: 0 });
    expect(await mail(CAROL.email)).toHaveLength(before + 1);
    const [claim] = await h.service.db.select().from(securityAlerts).where(eq(securityAlerts.workspaceId, ws)).orderBy(securityAlerts.claimedAt).limit(1);
    expect(claim.outcome).not.toBeNull();
  });

  it("a background run reads only the events since its last run, yet retries a lapsed claim of an older one", async () => {
    const refusing = createService(h.service.db, { ...h.service.config, mail: { transport: "smtp", smtpUrl: "smtp://127.0.0.1:9", from: "x@auth.example.test" } }, h.clock);
    await event("account_security.credential_added", carol, { portal_session: "p3", kind: "passkey", factor_id: "f10" });
    expect(await dispatch(refusing)).toMatchObject({ failed: 1 });
    h.clock.advance(CLAIM_LEASE_MS + 10 * MINUTE);
    // Written before the window the run reads (the run before it read it).
    await recordAudit(h.service.db, { workspaceId: ws, type: "account_security.recovery_codes_generated", subject: carol, data: { count: 10 }, at: new Date(h.clock.now().getTime() - 5 * MINUTE) });
    await event("account_security.credential_removed", carol, { portal_session: "p3", kind: "passkey", factor_id: "f10", name: null });
    const after = new Date(h.clock.now().getTime() - MINUTE);
    expect(await dispatchSecurityAlerts(h.service, { workspaceId: ws, after })).toEqual({ sent: 2, skipped: 0, failed: 0 });
    expect(await dispatch()).toEqual({ sent: 1, skipped: 0, failed: 0 });
  });

  it("sends each alert once when several dispatchers run at the same time (each on its own connections)", async () => {
    const others = await Promise.all([openTestDatabase(), openTestDatabase()]);
    const services = others.map((o) => createService(o.db, h.service.config, h.clock));
    const before = (await mail(DAN.email)).length;
    for (let i = 0; i < 12; i++) await event("account_security.recovery_codes_generated", dan, { count: 10 });
    const results = await Promise.all([dispatch(), ...services.map((s) => dispatch(s)), ...services.map((s) => dispatch(s))]);
    expect(results.reduce((n, r) => n + r.sent, 0)).toBe(12);
    expect(await mail(DAN.email)).toHaveLength(before + 12);
  });
});
