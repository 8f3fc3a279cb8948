import { beforeAll, describe, expect, it, vi } from "vitest";
import { and, eq } from "drizzle-orm";
import { clients, clientSecrets } from "../../db/schema";
import { openWorkloadToken } from "../../lib/oauth/workload-token";
import { sha256Hex } from "../../lib/crypto";
import { createClientSecret, listClientSecrets, revokeClientSecret, rotateClientSecret } from "../../lib/clients/secrets";
import { CredentialMemo } from "../../lib/oauth/client-memo";
import { CLIENT_ADDRESS_HEADER } from "../../lib/http/client-address";
import { createService } from "../../lib/service";
import { basic, call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { statementsDuring } from "../helpers/statements";
import { API, M2M, standardWorkspace, type TestWorkspace } from "../helpers/fixtures";

/**
 * Confidential client authentication from the in-process memo: client_credentials and
 * introspection take one SQL statement once a credential has been seen, and that statement
 * re-checks liveness, so no memo entry outlives a revocation, a rotation, an expiry or a
 * deactivation: the next request answers exactly as if the credential had never been seen.
 */

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});

type Doc = TestWorkspace;
const m2mApp = (doc: Doc, change: Record<string, unknown>) => {
  doc.applications = doc.applications.map((a) => (a.client_id === M2M.client_id ? { ...a, ...change } : a));
};

/** The standard workspace without users (password hashing is what makes seeding slow). */
function doc(id: string, edit: (d: Doc) => void = () => {}): Doc {
  const d = standardWorkspace(id);
  d.users = [];
  edit(d);
  return d;
}

async function workspace(on: Harness = h, edit?: (d: Doc) => void): Promise<string> {
  const id = uniqueWorkspaceId("memo");
  await seed(on, doc(id, edit));
  return id;
}

/** A second instance of the service over the same database: its memo has never seen anything. */
const fresh = (on: Harness = h): Harness => ({ ...on, service: createService(on.service.db, on.service.config, on.clock) });

function cc(on: Harness, ws: string, secret = M2M.secret, headers: Record<string, string> = {}, form: Record<string, string> = {}) {
  return call(on, `/t/${ws}/oauth2/token`, {
    form: { grant_type: "client_credentials", resource: API, scope: "read:things", ...form },
    headers: { authorization: basic(M2M.client_id, secret), ...headers },
  });
}

function introspect(on: Harness, ws: string, token: string, secret = M2M.secret, headers: Record<string, string> = {}) {
  return call(on, `/t/${ws}/oauth2/introspect`, { form: { token }, headers: { authorization: basic(M2M.client_id, secret), ...headers } });
}

async function issued(on: Harness, ws: string, secret = M2M.secret): Promise<string> {
  const res = await cc(on, ws, secret);
  expect(res.status).toBe(200);
  return (await res.json()).access_token;
}

/** Everything a client sees of an answer. */
async function seen(res: Response) {
  return { status: res.status, headers: [...res.headers].sort(), body: await res.text() };
}

// The statements a request runs, by their text; the router's cached workspace read and the
// limiter's counter writes are left out (neither is the endpoint's round trip).
const LOOKUP = /from "clients" left join "client_secrets"/;
// The memoized path's one statement: the authority the token is sealed with (nothing is written).
const MEMO_ISSUE = /^select "apis"."id" from "client_secrets"/;
const MEMO_INTROSPECT = /"caller_secret"/;

async function statementsOf(on: Harness, send: () => Promise<Response>): Promise<{ res: Response; statements: string[] }> {
  const { value: res, statements } = await statementsDuring(on.service.db, send);
  return { res, statements: statements.filter((query) => !/from "workspaces"|^insert into "rate_limits"/.test(query)) };
}

describe("a memoized credential", () => {
  it("costs client_credentials and introspection one statement each", async () => {
    const ws = await workspace();
    const s = fresh();
    // First sight: the lookup, then the authority read.
    const first = await statementsOf(s, () => cc(s, ws));
    expect(first.res.status).toBe(200);
    expect(first.statements[0]).toMatch(LOOKUP);
    // Seen before: the authority read alone, and the token is bound to the same credential.
    const second = await statementsOf(s, () => cc(s, ws));
    expect(second.res.status).toBe(200);
    expect(second.statements).toHaveLength(1);
    expect(second.statements[0]).toMatch(MEMO_ISSUE);
    const body = await second.res.json();
    expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "scope", "token_type"]);
    const claims = openWorkloadToken(s.service.config.masterKey, ws, null, body.access_token, s.clock.now());
    const [secret] = await s.service.db.select().from(clientSecrets).where(and(eq(clientSecrets.workspaceId, ws), eq(clientSecrets.secretHash, sha256Hex(M2M.secret))));
    expect(claims).toMatchObject({ credentialId: secret.id });

    const looked = await statementsOf(s, () => introspect(s, ws, body.access_token));
    expect(looked.statements).toHaveLength(1);
    expect(looked.statements[0]).toMatch(MEMO_INTROSPECT);
    const viaMemo = await seen(looked.res);
    // Byte for byte what a service that never saw the credential answers.
    expect(viaMemo).toEqual(await seen(await introspect(fresh(), ws, body.access_token)));
    expect(JSON.parse(viaMemo.body)).toMatchObject({ active: true, client_id: M2M.client_id, principal_type: "workload" });
  });

  it("answers introspection of unknown, foreign and refresh-looking tokens as before", async () => {
    const ws = await workspace();
    const other = await workspace();
    const s = fresh();
    const foreign = await issued(s, other);
    await issued(s, ws);
    for (const token of ["lka_unknown", foreign, "not-a-token"]) {
      const { res, statements } = await statementsOf(s, () => introspect(s, ws, token));
      expect(statements[0]).toMatch(MEMO_INTROSPECT);
      expect(await seen(res)).toEqual(await seen(await introspect(fresh(), ws, token)));
    }
    const refresh = await seen(await introspect(s, ws, "lkr_unknown"));
    expect(refresh).toEqual(await seen(await introspect(fresh(), ws, "lkr_unknown")));
    expect(JSON.parse(refresh.body)).toEqual({ active: false });
  });

  it("is forgotten after five minutes: the next request looks the credential up again", async () => {
    const ws = await workspace();
    const s = fresh();
    await issued(s, ws);
    h.clock.advance(5 * 60_000 - 1000);
    expect((await statementsOf(s, () => cc(s, ws))).statements[0]).toMatch(MEMO_ISSUE);
    h.clock.advance(1000);
    const later = await statementsOf(s, () => cc(s, ws));
    expect(later.res.status).toBe(200);
    expect(later.statements[0]).toMatch(LOOKUP);
  });
});

describe("no memo entry outlives a change", () => {
  /**
   * Two services whose memos hold the credential, so that the first request after the change is
   * a memo hit on each endpoint (a dead hit forgets the entry, so one service cannot show both).
   */
  async function memoized(ws: string, secret = M2M.secret) {
    const forToken = fresh();
    const forIntrospection = fresh();
    const token = await issued(forToken, ws, secret);
    await issued(forIntrospection, ws, secret);
    expect((await statementsOf(forIntrospection, () => introspect(forIntrospection, ws, token, secret))).statements[0]).toMatch(MEMO_INTROSPECT);
    return { forToken, forIntrospection, token };
  }

  /** The very next token and introspection requests answer as for a never-seen credential. */
  async function expectDeadAsNeverSeen(ws: string, memo: Awaited<ReturnType<typeof memoized>>, status = 401, secret = M2M.secret) {
    const { forToken, forIntrospection, token } = memo;
    const next = await statementsOf(forToken, () => cc(forToken, ws, secret));
    // The memo was consulted: its one statement ran first and found the credential dead.
    expect(next.statements[0]).toMatch(MEMO_ISSUE);
    expect(next.statements.some((q) => LOOKUP.test(q))).toBe(true);
    const answer = await seen(next.res);
    expect(answer.status).toBe(status);
    // No token: the same answer, byte for byte, as a service that never saw the credential.
    expect(answer).toEqual(await seen(await cc(fresh(), ws, secret)));
    const introspected = await statementsOf(forIntrospection, () => introspect(forIntrospection, ws, token, secret));
    expect(introspected.statements[0]).toMatch(MEMO_INTROSPECT);
    const looked = await seen(introspected.res);
    expect(looked).toEqual(await seen(await introspect(fresh(), ws, token, secret)));
    return { answer, looked };
  }

  it("revoking the secret: invalid_client on the very next request", async () => {
    const ws = await workspace();
    const memo = await memoized(ws);
    const [secret] = await listClientSecrets(h.service.db, { workspaceId: ws, clientId: M2M.client_id, clock: h.clock });
    await revokeClientSecret(h.service.db, { workspaceId: ws, clientId: M2M.client_id, clock: h.clock, secretId: secret.id });
    const { answer, looked } = await expectDeadAsNeverSeen(ws, memo);
    expect(JSON.parse(answer.body).error).toBe("invalid_client");
    expect(answer.headers).toContainEqual(["www-authenticate", 'Basic realm="latchkey", charset="UTF-8"']);
    expect(looked.status).toBe(401);
    expect(JSON.parse(looked.body).error).toBe("invalid_client");
  });

  it("rotating with immediate replacement: the old secret fails at once, the new one works", async () => {
    const ws = await workspace();
    const memo = await memoized(ws);
    const rotated = await rotateClientSecret(h.service.db, { workspaceId: ws, clientId: M2M.client_id, clock: h.clock, overlapHours: 0 });
    const { looked } = await expectDeadAsNeverSeen(ws, memo);
    expect(looked.status).toBe(401);
    expect((await cc(memo.forToken, ws, rotated.secret)).status).toBe(200);
  });

  it("deactivating the client: invalid_client on the very next request, and back once reactivated", async () => {
    const ws = await workspace();
    const memo = await memoized(ws);
    await seed(h, doc(ws, (d) => m2mApp(d, { active: false })));
    const { answer, looked } = await expectDeadAsNeverSeen(ws, memo);
    expect(JSON.parse(answer.body).error).toBe("invalid_client");
    expect(looked.status).toBe(401);
    await seed(h, doc(ws));
    expect((await cc(memo.forToken, ws)).status).toBe(200);
  });

  it("the secret expiring: invalid_client on the very next request", async () => {
    const ws = await workspace();
    const short = await createClientSecret(h.service.db, { workspaceId: ws, clientId: M2M.client_id, clock: h.clock, lifetimeDays: 1 });
    // Memoized one minute before the secret's expiry, then past it (well within the memo's five minutes).
    h.clock.advance(24 * 3600_000 - 60_000);
    const memo = await memoized(ws, short.secret);
    h.clock.advance(60_000);
    const { answer, looked } = await expectDeadAsNeverSeen(ws, memo, 401, short.secret);
    expect(JSON.parse(answer.body).error).toBe("invalid_client");
    expect(looked.status).toBe(401);
    expect((await cc(memo.forToken, ws)).status).toBe(200);
  });

  it("the client changing type: client_credentials is refused as for any non-M2M client", async () => {
    const ws = await workspace();
    const memo = await memoized(ws);
    await seed(h, doc(ws, (d) => m2mApp(d, { type: "WEB_CONFIDENTIAL" })));
    const { answer, looked } = await expectDeadAsNeverSeen(ws, memo, 400);
    expect(JSON.parse(answer.body).error).toBe("invalid_request");
    // Still a confidential client: it may introspect, through a fresh lookup.
    expect(looked.status).toBe(200);
  });

  it("the client becoming PUBLIC, even with its secrets left in place: invalid_client", async () => {
    const ws = await workspace();
    const memo = await memoized(ws);
    // The import revokes a client's secrets when it becomes PUBLIC; this checks the type on its own.
    await h.service.db.update(clients).set({ type: "PUBLIC" }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, M2M.client_id)));
    const { answer, looked } = await expectDeadAsNeverSeen(ws, memo);
    expect(JSON.parse(answer.body).error).toBe("invalid_client");
    expect(looked.status).toBe(401);
  });

  it("the client_id no longer naming that client: invalid_client", async () => {
    const ws = await workspace();
    const memo = await memoized(ws);
    // No product path renames a client; the statement does not rely on that.
    await h.service.db.update(clients).set({ clientId: "renamed" }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, M2M.client_id)));
    const { answer, looked } = await expectDeadAsNeverSeen(ws, memo);
    expect(JSON.parse(answer.body).error).toBe("invalid_client");
    expect(looked.status).toBe(401);
  });
});

describe("the memo's key", () => {
  it("is never matched by a wrong secret for a memoized client_id", async () => {
    const ws = await workspace();
    const s = fresh();
    const token = await issued(s, ws);
    for (const wrong of [`${M2M.secret}x`, M2M.secret.slice(0, -1), sha256Hex(M2M.secret), ""]) {
      const { res, statements } = await statementsOf(s, () => cc(s, ws, wrong));
      expect(statements[0]).toMatch(LOOKUP);
      expect(await seen(res)).toEqual(await seen(await cc(fresh(), ws, wrong)));
      const looked = await statementsOf(s, () => introspect(s, ws, token, wrong));
      expect(looked.statements.some((q) => MEMO_INTROSPECT.test(q))).toBe(false);
      expect(looked.res.status).toBe(401);
    }
  });

  it("never lets an entry of one workspace authenticate in another", async () => {
    const a = await workspace();
    const otherSecret = "m2m-secret-of-b-0123456789abcdef0123456789ab";
    const b = await workspace(h, (d) => m2mApp(d, { secret: otherSecret }));
    // Same client_id and same secret as in a, but its own client and secret rows.
    const c = await workspace();
    const s = fresh();
    const tokenOfA = await issued(s, a);
    const inB = await statementsOf(s, () => cc(s, b));
    expect(inB.statements[0]).toMatch(LOOKUP);
    expect(await seen(inB.res)).toEqual(await seen(await cc(fresh(), b)));
    expect(inB.res.status).toBe(401);
    expect((await introspect(s, b, tokenOfA)).status).toBe(401);
    const inC = await statementsOf(s, () => cc(s, c));
    expect(inC.statements[0]).toMatch(LOOKUP);
    const tokenOfC = (await inC.res.json()).access_token;
    const [secretOfC] = await s.service.db.select().from(clientSecrets).where(and(eq(clientSecrets.workspaceId, c), eq(clientSecrets.secretHash, sha256Hex(M2M.secret))));
    expect(openWorkloadToken(s.service.config.masterKey, c, null, tokenOfC, s.clock.now())).toMatchObject({ credentialId: secretOfC.id });
    // Sealed for c: it opens in no other workspace.
    expect(openWorkloadToken(s.service.config.masterKey, b, null, tokenOfC, s.clock.now())).toBeNull();
    // a's token is not c's client's: inactive there.
    expect(await (await introspect(s, c, tokenOfA)).json()).toEqual({ active: false });
  });

  it("keeps no failure: a credential that failed is looked up again", async () => {
    const ws = await workspace();
    const [secret] = await listClientSecrets(h.service.db, { workspaceId: ws, clientId: M2M.client_id, clock: h.clock });
    await h.service.db.update(clientSecrets).set({ revokedAt: h.clock.now() }).where(eq(clientSecrets.id, secret.id));
    const s = fresh();
    expect((await cc(s, ws)).status).toBe(401);
    await h.service.db.update(clientSecrets).set({ revokedAt: null }).where(eq(clientSecrets.id, secret.id));
    const again = await statementsOf(s, () => cc(s, ws));
    expect(again.statements[0]).toMatch(LOOKUP);
    expect(again.res.status).toBe(200);
  });
});

describe("the request checks around a memoized credential", () => {
  it("still refuses a browser Origin, a body secret and a mismatched body client_id", async () => {
    const ws = await workspace();
    const s = fresh();
    const token = await issued(s, ws);
    const cases: [Response, Response, number][] = [
      [await cc(s, ws, M2M.secret, { origin: "https://app.example.test" }), await cc(fresh(), ws, M2M.secret, { origin: "https://app.example.test" }), 403],
      [await cc(s, ws, M2M.secret, {}, { client_secret: M2M.secret }), await cc(fresh(), ws, M2M.secret, {}, { client_secret: M2M.secret }), 400],
      [await cc(s, ws, M2M.secret, {}, { client_id: "spa" }), await cc(fresh(), ws, M2M.secret, {}, { client_id: "spa" }), 400],
      [await introspect(s, ws, token, M2M.secret, { origin: "https://app.example.test" }), await introspect(fresh(), ws, token, M2M.secret, { origin: "https://app.example.test" }), 403],
    ];
    for (const [viaMemo, neverSeen, status] of cases) {
      expect(viaMemo.status).toBe(status);
      expect(await seen(viaMemo)).toEqual(await seen(neverSeen));
    }
  });

  it("answers the grant's own refusals only after confirming the credential", async () => {
    const ws = await workspace();
    const s = fresh();
    await issued(s, ws);
    const requests: Record<string, string>[] = [{ scope: "admin:things" }, { scope: "openid" }, { resource: "https://unknown.example.test" }, { audience: API }];
    for (const form of requests) {
      const live = await seen(await cc(s, ws, M2M.secret, {}, form));
      expect(live.status).toBe(400);
      expect(live).toEqual(await seen(await cc(fresh(), ws, M2M.secret, {}, form)));
    }
    const [secret] = await listClientSecrets(h.service.db, { workspaceId: ws, clientId: M2M.client_id, clock: h.clock });
    await revokeClientSecret(h.service.db, { workspaceId: ws, clientId: M2M.client_id, clock: h.clock, secretId: secret.id });
    for (const form of requests) expect((await cc(s, ws, M2M.secret, {}, form)).status).toBe(401);
  });

  it("is never taken by other grants, by revocation, or by a request the token endpoint refuses before the grant", async () => {
    const ws = await workspace();
    const s = fresh();
    const token = await issued(s, ws);
    const auth = { authorization: basic(M2M.client_id, M2M.secret) };
    const sends: (() => Promise<Response>)[] = [
      () => call(s, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "lkr_x" }, headers: auth }),
      () => call(s, `/t/${ws}/oauth2/token`, { form: { grant_type: "authorization_code", code: "x", redirect_uri: "https://x.example.test/cb", code_verifier: "a".repeat(43) }, headers: auth }),
      () => call(s, `/t/${ws}/oauth2/revoke`, { form: { token }, headers: auth }),
      () => cc(s, ws, M2M.secret, {}, { audience: API }),
      () => introspect(s, ws, "lkr_x"),
    ];
    for (const send of sends) expect((await statementsOf(s, send)).statements[0]).toMatch(LOOKUP);
    // So a dead credential is refused first there too.
    const [secret] = await listClientSecrets(h.service.db, { workspaceId: ws, clientId: M2M.client_id, clock: h.clock });
    await revokeClientSecret(h.service.db, { workspaceId: ws, clientId: M2M.client_id, clock: h.clock, secretId: secret.id });
    for (const send of sends) expect((await send()).status).toBe(401);
  });

  it("records the secret's last use at most once a minute", async () => {
    const ws = await workspace();
    const s = fresh();
    await issued(s, ws);
    const [secret] = await listClientSecrets(h.service.db, { workspaceId: ws, clientId: M2M.client_id, clock: h.clock });
    const lastUsed = async () => (await h.service.db.select({ at: clientSecrets.lastUsedAt }).from(clientSecrets).where(eq(clientSecrets.id, secret.id)))[0].at;
    await vi.waitFor(async () => expect(await lastUsed()).toEqual(h.clock.now()));
    h.clock.advance(30_000);
    const soon = await statementsOf(s, () => cc(s, ws));
    expect(soon.statements.filter((q) => /^update "client_secrets"/.test(q))).toHaveLength(0);
    h.clock.advance(31_000);
    const later = await statementsOf(s, () => cc(s, ws));
    expect(later.statements[0]).toMatch(MEMO_ISSUE);
    expect(later.statements.filter((q) => /^update "client_secrets"/.test(q))).toHaveLength(1);
    const at = h.clock.now();
    await vi.waitFor(async () => expect(await lastUsed()).toEqual(at));
  });
});

describe("limits on memoized credentials", () => {
  let l: Harness;
  beforeAll(async () => {
    l = await createHarness({ rateLimits: { requestsPerMinute: 5, failuresPer5Minutes: 3 } });
  });
  const from = (address: string) => ({ [CLIENT_ADDRESS_HEADER]: address });

  it("the per-client limit still applies, and a refused request leaves no token", async () => {
    const ws = await workspace(l);
    l.clock.advance(60_000);
    const results: { status: number; memo: boolean }[] = [];
    let token = "";
    for (let i = 0; i < 7; i++) {
      const { res, statements } = await statementsOf(l, () => cc(l, ws, M2M.secret, from(`10.9.0.${i}`)));
      results.push({ status: res.status, memo: !statements.some((q) => LOOKUP.test(q)) });
      if (res.status === 200) token = (await res.json()).access_token;
      if (res.status === 429) {
        // Refused before the authority read, as a lookup would have been.
        expect(statements.some((q) => MEMO_ISSUE.test(q))).toBe(false);
        expect(res.headers.get("retry-after")).toBeTruthy();
        expect((await res.json()).error).toBe("rate_limited");
      }
    }
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(results.slice(1, 5).every((r) => r.memo)).toBe(true);
    // Introspection by the same client counts against the same budget.
    expect((await introspect(l, ws, token, M2M.secret, from("10.9.1.1"))).status).toBe(429);
  });

  it("discloses no token when the client's budget ran out between the check and the authority read", async () => {
    const ws = await workspace(l);
    l.clock.advance(60_000);
    for (let i = 0; i < 5; i++) expect((await cc(l, ws, M2M.secret, from(`10.9.2.${i}`))).status).toBe(200);
    // As if concurrent requests had used the budget up just after this one was checked.
    const blocked = vi.spyOn(l.service.limiter, "blocked").mockReturnValue({ allowed: true, retryAfterSeconds: 0 });
    try {
      const res = await cc(l, ws, M2M.secret, from("10.9.2.9"));
      expect(res.status).toBe(429);
      expect(await res.json()).toEqual({ error: "rate_limited", error_description: expect.any(String) });
    } finally {
      blocked.mockRestore();
    }
  });

  it("the per-address failure block still applies, from that address only", async () => {
    const ws = await workspace(l);
    l.clock.advance(5 * 60_000);
    const token = await issued(l, ws);
    for (let i = 0; i < 3; i++) expect((await cc(l, ws, "wrong", from("10.9.3.1"))).status).toBe(401);
    // The right secret, memoized, now fails too from that address, before any statement.
    const locked = await statementsOf(l, () => cc(l, ws, M2M.secret, from("10.9.3.1")));
    expect(locked.statements).toEqual([]);
    const answer = await seen(locked.res);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({ error: "invalid_client", error_description: "Client authentication failed" });
    expect(answer.headers).toContainEqual(["www-authenticate", 'Basic realm="latchkey", charset="UTF-8"']);
    expect((await introspect(l, ws, token, M2M.secret, from("10.9.3.1"))).status).toBe(401);
    const elsewhere = await statementsOf(l, () => cc(l, ws, M2M.secret, from("10.9.3.2")));
    expect(elsewhere.res.status).toBe(200);
    expect(elsewhere.statements[0]).toMatch(MEMO_ISSUE);
  });
});

describe("CredentialMemo", () => {
  const value = (secretId: string) => ({ client: {} as never, secretId, lastUsedAt: null });

  it("holds at most its capacity, dropping the least recently used first", () => {
    const memo = new CredentialMemo(2, 60_000);
    const now = new Date();
    memo.set("a", value("a"), now);
    memo.set("b", value("b"), now);
    expect(memo.get("a", now)?.secretId).toBe("a");
    memo.set("c", value("c"), now);
    expect(memo.size).toBe(2);
    expect(memo.get("b", now)).toBeUndefined();
    expect(memo.get("a", now)?.secretId).toBe("a");
    expect(memo.get("c", now)?.secretId).toBe("c");
  });

  it("forgets an entry once its time is up, however often it was used", () => {
    const memo = new CredentialMemo(10, 60_000);
    const start = new Date("2026-01-01T00:00:00Z");
    memo.set("a", value("a"), start);
    expect(memo.get("a", new Date(start.getTime() + 59_999))?.secretId).toBe("a");
    expect(memo.get("a", new Date(start.getTime() + 60_000))).toBeUndefined();
    expect(memo.size).toBe(0);
  });
});
