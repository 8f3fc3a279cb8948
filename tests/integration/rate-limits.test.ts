import { beforeAll, describe, expect, it } from "vitest";
import { basic, call, createHarness, exchangeCode, Jar, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, SPA, WEB, standardWorkspace } from "../helpers/fixtures";
import { createService } from "../../lib/service";
import { like } from "drizzle-orm";
import { CLIENT_ADDRESS_HEADER } from "../../lib/http/client-address";
import { limiterKey, MAX_KEY_LENGTH, MAX_WINDOW_MS, RateLimiter } from "../../lib/limits/rate-limit";
import { openFreshEmbeddedDatabase } from "../setup/test-database";
import { purgeRetained } from "../../lib/features/purge";
import { TestClock } from "../helpers/harness";
import { rateLimits } from "../../db/schema";
import { guard, type GuessingLimits } from "../../lib/limits/declarations";

let h: Harness;
const ws = uniqueWorkspaceId("limits");

beforeAll(async () => {
  h = await createHarness({ rateLimits: { requestsPerMinute: 5, failuresPer5Minutes: 3 } });
  await seed(h, standardWorkspace(ws));
});

const from = (address: string) => ({ [CLIENT_ADDRESS_HEADER]: address });

describe("per-address limit", () => {
  it("answers 429 with Retry-After once an address exceeds its budget, and only for that address", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await call(h, `/t/${ws}/.well-known/openid-configuration`, { headers: from("10.0.0.1") })).status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429]);
    const limited = await call(h, `/t/${ws}/.well-known/openid-configuration`, { headers: from("10.0.0.1") });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await limited.json()).toMatchObject({ error: "rate_limited" });
    expect((await call(h, `/t/${ws}/.well-known/openid-configuration`, { headers: from("10.0.0.2") })).status).toBe(200);
    h.clock.advance(60_000);
    expect((await call(h, `/t/${ws}/.well-known/openid-configuration`, { headers: from("10.0.0.1") })).status).toBe(200);
  });

  it("counts every address of one IPv6 /64 together, and an IPv4-mapped address as its IPv4 address", async () => {
    h.clock.advance(60_000);
    const status = async (address: string) => (await call(h, `/t/${ws}/.well-known/openid-configuration`, { headers: from(address) })).status;
    for (let i = 1; i <= 5; i++) expect(await status(`2001:db8:5:1::${i}`)).toBe(200);
    expect(await status("2001:db8:5:1:ffff:ffff:ffff:ffff")).toBe(429);
    expect(await status("2001:0db8:0005:0001::abcd")).toBe(429);
    expect(await status("2001:db8:5:2::1")).toBe(200);
    for (let i = 0; i < 5; i++) expect(await status(i % 2 ? "10.0.0.9" : "::ffff:10.0.0.9")).toBe(200);
    expect(await status("::ffff:a00:9")).toBe(429);
    expect(await status("10.0.0.9")).toBe(429);
  });

  it("shows a hosted page, not JSON, on the authorize endpoint", async () => {
    let res: Response | undefined;
    for (let i = 0; i < 7; i++) res = await call(h, `/t/${ws}/oauth2/authorize?client_id=spa`, { headers: from("10.0.0.3") });
    expect(res!.status).toBe(429);
    expect(res!.headers.get("content-type")).toContain("text/html");
    expect(res!.headers.get("retry-after")).toBeTruthy();
  });

  it("holds across two instances of the service sharing one database", async () => {
    h.clock.advance(60_000);
    const second = { ...h, service: createService(h.service.db, h.service.config, h.clock) };
    for (let i = 0; i < 3; i++) expect((await call(h, `/t/${ws}/.well-known/jwks.json`, { headers: from("10.0.0.4") })).status).toBe(200);
    await h.service.limiter.flush();
    // The second instance has served nobody yet; the shared count still limits it after its first sync.
    expect((await call(second, `/t/${ws}/.well-known/jwks.json`, { headers: from("10.0.0.4") })).status).toBe(200);
    await second.service.limiter.flush();
    const after = [];
    for (let i = 0; i < 2; i++) after.push((await call(second, `/t/${ws}/.well-known/jwks.json`, { headers: from("10.0.0.4") })).status);
    expect(after).toContain(429);
  });
});

describe("per-client limit and failed client authentication", () => {
  it("limits one client across addresses", async () => {
    h.clock.advance(60_000);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "x", client_id: SPA.client_id }, headers: from(`10.1.0.${i}`) });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 5).every((s) => s === 400)).toBe(true);
    expect(statuses.slice(5)).toEqual([429, 429]);
  });

  it("locks out a confidential client after repeated failures from one address, as invalid_client", async () => {
    h.clock.advance(5 * 60_000);
    const attempt = (secret: string, address = "10.2.0.1") =>
      call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "x" }, headers: { authorization: basic(WEB.client_id, secret), ...from(address) } });
    for (let i = 0; i < 3; i++) expect((await attempt("wrong")).status).toBe(401);
    // The right secret now fails too, from that address, and looks like any authentication failure.
    const locked = await attempt(WEB.secret);
    expect(locked.status).toBe(401);
    expect((await locked.json()).error).toBe("invalid_client");
    // Another address is unaffected.
    expect((await attempt(WEB.secret, "10.2.0.2")).status).toBe(400); // authenticated; the refresh token is bad
    h.clock.advance(5 * 60_000);
    expect((await attempt(WEB.secret)).status).toBe(400);
  });
});

describe("failed client authentication from one IPv6 /64", () => {
  it("locks the client out for every address of the /64 once failures from several of them reach the limit", async () => {
    h.clock.advance(5 * 60_000);
    const attempt = (secret: string, address: string) =>
      call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "x" }, headers: { authorization: basic(WEB.client_id, secret), ...from(address) } });
    for (let i = 1; i <= 3; i++) expect((await attempt("wrong", `2001:db8:6:1::${i}`)).status).toBe(401);
    const locked = await attempt(WEB.secret, "2001:db8:6:1::99");
    expect(locked.status).toBe(401);
    expect((await locked.json()).error).toBe("invalid_client");
    // Another /64 is unaffected.
    expect((await attempt(WEB.secret, "2001:db8:6:2::1")).status).toBe(400);
  });
});

describe("client ids of any length", () => {
  it("count failures of a 10 KB client id under a short key, in memory and in the shared row", async () => {
    h.clock.advance(5 * 60_000);
    const id = "z".repeat(10 * 1024);
    for (let i = 0; i < 2; i++) {
      const res = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "client_credentials" }, headers: { authorization: basic(id, "x"), ...from("10.5.0.1") } });
      expect(res.status).toBe(401);
    }
    const rows = await h.service.db.select().from(rateLimits).where(like(rateLimits.key, "authfail:%"));
    expect(Math.max(...rows.map((r) => r.key.length))).toBeLessThanOrEqual(MAX_KEY_LENGTH);
    // This client's row (on PostgreSQL every test file shares the table: the fuzzer's long ids are digested too).
    const digested = rows.filter((r) => r.key === limiterKey(`authfail:${ws}:${id}:10.5.0.1`));
    expect(digested.map((r) => r.count)).toEqual([2]);
    // The third failure reaches the limit (3 here): the id is then refused without a lookup.
    await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "client_credentials" }, headers: { authorization: basic(id, "x"), ...from("10.5.0.1") } });
    expect(h.service.limiter.blocked(`authfail:${ws}:${id}:10.5.0.1`, 3, 5 * 60_000).allowed).toBe(false);
    expect(h.service.limiter.size).toBeLessThan(1000);
  });
});

describe("password guessing", () => {
  it("stops checking passwords for an account and address after repeated failures", async () => {
    h.clock.advance(5 * 60_000);
    const l = await createHarness({ rateLimits: { requestsPerMinute: 100_000, failuresPer5Minutes: 3 } });
    const w = uniqueWorkspaceId("guess");
    await seed(l, standardWorkspace(w));
    for (let i = 0; i < 3; i++) {
      await expect(signIn(l, w, { ...SPA, email: ADA.email, password: "wrong password" })).rejects.toThrow("invalid_credentials");
    }
    // Even the right password is refused now, with the rate-limit message.
    const jar = new Jar();
    await expect(signIn(l, w, { ...SPA, ...ADA }, jar)).rejects.toThrow("rate_limited");
    l.clock.advance(5 * 60_000 + 1000);
    const ok = await signIn(l, w, { ...SPA, ...ADA });
    const res = await exchangeCode(l, w, { code: ok.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: ok.verifier, client_id: SPA.client_id });
    expect(res.status).toBe(200);
    void PUBLIC_URL;
  });
});

describe("guessing across instances", () => {
  it("counts failures answered by other instances at once: guesses one after another, each on the other instance, never check more than the limit", async () => {
    h.clock.advance(5 * 60_000);
    // Two instances' limiters on the one database (each with its own counters in memory).
    const instances = [new RateLimiter(h.service.db, h.clock), new RateLimiter(h.service.db, h.clock)];
    const limits: GuessingLimits = { name: "guess-test", label: "test", perChallenge: null, perAccountAndAddress: { times: 3, scale: null, windowMs: 5 * 60_000 } };
    const attempt = { workspaceId: ws, address: "10.9.0.1", account: "someone@example.test" };
    const checked: number[] = [];
    for (let i = 0; i < 8; i++) {
      const gate = await guard(instances[i % 2], h.service.config.rateLimits, limits, attempt);
      if (!gate.allowed) continue;
      checked.push(i);
      await gate.record();
    }
    expect(checked).toEqual([0, 1, 2]);
  });
});

describe("the purge of ended windows", () => {
  it("deletes the rows of windows that began more than MAX_WINDOW_MS ago and keeps every current count", async () => {
    // A database of its own: the purge deletes by age whatever the workspace, and test files share the run's database.
    const { db } = await openFreshEmbeddedDatabase();
    const clock = new TestClock();
    const limiter = new RateLimiter(db, clock);
    const purgeEndedRateLimits = async () => (await purgeRetained(createService(db, h.service.config, clock), { names: ["rate_limits"] })).rate_limits;
    await limiter.recordFailure("recovery-code-account:ws:old@example.com", 9, MAX_WINDOW_MS);
    clock.advance(MAX_WINDOW_MS);
    await limiter.recordFailure("recovery-code-account:ws:current@example.com", 9, MAX_WINDOW_MS);
    await limiter.recordFailure("recovery-code:ws:current@example.com:10.0.0.1", 3, 5 * 60_000);
    // The first window began exactly MAX_WINDOW_MS ago: it has just ended, and is kept until it is older.
    expect(await purgeEndedRateLimits()).toBe(0);
    clock.advance(1);
    expect(await purgeEndedRateLimits()).toBe(1);
    const keys = (await db.select({ key: rateLimits.key, count: rateLimits.count }).from(rateLimits)).map((r) => `${r.key}=${r.count}`).sort();
    expect(keys).toEqual(["recovery-code-account:ws:current@example.com=1", "recovery-code:ws:current@example.com:10.0.0.1=1"]);
  });
});
