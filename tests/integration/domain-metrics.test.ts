/**
 * The domain metrics (lib/metrics, docs/configuration.md "Domain metrics"), each driven by the real
 * behaviour in process: every metric moves by exactly what happened, with the expected labels, and
 * no label ever holds a client, user or workspace id, an email or an address. The registry is the
 * process's (other files may record into it too): each test compares before and after.
 */
import { and, eq, sql } from "drizzle-orm";
import { register } from "prom-client";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { openDatabase, type DatabaseHandle, type DatabaseObserver } from "../../db/client";
import { clients } from "../../db/schema";
import { CLIENT_ADDRESS_HEADER } from "../../lib/http/client-address";
import { databaseSignals } from "../../lib/signals/database";
import { SIGN_IN_OUTCOMES } from "../../lib/metrics";
import { enableDomainMetrics } from "../../lib/metrics/prometheus";
import { GRANTS } from "../../lib/oauth/grants";
import { federatedEvidence } from "../../lib/federation/identities";
import { GUESSING_LIMITS, REQUEST_LIMITS } from "../../lib/server/limits";
import { createService } from "../../lib/service";
import { SIGN_IN_METHODS, signInMethodOf } from "../../lib/sign-in/outcomes";
import { evidenceFor } from "../../lib/authn/evidence";
import { ADA, API, M2M, SPA, standardWorkspace, WEB } from "../helpers/fixtures";
import { basic, call, createHarness, exchangeCode, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { outcome, postPassword, postStep, startSignIn, passwordStep, userIdOf } from "../helpers/factors/sign-in";
import { codeAt, giveTotp } from "../helpers/factors/totp";
import { startGithubStandin, type GithubStandin } from "../helpers/federation/github-standin";
import { callbackUrlOf, deliverCallback, seedWithSecrets, startSocial, upstreamLocation } from "../helpers/federation/setup";

/** The value of `name`'s samples with `labels` (summed; for a histogram, of its series `series`: `_count`, `_sum`). */
async function value(name: string, labels: Record<string, string> = {}, series?: string): Promise<number> {
  const metric = register.getSingleMetric(name);
  if (!metric) throw new Error(`${name} is not registered`);
  const { values } = await metric.get();
  return values
    .filter((v) => (series === undefined || (v as { metricName?: string }).metricName === `${name}${series}`) && Object.entries(labels).every(([k, x]) => v.labels[k] === x))
    .reduce((sum, v) => sum + v.value, 0);
}

/** Every sample's value of `name`, keyed by its labels, to compare all of a metric's series before and after. */
async function series(name: string): Promise<Record<string, number>> {
  const { values } = await register.getSingleMetric(name)!.get();
  return Object.fromEntries(values.map((v) => [JSON.stringify(v.labels), v.value]));
}

/** What changed in `name` between two `series` snapshots: label set → difference (only those that moved). */
function moved(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v !== (before[k] ?? 0)) out[k] = v - (before[k] ?? 0);
  return out;
}
const key = (labels: Record<string, string>) => JSON.stringify(labels);

let h: Harness;
const ws = uniqueWorkspaceId("metrics");
let github: GithubStandin;
const OCTOCAT = { id: 583231, login: "octocat", name: "The Octocat", emails: [{ email: "octocat@octo.test", primary: true, verified: true }] };
const TOTP_USER = { email: "totp@example.test", password: "a long enough password for tests" };
/** Every id, email and address these tests use: none may appear as a label value. */
const identifying = new Set<string>();

beforeAll(async () => {
  enableDomainMetrics(SIGN_IN_METHODS);
  h = await createHarness();
  github = await startGithubStandin({ redirectUris: [callbackUrlOf(ws)], users: [OCTOCAT] });
  const doc = standardWorkspace(ws);
  doc.users.push({ email: TOTP_USER.email, password: TOTP_USER.password, email_verified: true });
  doc.applications.find((a) => a.client_id === WEB.client_id)!.social_providers = ["github"];
  await seedWithSecrets(
    h,
    {
      ...doc,
      social_providers: [github.workspaceProvider("GITHUB_SECRET")],
    },
    { GITHUB_SECRET: github.clientSecret },
  );
  for (const value of [ws, SPA.client_id, WEB.client_id, M2M.client_id, ADA.email, TOTP_USER.email, "octocat@octo.test", github.clientId]) identifying.add(value);
  identifying.add(await userIdOf(h, ws, ADA.email));
  identifying.add(await userIdOf(h, ws, TOTP_USER.email));
});

afterAll(async () => {
  await github?.close();
});

const ISSUED = "latchkey_tokens_issued_total";
const SIGN_INS = "latchkey_sign_ins_total";
const REFUSALS = "latchkey_rate_limit_refusals_total";
const REUSE = "latchkey_refresh_reuse_detections_total";
const DEPENDENCY = "latchkey_dependency_failures_total";
const DURATION = "latchkey_db_query_duration_seconds";
const POOL = "latchkey_db_pool_connections";

async function codeTokens() {
  const r = await signIn(h, ws, { ...SPA, ...ADA });
  const res = await exchangeCode(h, ws, { code: r.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: r.verifier, client_id: SPA.client_id });
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; refresh_token: string };
}
const refresh = (rt: string) => call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: rt, client_id: SPA.client_id } });
const clientCredentials = () =>
  call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "client_credentials", resource: API, scope: "read:things" }, headers: { authorization: basic(M2M.client_id, M2M.secret) } });

describe("latchkey_tokens_issued_total", () => {
  it("counts each token response once, by grant type, and nothing for a refused request", async () => {
    const before = await series(ISSUED);
    const tokens = await codeTokens();
    const rotated = await refresh(tokens.refresh_token);
    expect(rotated.status).toBe(200);
    expect((await clientCredentials()).status).toBe(200);
    expect((await clientCredentials()).status).toBe(200);
    // Refused: a wrong code, an unknown refresh token, an unsupported grant type.
    expect((await exchangeCode(h, ws, { code: "nope", redirect_uri: SPA.redirect_uri, verifier: "v".repeat(43), client_id: SPA.client_id })).status).toBe(400);
    expect((await refresh("lkr_unknown")).status).toBe(400);
    expect((await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "password", client_id: SPA.client_id } })).status).toBe(400);
    expect(moved(before, await series(ISSUED))).toEqual({
      [key({ grant: "authorization_code" })]: 1,
      [key({ grant: "refresh_token" })]: 1,
      [key({ grant: "client_credentials" })]: 2,
    });
  });
});

describe("latchkey_refresh_reuse_detections_total", () => {
  it("counts a superseded refresh token presented again, once per family it ends", async () => {
    const tokens = await codeTokens();
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
    const before = await value(REUSE);
    expect((await refresh(tokens.refresh_token)).status).toBe(400);
    expect(await value(REUSE)).toBe(before + 1);
    // The family is already revoked: presenting it again is no new detection.
    expect((await refresh(tokens.refresh_token)).status).toBe(400);
    expect(await value(REUSE)).toBe(before + 1);
    // Nor is an unknown token, or a current one.
    expect((await refresh("lkr_unknown")).status).toBe(400);
    const fresh = await codeTokens();
    expect((await refresh(fresh.refresh_token)).status).toBe(200);
    expect(await value(REUSE)).toBe(before + 1);
  });
});

describe("latchkey_sign_ins_total", () => {
  it("counts a verified password and a refused one (a wrong password, an unknown account) by method", async () => {
    const before = await series(SIGN_INS);
    await signIn(h, ws, { ...SPA, ...ADA });
    const s = await startSignIn(h, ws, { ...SPA });
    expect(outcome(await postPassword(h, s, ADA.email, "wrong password!"))).toMatchObject({ to: "page", error: "invalid_credentials" });
    expect(outcome(await postPassword(h, s, "nobody@example.test", "wrong password!"))).toMatchObject({ to: "page" });
    expect(moved(before, await series(SIGN_INS))).toEqual({
      [key({ method: "password", outcome: "success" })]: 1,
      [key({ method: "password", outcome: "failure" })]: 2,
    });
  });

  it("counts each factor of a multi-factor sign-in: the password, a refused and a verified authenticator code", async () => {
    await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
    h.service.cache.clear();
    const { seed: totpSeed } = await giveTotp(h, ws, TOTP_USER.email);
    const before = await series(SIGN_INS);
    const s = await passwordStep(h, ws, { ...WEB, ...TOTP_USER });
    const wrong = String((Number(codeAt(h, totpSeed)) + 1) % 1_000_000).padStart(6, "0");
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: wrong }))).toMatchObject({ to: "page" });
    expect(outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, totpSeed) }))).toMatchObject({ to: "callback" });
    expect(moved(before, await series(SIGN_INS))).toEqual({
      [key({ method: "password", outcome: "success" })]: 1,
      [key({ method: "totp", outcome: "failure" })]: 1,
      [key({ method: "totp", outcome: "success" })]: 1,
    });
    await h.service.db.update(clients).set({ authPolicy: {} }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
    h.service.cache.clear();
  });

  it("counts a sign-in through a social provider as social", async () => {
    const before = await series(SIGN_INS);
    const s = await startSignIn(h, ws, { ...WEB });
    const url = upstreamLocation(await startSocial(h, s, "github"), ws);
    expect(outcome(await deliverCallback(h, s, await github.authorize(url, { user: OCTOCAT.id })))).toMatchObject({ to: "callback" });
    identifying.add(await userIdOf(h, ws, "octocat@octo.test"));
    expect(moved(before, await series(SIGN_INS))).toEqual({ [key({ method: "social", outcome: "success" })]: 1 });
  });

  it("names each verified method within the closed list: an enterprise connection apart from a social provider", () => {
    const now = new Date();
    expect(signInMethodOf(federatedEvidence(now, { connectionId: "c1", socialProviderId: null, upstreamMfa: false }))).toBe("enterprise");
    expect(signInMethodOf(federatedEvidence(now, { connectionId: "c1", socialProviderId: null, upstreamMfa: true }))).toBe("enterprise");
    expect(signInMethodOf(federatedEvidence(now, { connectionId: null, socialProviderId: "s1", upstreamMfa: false }))).toBe("social");
    expect(signInMethodOf(evidenceFor("email_otp", now))).toBe("email_code");
    expect(signInMethodOf(evidenceFor("security_key", now, "k1"))).toBe("security_key");
  });
});

describe("latchkey_rate_limit_refusals_total", () => {
  let limited: Harness;
  const lws = uniqueWorkspaceId("metrics-limits");
  const from = (address: string) => ({ [CLIENT_ADDRESS_HEADER]: address });

  beforeAll(async () => {
    limited = await createHarness({ rateLimits: { requestsPerMinute: 20, failuresPer5Minutes: 3 } });
    await seed(limited, standardWorkspace(lws));
    identifying.add(lws);
  });

  it("counts each refusal by the declaration's name: per address, per client, failed client authentications", async () => {
    const before = await series(REFUSALS);
    for (let i = 0; i < 22; i++) await call(limited, `/t/${lws}/.well-known/openid-configuration`, { headers: from("10.9.0.1") });
    limited.clock.advance(60_000);
    for (let i = 0; i < 22; i++) await call(limited, `/t/${lws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "x", client_id: SPA.client_id }, headers: from(`10.9.1.${i}`) });
    limited.clock.advance(5 * 60_000);
    const wrongSecret = () => call(limited, `/t/${lws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "x" }, headers: { authorization: basic(WEB.client_id, "wrong"), ...from("10.9.2.1") } });
    for (let i = 0; i < 3; i++) expect((await wrongSecret()).status).toBe(401);
    expect((await wrongSecret()).status).toBe(401);
    expect(moved(before, await series(REFUSALS))).toEqual({ [key({ policy: "ip" })]: 2, [key({ policy: "client" })]: 2, [key({ policy: "authfail" })]: 1 });
    for (const address of ["10.9.0.1", "10.9.2.1"]) identifying.add(address);
  });

  it("counts a password attempt refused by its guessing limit under the factor's name, and not as a failed sign-in", async () => {
    limited.clock.advance(5 * 60_000);
    const refusalsBefore = await series(REFUSALS);
    const signInsBefore = await series(SIGN_INS);
    const s = await startSignIn(limited, lws, { ...SPA });
    const post = () => postStep(limited, s, "/sign-in/password", { email: ADA.email, password: "wrong password!" }, { headers: from("10.9.3.1") });
    for (let i = 0; i < 3; i++) expect(outcome(await post())).toMatchObject({ to: "page", error: "invalid_credentials" });
    expect(outcome(await post())).toMatchObject({ to: "page" });
    expect(moved(refusalsBefore, await series(REFUSALS))).toEqual({ [key({ policy: "password" })]: 1 });
    expect(moved(signInsBefore, await series(SIGN_INS))).toEqual({ [key({ method: "password", outcome: "failure" })]: 3 });
  });
});

describe("latchkey_dependency_failures_total", () => {
  let down: DatabaseHandle;
  let unavailable: Harness;
  beforeAll(async () => {
    // Nothing listens on port 9: every statement fails to connect.
    down = await openDatabase({ databaseUrl: "postgres://postgres@127.0.0.1:9/latchkey" });
    unavailable = { ...h, service: createService(down.db, h.service.config, h.clock) };
  });
  afterAll(async () => down.close());

  it("counts each 503 of an authority that cannot be confirmed, by the route's error family", async () => {
    // Each is logged in one line: not this test's subject.
    vi.spyOn(console, "error").mockImplementation(() => {});
    const before = await series(DEPENDENCY);
    expect((await call(unavailable, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "lkr_x", client_id: SPA.client_id } })).status).toBe(503);
    expect((await call(unavailable, `/t/${ws}/oidc/userinfo`, { headers: { authorization: "Bearer lka_x" } })).status).toBe(503);
    expect((await call(unavailable, `/t/${ws}/oauth2/authorize?client_id=spa`)).status).toBe(503);
    const check = await call(unavailable, `/t/${ws}/authorization/check`, {
      body: JSON.stringify({ resource: API, permission: "read:things", organization_id: null }),
      headers: { "content-type": "application/json", authorization: "Bearer lka_x" },
    });
    expect(check.status).toBe(503);
    expect(moved(before, await series(DEPENDENCY))).toEqual({ [key({ family: "oauth" })]: 2, [key({ family: "hosted" })]: 1, [key({ family: "problem" })]: 1 });
    vi.mocked(console.error).mockRestore();
  });
});

describe("the database's timings and pool", () => {
  let handle: DatabaseHandle;
  let on = false;
  const calls = { held: 0, timed: 0 };
  /** The service's observer (lib/signals/database.ts), switched by `on`, counting what the client asks of it. */
  const real = databaseSignals();
  const observer: DatabaseObserver = {
    get enabled() {
      return on && real.enabled;
    },
    opened: (max) => real.opened(max),
    held: (change) => (calls.held++, real.held(change)),
    timed: (kind, seconds) => (calls.timed++, real.timed(kind, seconds)),
    closed: () => real.closed(),
  };
  const databaseUrl = inject("databaseUrl");
  let maxBefore = 0;

  beforeAll(async () => {
    maxBefore = await value(POOL, { state: "max" });
    // A pool of one connection (the embedded database has one), so that a second holder waits.
    handle = await openDatabase(databaseUrl ? { databaseUrl, poolSize: 1, observer } : { observer });
  });
  afterAll(async () => handle?.close());

  const statements = () => value(DURATION, { kind: "statement" }, "_count");
  const transactions = () => value(DURATION, { kind: "transaction" }, "_count");

  it("asks nothing per statement while metrics are off", async () => {
    const [s, t] = [await statements(), await transactions()];
    await handle.db.execute(sql`select 1`);
    await handle.db.transaction(async (tx) => void (await tx.execute(sql`select 2`)));
    expect(calls).toEqual({ held: 0, timed: 0 });
    expect([await statements(), await transactions()]).toEqual([s, t]);
  });

  it("times each statement and each transaction (its statements each counted too)", async () => {
    on = true;
    const [s, t, sum] = [await statements(), await transactions(), await value(DURATION, { kind: "statement" }, "_sum")];
    await handle.db.execute(sql`select 1`);
    await handle.db.execute(sql`select pg_sleep(0.01)`);
    expect(await statements()).toBe(s + 2);
    expect(await value(DURATION, { kind: "statement" }, "_sum")).toBeGreaterThanOrEqual(sum + 0.01);
    await handle.db.transaction(async (tx) => {
      await tx.execute(sql`select 1`);
      await tx.execute(sql`select 2`);
    });
    expect(await statements()).toBe(s + 4);
    expect(await transactions()).toBe(t + 1);
    // A failed statement is timed too.
    await expect(handle.db.execute(sql`select * from no_such_table`)).rejects.toThrow();
    expect(await statements()).toBe(s + 5);
  });

  it("reports the pool: its size, a connection held by a transaction, and a statement waiting behind it", async () => {
    on = true;
    expect((await value(POOL, { state: "max" })) - maxBefore).toBe(1);
    const [inUse, waiting] = [await value(POOL, { state: "in_use" }), await value(POOL, { state: "waiting" })];
    let entered!: () => void;
    let release!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    const transaction = handle.db.transaction(async (tx) => {
      await tx.execute(sql`select 1`);
      // Running while the gauge is read below: a statement of the transaction holds no connection of its own.
      const running = tx.execute(sql`select pg_sleep(0.2)`).then(() => undefined);
      entered();
      await gate;
      await running;
    });
    await inside;
    // A statement reaches the client after a few turns of drizzle's promises.
    const turns = async (n: number, until = () => Promise.resolve(false)) => {
      for (let i = 0; i < n && !(await until()); i++) await new Promise((resolve) => setImmediate(resolve));
    };
    await turns(20);
    expect([await value(POOL, { state: "in_use" }), await value(POOL, { state: "waiting" })]).toEqual([inUse + 1, waiting]);
    const outside = handle.db.execute(sql`select 3`).then(() => undefined);
    await turns(100, async () => (await value(POOL, { state: "waiting" })) !== waiting);
    expect(await value(POOL, { state: "waiting" })).toBe(waiting + 1);
    expect(await value(POOL, { state: "in_use" })).toBe(inUse + 1);
    release();
    await transaction;
    await outside;
    expect([await value(POOL, { state: "in_use" }), await value(POOL, { state: "waiting" })]).toEqual([inUse, waiting]);
    const idle = await value(POOL, { state: "idle" });
    expect(idle).toBe((await value(POOL, { state: "max" })) - inUse);
  });
});

describe("labels", () => {
  it("hold only values from code (grant types, declared limits, error families, the closed lists), never an id, an email or an address", async () => {
    const allowed: Record<string, Set<string>> = {
      grant: new Set(GRANTS.keys()),
      policy: new Set([...GUESSING_LIMITS, ...REQUEST_LIMITS].map((d) => d.limits.name)),
      family: new Set(["oauth", "hosted", "problem", "account-security"]),
      method: new Set(SIGN_IN_METHODS),
      outcome: new Set(SIGN_IN_OUTCOMES),
      kind: new Set(["statement", "transaction"]),
      state: new Set(["max", "in_use", "idle", "waiting"]),
    };
    const seen = new Map<string, Set<string>>();
    for (const metric of await register.getMetricsAsJSON()) {
      if (!metric.name.startsWith("latchkey_")) continue;
      for (const v of metric.values) {
        for (const [label, x] of Object.entries(v.labels)) {
          if (label === "le") continue;
          expect(allowed[label], `${metric.name}{${label}}`).toBeDefined();
          expect(allowed[label].has(String(x)), `${metric.name}{${label}="${x}"}`).toBe(true);
          expect(identifying.has(String(x)), `${metric.name}{${label}="${x}"}`).toBe(false);
          seen.set(label, (seen.get(label) ?? new Set()).add(String(x)));
        }
      }
    }
    // The tests above recorded every label.
    expect([...seen.keys()].sort()).toEqual(Object.keys(allowed).sort());
    expect(identifying.size).toBeGreaterThan(10);
  });
});
