/**
 * DPoP-bound tokens at the resource endpoints (RFC 9449 §7): UserInfo, the session check and the
 * permission check take `Authorization: DPoP` with a proof of the token's key for that endpoint;
 * every rule of the proof (RFC 9449 §11's security considerations) has a case that fails if the
 * rule is removed. A bearer request costs what it did: one statement.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { dpopProofs } from "../../../db/schema";
import { sha256Base64Url } from "../../../lib/crypto";
import { purgeRetained } from "../../../lib/features/purge";
import { DPOP_NONCE_WINDOW_MS } from "../../../lib/oauth/dpop/nonce";
import { call, createHarness, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, API, authzWorkspace, SPA } from "../../helpers/fixtures";
import { statementsDuring } from "../../helpers/statements";
import { Holder, learnNonce, type ProofOptions } from "./proofs";

let h: Harness;
const ws = uniqueWorkspaceId("dpop-resource");
const TOKEN = "/oauth2/token";
const USERINFO = "/oidc/userinfo";
const SESSION = "/oidc/session";
const CHECK = "/authorization/check";

beforeAll(async () => {
  h = await createHarness();
  await seed(h, authzWorkspace(ws));
});

/** A token bound to `holder` (or a bearer token without one), for Ada through the SPA, with read:things on API. */
async function tokenFor(holder: Holder | null): Promise<string> {
  const r = await signIn(h, ws, { ...SPA, ...ADA, scope: "openid email read:things", resource: API });
  const headers: Record<string, string> = {};
  if (holder) headers.dpop = await holder.proof(h, ws, TOKEN, { nonce: await learnNonce(h, ws, holder) });
  const res = await call(h, `/t/${ws}${TOKEN}`, {
    form: { grant_type: "authorization_code", code: r.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, code_verifier: r.verifier, client_id: SPA.client_id },
    headers,
  });
  const body = await res.json();
  expect(body.token_type).toBe(holder ? "DPoP" : "Bearer");
  return body.access_token;
}

/** Calls a resource endpoint with `Authorization: <scheme> <token>` and, when given, a DPoP header. */
function resource(path: string, token: string, options: { scheme?: string; dpop?: string } = {}) {
  const headers: Record<string, string> = { authorization: `${options.scheme ?? "DPoP"} ${token}` };
  if (options.dpop) headers.dpop = options.dpop;
  if (path === CHECK) {
    headers["content-type"] = "application/json";
    return call(h, `/t/${ws}${path}`, { method: "POST", body: JSON.stringify({ resource: API, permission: "read:things", organization_id: null }), headers });
  }
  return call(h, `/t/${ws}${path}`, { headers });
}

const methodOf = (path: string) => (path === CHECK ? "POST" : "GET");

/**
 * A proof for `path` naming `token`. For the permission check: the proof the client sent the API
 * with the token (a GET of one of the API's URLs), which the API forwards.
 */
const proofFor = (holder: Holder, path: string, token: string, o: ProofOptions = {}) =>
  path === CHECK ? holder.proof(h, ws, path, { htm: "GET", htu: `${API}/things/42`, accessToken: token, ...o }) : holder.proof(h, ws, path, { htm: methodOf(path), accessToken: token, ...o });

async function refusedWith(res: Response, error: string) {
  expect(res.status).toBe(401);
  expect(res.headers.get("www-authenticate")).toMatch(new RegExp(`^DPoP error="${error}"`));
  expect(res.headers.get("dpop-nonce")).toBeTruthy();
}

describe("a DPoP-bound token with a proof of its key", () => {
  it("is accepted by UserInfo, the session check and the permission check, each answer offering a nonce", async () => {
    const holder = await Holder.create();
    const token = await tokenFor(holder);
    const info = await resource(USERINFO, token, { dpop: await proofFor(holder, USERINFO, token) });
    expect(info.status).toBe(200);
    expect((await info.json()).email).toBe(ADA.email);
    expect(info.headers.get("dpop-nonce")).toBeTruthy();
    const session = await resource(SESSION, token, { dpop: await proofFor(holder, SESSION, token) });
    expect(session.status).toBe(200);
    expect((await session.json()).active).toBe(true);
    const check = await resource(CHECK, token, { dpop: await proofFor(holder, CHECK, token) });
    expect(check.status).toBe(200);
    expect(await check.json()).toEqual({ allowed: true });
    expect(check.headers.get("dpop-nonce")).toBeTruthy();
  });

  it("costs one statement more than a bearer request (the proof's claim); a bearer request stays one statement", async () => {
    const holder = await Holder.create();
    const bound = await tokenFor(holder);
    const bearer = await tokenFor(null);
    for (const path of [USERINFO, SESSION, CHECK]) {
      const plain = await statementsDuring(h.service.db, () => resource(path, bearer, { scheme: "Bearer" }));
      expect(plain.value.status, path).toBe(200);
      expect(plain.statements, path).toHaveLength(1);
      const dpop = await proofFor(holder, path, bound);
      const proven = await statementsDuring(h.service.db, () => resource(path, bound, { dpop }));
      expect(proven.value.status, path).toBe(200);
      expect(proven.statements, path).toHaveLength(2);
    }
  });
});

describe("refused", () => {
  it("a proof replayed (same jti), at every endpoint", async () => {
    const holder = await Holder.create();
    const token = await tokenFor(holder);
    for (const path of [USERINFO, SESSION, CHECK]) {
      const dpop = await proofFor(holder, path, token);
      expect((await resource(path, token, { dpop })).status, path).toBe(200);
      await refusedWith(await resource(path, token, { dpop }), "invalid_dpop_proof");
    }
  });

  it("a proof for another endpoint (htu) or another method (htm)", async () => {
    const holder = await Holder.create();
    const token = await tokenFor(holder);
    await refusedWith(await resource(USERINFO, token, { dpop: await proofFor(holder, SESSION, token) }), "invalid_dpop_proof");
    await refusedWith(await resource(SESSION, token, { dpop: await proofFor(holder, USERINFO, token) }), "invalid_dpop_proof");
    await refusedWith(await resource(USERINFO, token, { dpop: await proofFor(holder, USERINFO, token, { htm: "POST" }) }), "invalid_dpop_proof");
    // The permission check takes the proof made for the API it names: not one for another API, nor one for the check itself.
    await refusedWith(await resource(CHECK, token, { dpop: await proofFor(holder, CHECK, token, { htu: "https://other.example.test/things/42" }) }), "invalid_dpop_proof");
    await refusedWith(await resource(CHECK, token, { dpop: await proofFor(holder, CHECK, token, { htu: `${API}.evil.example/things` }) }), "invalid_dpop_proof");
    await refusedWith(await resource(CHECK, token, { dpop: await holder.proof(h, ws, CHECK, { htm: "POST", accessToken: token }) }), "invalid_dpop_proof");
    await refusedWith(await resource(CHECK, token, { dpop: await proofFor(holder, USERINFO, token, { htm: "POST" }) }), "invalid_dpop_proof");
    // The API's own URL, whatever its method, is accepted.
    expect((await resource(CHECK, token, { dpop: await proofFor(holder, CHECK, token, { htm: "DELETE", htu: API }) })).status).toBe(200);
  });

  it("a stale or future iat (beyond 60 seconds)", async () => {
    const holder = await Holder.create();
    const token = await tokenFor(holder);
    for (const iatOffset of [-61, 61]) {
      await refusedWith(await resource(USERINFO, token, { dpop: await proofFor(holder, USERINFO, token, { iatOffset }) }), "invalid_dpop_proof");
    }
    // A proof made 59 seconds ago is accepted: the clock moved on after it was signed.
    const proof = await proofFor(holder, USERINFO, token);
    h.clock.advance(59_000);
    expect((await resource(USERINFO, token, { dpop: proof })).status).toBe(200);
  });

  it("a wrong or missing ath", async () => {
    const holder = await Holder.create();
    const token = await tokenFor(holder);
    await refusedWith(await resource(USERINFO, token, { dpop: await proofFor(holder, USERINFO, token, { ath: sha256Base64Url("another token") }) }), "invalid_dpop_proof");
    await refusedWith(await resource(USERINFO, token, { dpop: await proofFor(holder, USERINFO, token, { omit: ["ath"] }) }), "invalid_dpop_proof");
    await refusedWith(await resource(SESSION, token, { dpop: await proofFor(holder, SESSION, token, { ath: sha256Base64Url("another token") }) }), "invalid_dpop_proof");
  });

  it("a proof signed by another key than the token's binding", async () => {
    const holder = await Holder.create();
    const thief = await Holder.create();
    const token = await tokenFor(holder);
    for (const path of [USERINFO, SESSION, CHECK]) await refusedWith(await resource(path, token, { dpop: await proofFor(thief, path, token) }), "invalid_token");
  });

  it("the DPoP scheme without a proof", async () => {
    const holder = await Holder.create();
    const token = await tokenFor(holder);
    for (const path of [USERINFO, SESSION, CHECK]) await refusedWith(await resource(path, token), "invalid_dpop_proof");
  });

  it("the bound token presented as Bearer (with or without a proof)", async () => {
    const holder = await Holder.create();
    const token = await tokenFor(holder);
    for (const path of [USERINFO, SESSION, CHECK]) {
      for (const dpop of [undefined, await proofFor(holder, path, token)]) {
        const res = await resource(path, token, { scheme: "Bearer", dpop });
        expect(res.status, path).toBe(401);
        expect(res.headers.get("www-authenticate"), path).toMatch(/^Bearer /);
      }
    }
  });

  it("a bearer token presented with the DPoP scheme, even with a valid proof", async () => {
    const holder = await Holder.create();
    const token = await tokenFor(null);
    for (const path of [USERINFO, SESSION, CHECK]) await refusedWith(await resource(path, token, { dpop: await proofFor(holder, path, token) }), "invalid_token");
  });

  it("an unknown token with the DPoP scheme", async () => {
    const holder = await Holder.create();
    await refusedWith(await resource(USERINFO, "lka_unknown", { dpop: await proofFor(holder, USERINFO, "lka_unknown") }), "invalid_token");
  });
});

describe("nonces at a resource endpoint", () => {
  it("are not required, but one given must be current: a stale one is use_dpop_nonce with a fresh nonce, which then succeeds", async () => {
    const holder = await Holder.create();
    const old = await learnNonce(h, ws, holder);
    h.clock.advance(2 * DPOP_NONCE_WINDOW_MS);
    const token = await tokenFor(holder);
    const stale = await resource(USERINFO, token, { dpop: await proofFor(holder, USERINFO, token, { nonce: old }) });
    await refusedWith(stale, "use_dpop_nonce");
    const fresh = stale.headers.get("dpop-nonce")!;
    expect(fresh).not.toBe(old);
    const retried = await resource(USERINFO, token, { dpop: await proofFor(holder, USERINFO, token, { nonce: fresh }) });
    expect(retried.status).toBe(200);
  });
});

describe("the replay cache", () => {
  it("gives exactly one success to parallel requests with one proof (raced on PostgreSQL)", async () => {
    const holder = await Holder.create();
    const token = await tokenFor(holder);
    const dpop = await proofFor(holder, USERINFO, token);
    const answers = await Promise.all(Array.from({ length: 12 }, () => resource(USERINFO, token, { dpop })));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of answers.filter((r) => r.status !== 200)) await refusedWith(r, "invalid_dpop_proof");
  });

  it("keeps a claimed proof while its iat could be accepted; the purge deletes it after", async () => {
    const holder = await Holder.create();
    const token = await tokenFor(holder);
    const count = async () => (await h.service.db.select({ n: sql<number>`count(*)::int` }).from(dpopProofs).where(eq(dpopProofs.workspaceId, ws)))[0].n;
    h.clock.advance(61_000);
    await purgeRetained(h.service, { workspaceId: ws, names: ["dpop_proofs"] });
    expect(await count()).toBe(0);
    const dpop = await proofFor(holder, USERINFO, token);
    expect((await resource(USERINFO, token, { dpop })).status).toBe(200);
    h.clock.advance(59_000);
    await purgeRetained(h.service, { workspaceId: ws, names: ["dpop_proofs"] });
    expect(await count()).toBe(1);
    // Within its window it still refuses the replay.
    await refusedWith(await resource(USERINFO, token, { dpop }), "invalid_dpop_proof");
    h.clock.advance(2_000);
    await purgeRetained(h.service, { workspaceId: ws, names: ["dpop_proofs"] });
    expect(await count()).toBe(0);
  });
});

describe("browsers", () => {
  it("may send the DPoP header cross-origin and read DPoP-Nonce", async () => {
    const origin = "https://app.example.test";
    const preflight = await call(h, `/t/${ws}${USERINFO}`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "authorization, dpop" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toMatch(/\bDPoP\b/);
    const holder = await Holder.create();
    const token = await tokenFor(holder);
    const res = await call(h, `/t/${ws}${USERINFO}`, { headers: { origin, authorization: `DPoP ${token}`, dpop: await proofFor(holder, USERINFO, token) } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-expose-headers")).toMatch(/\bDPoP-Nonce\b/);
  });
});
