/**
 * Several instances on one PostgreSQL database ("Several instances" in docs/operations.md): two
 * real server processes (the compiled server, as `npm start` runs it) with the same DATABASE_URL,
 * MASTER_KEY and PUBLIC_URL, behind a round-robin proxy in this test, which sends each request to
 * the other instance than the last. Through it:
 *
 * - every one-time proof raced by 20 parallel requests, spread over both instances, has exactly
 *   one winner;
 * - guessing ceilings and rate limits hold across both instances;
 * - a change made through one instance (its console) is answered by the other at once: a workspace
 *   deleted, a signing key published and activated, a client secret revoked.
 *
 * The test process reads and writes the same database with a service of its own (same key, same
 * PUBLIC_URL), for what it seeds and what it looks at, and drives the flows with the integration
 * tests' helpers, whose requests go over HTTP (tests/helpers/instances.ts). Needs the production
 * build, like the other tests that start the real server.
 */
import { randomBytes } from "node:crypto";
import { and, eq, like } from "drizzle-orm";
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openDatabase, runMigrations, type DatabaseHandle } from "../../db/client";
import { clientSecrets, clients, factorChallenges, operatorMemberships, rateLimits, signingKeys, users } from "../../db/schema";
import type { Config } from "../../lib/config";
import { createService } from "../../lib/service";
import { importWorkspace } from "../../lib/workspaces/file";
import { b64url, basic, call, exchangeCode, Jar, PUBLIC_URL, signIn, TestClock, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, API, M2M, SPA, WEB, standardWorkspace } from "../helpers/fixtures";
import { freePort, listening, runRealServer, startRealServer, type RealServer } from "../helpers/real-server";
import { formOnPage, httpSend, PIN_HEADER, postForm, roundRobinProxy, SERVED_BY, submitForm, type RoundRobinProxy } from "../helpers/instances";
import { createDatabase, dropDatabase, freshDatabaseName } from "../setup/database";
import { consoleSignIn, createOperator, runRegistered } from "../integration/console-helpers";
import { codeOf, SmtpInbox } from "../../e2e/smtp-inbox";
import { outcome, passwordStep, postPassword, postStep, startSignIn, userIdOf, viewOf, type PendingSignIn } from "../helpers/factors/sign-in";
import { enterSignInCode, requestSignInCode } from "../helpers/factors/email";
import { codeAt, giveTotp } from "../helpers/factors/totp";
import { SoftAuthenticator } from "../helpers/factors/webauthn";
import { SYSTEM_WORKSPACE_ID } from "../../lib/console/system";

const runUrl = inject("databaseUrl");

/**
 * Whether `probe` holds within `withinMs`, asked again every 10 ms: "at once" between instances is
 * as soon as the change's announcement reaches the other process (well under a millisecond on an
 * idle host; later only when that process waits for a CPU), against its caches' 5 and 30 s.
 */
async function soon(probe: () => Promise<boolean>, withinMs = 1_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.runIf(Boolean(runUrl) && runRealServer)("two server processes on one PostgreSQL database, behind a round-robin proxy", () => {
  const name = freshDatabaseName("latchkey_instances");
  const masterKey = randomBytes(32);
  const servers: RealServer[] = [];
  const inbox = new SmtpInbox();
  let proxy: RoundRobinProxy;
  let handle: DatabaseHandle;
  let h: Harness;
  const ws = uniqueWorkspaceId("instances");

  /** Pins a request to one instance (the proxy's PIN_HEADER). */
  const on = (instance: "a" | "b") => ({ [PIN_HEADER]: instance });

  beforeAll(async () => {
    const databaseUrl = await createDatabase(runUrl!, name);
    await inbox.listen(0);
    const ports = { a: await freePort(), b: await freePort() };
    const env = (port: number) => ({
      DATABASE_URL: databaseUrl,
      // B names its listening connection apart (as behind a transaction pooler); A listens on DATABASE_URL.
      ...(port === ports.b ? { DATABASE_LISTEN_URL: databaseUrl } : {}),
      MASTER_KEY: masterKey.toString("hex"),
      PUBLIC_URL,
      PORT: String(port),
      // The proxy is this test; each request names its client address (tests/helpers/instances.ts).
      TRUST_PROXY: "true",
      HTTP_CONNECTIONS_PER_ADDRESS: "0",
      RATE_LIMIT_PER_MINUTE: "300",
      RATE_LIMIT_FAILURES: "10",
      SMTP_URL: `smtp://127.0.0.1:${inbox.port}`,
    });
    // One after the other: the first migrates and prepares the database.
    for (const port of [ports.a, ports.b]) {
      const server = startRealServer(env(port));
      servers.push(server);
      await listening(server);
    }
    proxy = await roundRobinProxy(ports);
    handle = await openDatabase({ databaseUrl, poolSize: 4 });
    await runMigrations(handle, databaseUrl);
    const clock = new TestClock();
    // The servers run on the real clock; so do the flows driven from here.
    clock.now = () => new Date();
    const config: Config = {
      port: 0,
      publicUrl: PUBLIC_URL,
      databaseUrl,
      dataDir: "",
      masterKey,
      rateLimits: { requestsPerMinute: 300, failuresPer5Minutes: 10 },
      trustProxy: true,
      workers: 1,
      mail: { transport: "smtp", smtpUrl: `smtp://127.0.0.1:${inbox.port}`, from: "Latchkey <no-reply@auth.example.test>" },
    };
    h = { service: createService(handle.db, config, clock), clock, handle, send: httpSend(proxy.port) };
    await importWorkspace(handle.db, standardWorkspace(ws), { clock, masterKey });
  }, 240_000);

  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill("SIGKILL");
    await proxy?.close();
    await inbox.close();
    await handle?.close();
    await dropDatabase(runUrl!, name);
  });

  it("serves through both instances, one request each in turn", async () => {
    const answers = await Promise.all(Array.from({ length: 4 }, () => call(h, `/t/${ws}/.well-known/openid-configuration`)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(answers.map((r) => r.headers.get(SERVED_BY)).sort()).toEqual(["a", "a", "b", "b"]);
  });

  /** Which instances gave these answers (the proxy's SERVED_BY). */
  const servedBy = (answers: Response[]) => [...new Set(answers.map((r) => r.headers.get(SERVED_BY)))].sort();

  describe("20 parallel uses of one proof, spread over both instances: exactly one wins", () => {
    const rws = uniqueWorkspaceId("races");
    const MFA = { client_id: "mfa", redirect_uri: "https://mfa.example.test/callback" };
    const PASSWORD = "a long enough password for tests";
    const user = (name: string) => ({ email: `${name}@example.test`, password: PASSWORD });
    const CALLBACK = "https://web.example.test/account/handoff";

    beforeAll(async () => {
      const doc = standardWorkspace(rws);
      for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
      doc.applications.push({ client_id: MFA.client_id, name: "MFA app", type: "PUBLIC", redirect_uris: [MFA.redirect_uri], identity_scopes: ["openid", "email", "profile"], auth_policy: { mfa: "required" } });
      doc.users.push(...["handoff", "email", "totp", "passkey", "guess"].map((n) => ({ email: user(n).email, password: PASSWORD, email_verified: true })));
      await importWorkspace(handle.db, doc, { clock: h.clock, masterKey });
    });

    /** 20 parallel copies of a request. */
    const twenty = (request: () => Promise<Response>) => Promise.all(Array.from({ length: 20 }, request));

    it("an authorization code", async () => {
      const { callback, verifier } = await signIn(h, rws, { ...SPA, ...ADA });
      const code = callback.searchParams.get("code")!;
      const exchanges = await twenty(() => exchangeCode(h, rws, { code, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id }));
      expect(servedBy(exchanges)).toEqual(["a", "b"]);
      expect(exchanges.filter((r) => r.status === 200)).toHaveLength(1);
      expect(exchanges.filter((r) => r.status === 400)).toHaveLength(19);
    });

    it("a refresh token", async () => {
      // A code of its own: a code presented again revokes what it issued (the race above).
      const { callback, verifier } = await signIn(h, rws, { ...SPA, ...ADA });
      const exchanged = await exchangeCode(h, rws, { code: callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id });
      const { refresh_token } = (await exchanged.json()) as { refresh_token: string };
      const refreshes = await twenty(() => call(h, `/t/${rws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token, client_id: SPA.client_id } }));
      expect(servedBy(refreshes)).toEqual(["a", "b"]);
      expect(refreshes.filter((r) => r.status === 200)).toHaveLength(1);
      expect(refreshes.filter((r) => r.status === 400)).toHaveLength(19);
    });

    it("the email code of a sign-in", async () => {
      const s = await startSignIn(h, rws, SPA);
      const since = inbox.messages.length;
      expect(outcome(await requestSignInCode(h, s, user("email").email))).toEqual({ to: "page", error: null });
      const code = codeOf(await inbox.waitFor(user("email").email, { since }));
      const answers = await twenty(() => enterSignInCode(h, s, code));
      expect(servedBy(answers)).toEqual(["a", "b"]);
      const outcomes = answers.map(outcome);
      expect(outcomes.filter((o) => o.to === "callback")).toHaveLength(1);
      // The others: the code is used, or (arriving later) the sign-in is already over.
      for (const o of outcomes) if (o.to === "page") expect([null, "code_expired"]).toContain(o.error);
    });

    it("one authenticator-app step, in 20 sign-ins", async () => {
      const { seed } = await giveTotp(h, rws, user("totp").email);
      const signIns = await Promise.all(Array.from({ length: 20 }, () => passwordStep(h, rws, { ...MFA, ...user("totp") })));
      const code = codeAt(h, seed);
      const answers = await Promise.all(signIns.map((s) => postStep(h, s, "/sign-in/totp", { code })));
      expect(servedBy(answers)).toEqual(["a", "b"]);
      const outcomes = answers.map(outcome);
      expect(outcomes.filter((o) => o.to === "callback")).toHaveLength(1);
      expect(outcomes.filter((o) => o.to === "page" && o.error === "invalid_code")).toHaveLength(19);
    });

    it("one WebAuthn assertion", async () => {
      const authenticator = new SoftAuthenticator();
      await authenticator.enrol(h, rws, await userIdOf(h, rws, user("passkey").email), "passkey");
      const s = await startSignIn(h, rws, SPA);
      const view = await viewOf(h, s);
      const assertion = JSON.stringify(authenticator.assert(JSON.parse(view.webauthn.options!)));
      const answers = await twenty(() => call(h, `/t/${rws}/sign-in/passkey`, { form: { tx: s.tx, csrf: view.csrf, response: assertion }, cookie: s.jar.header(), headers: { origin: PUBLIC_URL } }));
      expect(servedBy(answers)).toEqual(["a", "b"]);
      // The others: refused (the challenge is used: back to the page), or the sign-in already completed (400).
      for (const r of answers) expect([303, 400]).toContain(r.status);
      expect(answers.filter((r) => r.status === 303).map(outcome).filter((o) => o.to === "callback")).toHaveLength(1);
    });

    it("the account-security handoff: its approve, then its completion handle", async () => {
      const api = (endpoint: string, body: unknown) =>
        call(h, `/t/${rws}/auth/account/${endpoint}?client_id=${WEB.client_id}`, {
          method: "POST",
          body: JSON.stringify(body),
          headers: { authorization: basic(WEB.client_id, WEB.secret), "content-type": "application/json" },
        });
      const visit = async (url: string, jar: Jar) => {
        const target = new URL(url, PUBLIC_URL);
        const res = await call(h, target.pathname + target.search, { cookie: jar.header() });
        jar.take(res);
        return res;
      };
      const locationOf = (res: Response) => new URL(res.headers.get("location")!, PUBLIC_URL);
      expect((await api("configuration", { callback_uri: CALLBACK, return_uri: "https://web.example.test/settings", version: 0 })).status).toBe(200);

      // The user signs in to the web application; then an authenticator app is required, so the
      // launch asks the browser to step up, and the browser goes to the registered callback.
      const jar = new Jar();
      const { callback, verifier } = await signIn(h, rws, { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri, ...user("handoff"), scope: "openid" }, jar);
      const exchanged = await exchangeCode(h, rws, { code: callback.searchParams.get("code")!, redirect_uri: WEB.redirect_uri, verifier, authorization: basic(WEB.client_id, WEB.secret) });
      const { access_token: token } = (await exchanged.json()) as { access_token: string };
      const { seed } = await giveTotp(h, rws, user("handoff").email);
      await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, rws), eq(clients.clientId, WEB.client_id)));
      const state = b64url(32);
      const launched = await api("launch", { user_token: token, state });
      expect(launched.status).toBe(200);
      const toSignIn = await visit(((await launched.json()) as { launch_url: string }).launch_url, jar);
      const signInUrl = locationOf(toSignIn);
      expect(signInUrl.pathname).toBe(`/t/${rws}/sign-in`);
      const s: PendingSignIn = { workspaceId: rws, tx: signInUrl.searchParams.get("tx")!, jar, verifier: "", state: "", nonce: "", client: { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri } };
      const back = locationOf(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, seed) }));
      const challenge = locationOf(await visit(back.href, jar)).searchParams.get("challenge")!;

      const approvals = await twenty(() => api("approve", { user_token: token, challenge, state }));
      expect(servedBy(approvals)).toEqual(["a", "b"]);
      expect(approvals.filter((r) => r.status === 200)).toHaveLength(1);
      expect(approvals.filter((r) => r.status === 400)).toHaveLength(19);
      const completion = new URL(((await approvals.find((r) => r.status === 200)!.json()) as { completion_url: string }).completion_url);
      const redemptions = await twenty(() => call(h, completion.pathname + completion.search, { cookie: `lk_session=${jar.get("lk_session")}` }));
      expect(servedBy(redemptions)).toEqual(["a", "b"]);
      expect(redemptions.filter((r) => r.status === 303)).toHaveLength(1);
      expect(redemptions.filter((r) => r.status === 400)).toHaveLength(19);
    });

    it("an operator invitation: its code proves the mailbox once, and the account is created once, through the invitation page's forms", async () => {
      await createOperator(h, "owner@races.test", { [rws]: "owner" });
      const owner = (await consoleSignIn(h, "owner@races.test")).token;
      const invited = await runRegistered(h, owner, rws, "inviteOperator", { email: "invited@races.test", role: "viewer" });
      if (!invited.ok) throw new Error(JSON.stringify(invited));
      const page = `/console/invitation?token=${new URL((invited.result as { url: string }).url).searchParams.get("token")}`;
      // The invitee asks for the code sent to the address, then 20 posts of it at once: one proves the mailbox.
      const since = inbox.messages.length;
      expect((await submitForm(h, page, "Send a code", {}, { cookie: "" })).status).toBe(200);
      const mail = await inbox.waitFor("invited@races.test", { since, match: (m) => m.subject.startsWith("Your code to accept") });
      const code = /Your code is (\d{6})/.exec(mail.text)![1];
      const codeForm = await formOnPage(h, page, "Enter the code", { cookie: "" });
      const proofs = await Promise.all(Array.from({ length: 20 }, () => postForm(h, page, { ...codeForm, code }, { cookie: "" })));
      expect(servedBy(proofs)).toEqual(["a", "b"]);
      const proven = proofs.filter((r) => r.status === 303);
      expect(proven).toHaveLength(1);
      const cookie = proven[0].headers
        .getSetCookie()
        .map((c) => c.split(";")[0])
        .filter((c) => /^lk_invitation(_proof)?=./.test(c))
        .join("; ");
      expect(cookie).toContain("lk_invitation_proof=");
      // One page with the proof, as 20 tabs of that browser would have it open; then 20 posts of its form at once.
      const form = await formOnPage(h, page, "Create your operator account", { cookie });
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => postForm(h, page, { ...form, name: `Racer ${i}`, password: `racer password ${i}`, password_confirm: `racer password ${i}` }, { cookie })),
      );
      expect(servedBy(answers)).toEqual(["a", "b"]);
      expect(answers.filter((r) => r.status === 303)).toHaveLength(1);
      const accounts = await h.service.db.select().from(users).where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.emailNormalized, "invited@races.test")));
      expect(accounts).toHaveLength(1);
      expect(await h.service.db.select().from(operatorMemberships).where(and(eq(operatorMemberships.operatorUserId, accounts[0].id), eq(operatorMemberships.workspaceId, rws)))).toHaveLength(1);
    });

    describe("guessing ceilings and rate limits hold across both instances", () => {
      it("an email code: 20 parallel wrong guesses, never more than 5 checked; the right code is then refused", async () => {
        const s = await startSignIn(h, rws, SPA);
        const since = inbox.messages.length;
        expect(outcome(await requestSignInCode(h, s, ADA.email))).toEqual({ to: "page", error: null });
        const code = codeOf(await inbox.waitFor(ADA.email, { since }));
        const wrong = (i: number) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, "0");
        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => enterSignInCode(h, s, wrong(i))));
        expect(servedBy(answers)).toEqual(["a", "b"]);
        expect(answers.map(outcome).every((o) => o.to === "page")).toBe(true);
        const [row] = await h.service.db.select().from(factorChallenges).where(and(eq(factorChallenges.workspaceId, rws), eq(factorChallenges.kind, "email_otp"), eq(factorChallenges.bindingId, s.tx)));
        expect(row.attempts).toBe(5);
        expect(outcome(await enterSignInCode(h, s, code))).toEqual({ to: "page", error: "code_expired" });
      });

      it("passwords: 14 wrong guesses from one address, each on the other instance than the last: 10 checked; then the right one is refused there", async () => {
        const address = "192.0.2.77";
        const from = { "x-forwarded-for": address };
        const answers: Response[] = [];
        for (let i = 0; i < 14; i++) {
          const s = await startSignIn(h, rws, SPA);
          answers.push(await postStep(h, s, "/sign-in/password", { email: user("guess").email, password: `wrong password ${i}` }, { headers: { ...from, ...on(i % 2 ? "b" : "a") } }));
        }
        expect(answers.map((r) => outcome(r))).toEqual([...Array(10).fill({ to: "page", error: "invalid_credentials" }), ...Array(4).fill({ to: "page", error: "rate_limited" })]);
        const [counter] = await h.service.db.select().from(rateLimits).where(like(rateLimits.key, `password:${rws}:${user("guess").email}:${address}`));
        expect(counter.count).toBe(10);
        for (const instance of ["a", "b"] as const) {
          const s = await startSignIn(h, rws, SPA);
          expect(outcome(await postStep(h, s, "/sign-in/password", user("guess"), { headers: { ...from, ...on(instance) } }))).toEqual({ to: "page", error: "rate_limited" });
        }
      });

      it("requests per client address: the instances share one count (each alone would answer twice as many)", async () => {
        // A burst within one fixed window of a minute.
        if (Date.now() % 60_000 > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 100));
        const from = { "x-forwarded-for": "192.0.2.88" };
        const answers: Response[] = [];
        for (let i = 0; i < 800; i++) answers.push(await call(h, `/t/${rws}/.well-known/jwks.json`, { headers: from }));
        const ok = answers.filter((r) => r.status === 200).length;
        // 300 a minute: each instance counting alone would answer 300 of its 400. Shared, the count
        // reaches each instance within 250 ms, so it answers a little more than 300 in all.
        expect(ok).toBeGreaterThanOrEqual(300);
        expect(ok).toBeLessThan(450);
        expect(servedBy(answers.filter((r) => r.status === 429))).toEqual(["a", "b"]);
      }, 120_000);
    });
  });

  describe("a change made through one instance is answered by the other at once", () => {
    let owner: string;
    const consoleCookie = () => `lk_console=${owner}`;

    beforeAll(async () => {
      await createOperator(h, "owner@instances.test", { [ws]: "owner" });
      owner = (await consoleSignIn(h, "owner@instances.test")).token;
    });

    it("a signing key published on A is in B's JWKS at once; activated on A, B signs ID tokens with it at once", async () => {
      const jwks = async (instance: "a" | "b") => ((await (await call(h, `/t/${ws}/.well-known/jwks.json`, { headers: on(instance) })).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
      // B signs with the current key (and holds it in its cache).
      const signedBy = async (instance: "a" | "b") => {
        const { callback, verifier } = await signIn(h, ws, { ...SPA, ...ADA });
        const res = await call(h, `/t/${ws}/oauth2/token`, {
          form: { grant_type: "authorization_code", code: callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, code_verifier: verifier, client_id: SPA.client_id },
          headers: on(instance),
        });
        expect(res.status).toBe(200);
        return decodeProtectedHeader(((await res.json()) as { id_token: string }).id_token).kid;
      };
      const first = await signedBy("b");
      expect(await jwks("b")).toEqual([first]);

      const published = await submitForm(h, `/console/w/${ws}/keys`, "Publish a new key", {}, { cookie: consoleCookie(), headers: on("a") });
      expect(published.status).toBe(200);
      expect(published.headers.get(SERVED_BY)).toBe("a");
      const [pending] = await h.service.db.select().from(signingKeys).where(and(eq(signingKeys.workspaceId, ws), eq(signingKeys.status, "published")));
      expect(pending).toBeDefined();
      expect((await jwks("b")).sort()).toEqual([first, pending.kid].sort());

      // Published keys sign only once verifiers' JWKS caches (5 minutes) have had them: as if that long ago.
      await h.service.db.update(signingKeys).set({ createdAt: new Date(Date.now() - 301_000) }).where(eq(signingKeys.kid, pending.kid));
      const activated = await submitForm(h, `/console/w/${ws}/keys`, "Activate the new key", {}, { cookie: consoleCookie(), headers: on("a") });
      expect(activated.status).toBe(200);
      // B's cache would keep the old key 30 s more.
      expect(await soon(async () => (await signedBy("b")) === pending.kid)).toBe(true);
    });

    it("a client secret revoked on A is refused on B at once (client credentials, introspection and the token endpoint)", async () => {
      const token = (instance: "a" | "b") =>
        call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "client_credentials", resource: API, scope: "read:things" }, headers: { authorization: basic(M2M.client_id, M2M.secret), ...on(instance) } });
      // B has authenticated the secret: its credential memo holds it.
      for (let i = 0; i < 3; i++) expect((await token("b")).status).toBe(200);
      const [secret] = await h.service.db
        .select({ id: clientSecrets.id })
        .from(clientSecrets)
        .innerJoin(clients, eq(clients.id, clientSecrets.clientPk))
        .where(and(eq(clients.workspaceId, ws), eq(clients.clientId, M2M.client_id)));
      const revoked = await submitForm(h, `/console/w/${ws}/applications/${M2M.client_id}?tab=secrets`, "Revoke secret", { secret_id: secret.id }, { cookie: consoleCookie(), headers: on("a") });
      expect(revoked.status).toBe(200);
      const [row] = await h.service.db.select().from(clientSecrets).where(eq(clientSecrets.id, secret.id));
      expect(row.revokedAt).not.toBeNull();
      const refused = await token("b");
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { error: string }).error).toBe("invalid_client");
      const introspected = await call(h, `/t/${ws}/oauth2/introspect`, { form: { token: "x" }, headers: { authorization: basic(M2M.client_id, M2M.secret), ...on("b") } });
      expect(introspected.status).toBe(401);
    });

    it("a workspace deleted on A answers 404 on B at once", async () => {
      const discovery = () => call(h, `/t/${ws}/.well-known/openid-configuration`, { headers: on("b") });
      // B has just read the workspace: its cache would answer for it 5 s more.
      expect((await discovery()).status).toBe(200);
      const deleted = await submitForm(h, `/console/w/${ws}/settings`, `Delete Workspace ${ws} and everything in it?`, { confirm: ws }, { cookie: consoleCookie(), headers: on("a") });
      expect(deleted.status).toBe(303);
      expect(deleted.headers.get(SERVED_BY)).toBe("a");
      expect(await soon(async () => (await discovery()).status === 404)).toBe(true);
      expect((await call(h, `/t/${ws}/.well-known/jwks.json`, { headers: on("b") })).status).toBe(404);
    });
  });
});

