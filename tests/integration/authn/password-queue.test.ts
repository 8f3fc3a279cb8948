/**
 * The password-hashing queue (lib/authn/password.ts) seen through the hosted sign-in: a bounded
 * wait, shared by turns between client addresses, and the same for known and unknown emails.
 * The argon2 work is held and released by the test (tests/helpers/hashing.ts), so the order in
 * which the queue admits work is observed directly, never timed.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { auditEvents } from "../../../db/schema";
import { decoyHash, hashingQueueState, hashPassword, MAX_CONCURRENT_HASHES, PasswordWorkRefused, PER_ADDRESS_LIMIT, QUEUE_LIMIT, SERVER_WORK, verifyPassword } from "../../../lib/authn/password";
import { CLIENT_ADDRESS_HEADER } from "../../../lib/http/client-address";
import { runEndpoint } from "../../../lib/server/router";
import { call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { statementsDuring } from "../../helpers/statements";
import { livePortalSession } from "../../../lib/account-security/portal-session";
import { loadPortalView } from "../../../lib/account-security/portal-view";
import { ADA, BOB, SPA, WEB, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postPassword, postStep, startSignIn, userIdOf, viewOf, workspaceContext, type Outcome, type PendingSignIn } from "../../helpers/factors/sign-in";
import { holdHashing, stopHolding, type HeldWork } from "../../helpers/hashing";

const FAILURES_PER_5_MINUTES = 2;
let h: Harness;
const ws = uniqueWorkspaceId("hash-queue");
let work: HeldWork | null = null;

beforeAll(async () => {
  h = await createHarness({ rateLimits: { requestsPerMinute: 100_000, failuresPer5Minutes: FAILURES_PER_5_MINUTES } });
  const doc = standardWorkspace(ws);
  for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
  await seed(h, doc);
  await decoyHash(); // made once per process, before any work is held
});

afterEach(async () => {
  work?.releaseAll();
  work = null;
  await until(() => hashingQueueState().running === 0);
  stopHolding();
  expect(hashingQueueState()).toEqual({ running: 0, waiting: 0, held: {} });
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error("the queue never reached the expected state");
}

/** Holds the argon2 work and fills every running slot with the server's own: everything after waits. */
async function holdAndOccupySlots(): Promise<HeldWork> {
  work = holdHashing();
  for (let i = 0; i < MAX_CONCURRENT_HASHES; i++) void hashPassword(`slot-${i}`, SERVER_WORK);
  await work.startedCount(MAX_CONCURRENT_HASHES);
  return work;
}

/**
 * A password sign-in from `address` in a new browser: where the answer sent it, or
 * "too_many_requests" for the 429 page with Retry-After.
 */
async function attempt(email: string, password: string, address: string): Promise<Outcome | "too_many_requests"> {
  const s = await startSignIn(h, ws, SPA);
  const res = await postStep(h, s, "/sign-in/password", { email, password }, { headers: { [CLIENT_ADDRESS_HEADER]: address } });
  if (res.status === 429 && Number(res.headers.get("retry-after")) > 0 && res.headers.get("content-type")?.includes("text/html")) return "too_many_requests";
  return outcome(res);
}

const heldBy = (address: string) => hashingQueueState().held[address] ?? 0;
const waiting = () => hashingQueueState().waiting;
const errorOf = (o: Outcome | "too_many_requests") => (o === "too_many_requests" ? o : o.to === "page" ? o.error : "signed-in");

async function failedSignIns(userId: string): Promise<number> {
  const rows = await h.service.db
    .select({ id: auditEvents.id })
    .from(auditEvents)
    .where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "sign_in.failed"), eq(auditEvents.subject, userId)));
  return rows.length;
}

describe("the password-hashing queue behind the hosted sign-in", () => {
  it("answers at once 429 'try again shortly' past an address's share; the password is neither checked nor counted", async () => {
    const w = await holdAndOccupySlots();
    const address = "198.51.100.10";
    const backlog = Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) => attempt(`nobody-${i}@example.test`, "wrong password!", address));
    await until(() => waiting() === PER_ADDRESS_LIMIT);

    // Answered while all of that address's work is still held: the queue did not make it wait.
    const refused: (string | null)[] = [];
    for (let i = 0; i < FAILURES_PER_5_MINUTES + 1; i++) refused.push(errorOf(await attempt(ADA.email, "wrong password!", address)));
    expect(refused).toEqual(Array(FAILURES_PER_5_MINUTES + 1).fill("too_many_requests"));
    expect(w.started).not.toContain("wrong password!");

    w.releaseAll();
    expect((await Promise.all(backlog)).map(errorOf)).toEqual(Array(PER_ADDRESS_LIMIT).fill("invalid_credentials"));
    // None of the refused attempts counted as a failure: the owner's password works from that address.
    expect(await failedSignIns(await userIdOf(h, ws, ADA.email))).toBe(0);
    expect(errorOf(await attempt(ADA.email, ADA.password, address))).toBe("signed-in");
  });

  it("refuses a post past the address's share before any database statement runs", async () => {
    await holdAndOccupySlots();
    const address = "198.51.100.15";
    const backlog = Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) => attempt(`nobody-${i}@example.test`, "wrong password!", address));
    await until(() => waiting() === PER_ADDRESS_LIMIT);
    const s = await startSignIn(h, ws, SPA);
    const { csrf } = await viewOf(h, s);
    const { value: res, statements } = await statementsDuring(h.service.db, () =>
      postStep(h, s, "/sign-in/password", { email: ADA.email, password: ADA.password }, { csrf, headers: { [CLIENT_ADDRESS_HEADER]: address } }),
    );
    expect(res.status).toBe(429);
    expect(statements.filter((sql) => !/"rate_limits"/.test(sql))).toEqual([]);
    work!.releaseAll();
    await Promise.all(backlog);
  });

  it("serves another address ahead of one address's backlog", async () => {
    const w = await holdAndOccupySlots();
    const flood = "198.51.100.20";
    const backlog = Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) => attempt(`nobody-${i}@example.test`, `guess-${i}`, flood));
    await until(() => waiting() === PER_ADDRESS_LIMIT);
    const owner = attempt(ADA.email, ADA.password, "203.0.113.20");
    await until(() => waiting() === PER_ADDRESS_LIMIT + 1);

    w.release("slot-0");
    await w.startedCount(MAX_CONCURRENT_HASHES + 1);
    const first = w.started[MAX_CONCURRENT_HASHES]; // whichever of the flood's posts reached the queue first
    expect(first).toMatch(/^guess-/);
    w.release(first);
    await w.startedCount(MAX_CONCURRENT_HASHES + 2);
    // One of the flood's guesses, then the owner's password: not the flood's whole backlog first.
    expect(w.started.slice(MAX_CONCURRENT_HASHES)).toEqual([first, ADA.password]);
    w.releaseAll();
    expect(errorOf(await owner)).toBe("signed-in");
    expect((await Promise.all(backlog)).map(errorOf)).toEqual(Array(PER_ADDRESS_LIMIT).fill("invalid_credentials"));
  });

  it("puts known and unknown emails in the same queue under the same share, and answers both alike when it is used up", async () => {
    const w = await holdAndOccupySlots();
    const address = "198.51.100.30";
    const mixed = Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) =>
      i % 2 === 0 ? attempt(`nobody-${i}@example.test`, `unknown-${i}`, address) : attempt(BOB.email, `known-${i}`, address),
    );
    await until(() => waiting() === PER_ADDRESS_LIMIT);
    expect(heldBy(address)).toBe(PER_ADDRESS_LIMIT);
    expect(errorOf(await attempt("someone-new@example.test", "wrong password!", address))).toBe("too_many_requests");
    expect(errorOf(await attempt(BOB.email, "wrong password!", address))).toBe("too_many_requests");

    w.releaseAll();
    expect((await Promise.all(mixed)).map(errorOf)).toEqual(Array(PER_ADDRESS_LIMIT).fill("invalid_credentials"));
    // Each of them was one piece of work in the queue, known or not.
    expect(w.started.filter((p) => /^(unknown|known)-/.test(p)).sort()).toEqual(
      Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) => (i % 2 === 0 ? `unknown-${i}` : `known-${i}`)).sort(),
    );
  });

  it("gives all the addresses of one IPv6 /64 one share: past it, every address of the /64 is refused at once and another /64 gets in", async () => {
    const w = await holdAndOccupySlots();
    const backlog = Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) => attempt(`nobody-${i}@example.test`, `v6-guess-${i}`, `2001:db8:66:1::${i + 1}`));
    await until(() => waiting() === PER_ADDRESS_LIMIT);
    expect(heldBy("2001:db8:66:1::/64")).toBe(PER_ADDRESS_LIMIT);
    for (const address of ["2001:db8:66:1::99", "2001:db8:66:1:ffff:ffff:ffff:ffff"]) {
      expect(errorOf(await attempt(ADA.email, ADA.password, address))).toBe("too_many_requests");
    }
    const owner = attempt(ADA.email, ADA.password, "2001:db8:66:2::1");
    await until(() => waiting() === PER_ADDRESS_LIMIT + 1);
    w.releaseAll();
    expect(errorOf(await owner)).toBe("signed-in");
    expect((await Promise.all(backlog)).map(errorOf)).toEqual(Array(PER_ADDRESS_LIMIT).fill("invalid_credentials"));
  });

  it("still takes a new address (and signs it in) while 64 addresses of one /64 flood and the queue is full of other addresses' backlogs", async () => {
    const w = await holdAndOccupySlots();
    // Other addresses fill the queue with backlogs.
    const backlogs: Promise<unknown>[] = [];
    for (let i = 0; backlogs.length < QUEUE_LIMIT; i++) {
      backlogs.push(verifyPassword("not a hash", `backlog-${i}`, `10.4.0.${Math.floor(i / PER_ADDRESS_LIMIT)}`).catch((error: unknown) => (error instanceof PasswordWorkRefused ? "refused" : Promise.reject(error))));
    }
    await until(() => waiting() === QUEUE_LIMIT);
    const flood = Array.from({ length: 64 * PER_ADDRESS_LIMIT }, (_, i) => attempt(`nobody-${i}@example.test`, `flood-${i}`, `2001:db8:66:1::${(i % 64) + 1}`));
    await until(() => heldBy("2001:db8:66:1::/64") > 0);
    const owner = attempt(ADA.email, ADA.password, "203.0.113.41");
    await until(() => heldBy("203.0.113.41") === 1 && waiting() === QUEUE_LIMIT);
    // The whole /64 holds at most one address's share while the owner waits.
    expect(heldBy("2001:db8:66:1::/64")).toBeLessThanOrEqual(PER_ADDRESS_LIMIT);
    w.releaseAll();
    expect(errorOf(await owner)).toBe("signed-in");
    const answers = new Set((await Promise.all(flood)).map(errorOf));
    expect([...answers].every((a) => ["too_many_requests", "invalid_credentials", "rate_limited"].includes(a ?? ""))).toBe(true);
    await Promise.all(backlogs);
  });

  it("counts password guesses from every address of one IPv6 /64 together", async () => {
    const guess = (password: string, address: string) => attempt(BOB.email, password, address);
    for (let i = 1; i <= FAILURES_PER_5_MINUTES; i++) expect(errorOf(await guess("wrong password!", `2001:db8:67:1::${i}`))).toBe("invalid_credentials");
    expect(errorOf(await guess(BOB.password, "2001:db8:67:1::99"))).toBe("rate_limited");
    expect(errorOf(await guess(BOB.password, "2001:db8:67:2::1"))).toBe("signed-in");
  });

  it("answers a new address at once with the form's 'try again shortly' when the whole queue is full", async () => {
    await holdAndOccupySlots();
    const waiting: Promise<boolean>[] = [];
    for (let i = 0; waiting.length < QUEUE_LIMIT; i++) waiting.push(verifyPassword("not a hash", `w-${i}`, `10.2.${Math.floor(i / 4)}.${i % 4}`));
    await until(() => hashingQueueState().waiting === QUEUE_LIMIT);
    expect(errorOf(await attempt(ADA.email, ADA.password, "203.0.113.40"))).toBe("rate_limited");
    work!.releaseAll();
    await Promise.all(waiting);
  });
});

describe("the portal's password check", () => {
  /** Ada in the account portal (the application's direct link, signed in with her password): the browser's jar. */
  async function openPortal(): Promise<Jar> {
    const jar = new Jar();
    const link = `/t/${ws}/auth/account?client_id=${WEB.client_id}`;
    const first = await call(h, link, { cookie: jar.header() });
    jar.take(first);
    const location = new URL(first.headers.get("location")!, PUBLIC_URL);
    const s: PendingSignIn = { workspaceId: ws, tx: location.searchParams.get("tx")!, jar, verifier: "", state: "", nonce: "", client: { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri } };
    expect((await postPassword(h, s, ADA.email, ADA.password)).status).toBe(303);
    jar.take(await call(h, link, { cookie: jar.header() }));
    return jar;
  }

  async function verifyInPortal(jar: Jar, password: string, address: string): Promise<string> {
    const ctx = await workspaceContext(h, ws);
    const { csrf } = await loadPortalView(ctx, (await livePortalSession(ctx, jar.header()))!);
    const res = await call(h, `/t/${ws}/account/verify/password`, { form: { csrf, password }, cookie: jar.header(), headers: { origin: PUBLIC_URL, [CLIENT_ADDRESS_HEADER]: address } });
    expect(res.status).toBe(303);
    return res.headers.get("location")!;
  }

  it("waits in the same queue under the address's share: past it, 'too many attempts' at once, nothing checked or counted", async () => {
    const jar = await openPortal();
    await holdAndOccupySlots();
    const address = "198.51.100.50";
    const held = Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) => verifyPassword("not a hash", `held-${i}`, address));
    await until(() => waiting() === PER_ADDRESS_LIMIT);
    expect(await verifyInPortal(jar, "not the password", address)).toBe(`/t/${ws}/account?error=portal_verification_limited`);
    work!.releaseAll();
    await Promise.all(held);
    const failed = await h.service.db
      .select({ id: auditEvents.id })
      .from(auditEvents)
      .where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "account_security.verification_failed")));
    expect(failed).toHaveLength(0);
    expect(await verifyInPortal(jar, ADA.password, address)).toBe(`/t/${ws}/account?done=verified`);
  });
});

describe("a refusal of the hashing queue reaching the route table", () => {
  const refusing = async (): Promise<Response> => {
    throw new PasswordWorkRefused();
  };
  const request = () => new Request(`${PUBLIC_URL}/t/${ws}/anything`, { method: "POST" });

  it("is 429 with Retry-After in JSON", async () => {
    const res = await runEndpoint({ method: "POST", path: "/anything", endpoint: refusing, machine: true }, request(), h.service, ws);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await res.json()).toMatchObject({ error: "rate_limited" });
  });

  it("is the hosted 'too many requests' page, 429 with Retry-After", async () => {
    const res = await runEndpoint({ method: "POST", path: "/anything", endpoint: refusing, machine: false, errors: "hosted" }, request(), h.service, ws);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(res.headers.get("content-type")).toContain("text/html");
  });
});
