/**
 * DPoP at the token endpoint (RFC 9449 §5): a proof checked before the grant runs (nothing is
 * consumed by a refused one), tokens bound to its key, a public client's refresh family bound to
 * it, the server nonce, the per-application requirement. Each case fails if its rule is removed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { accessTokens, authorizationCodes, grants, refreshTokens } from "../../../db/schema";
import { sha256Hex } from "../../../lib/crypto";
import { DPOP_NONCE_WINDOW_MS } from "../../../lib/oauth/dpop/nonce";
import { basic, call, createHarness, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, API, authzWorkspace, M2M, SPA, WEB } from "../../helpers/fixtures";
import { statementsDuring } from "../../helpers/statements";
import { Holder, learnNonce, type ProofOptions } from "./proofs";

let h: Harness;
const ws = uniqueWorkspaceId("dpop-token");
/** A public application that requires DPoP (dpop_bound_access_tokens). */
const BOUND = { client_id: "bound-spa", redirect_uri: "https://bound.example.test/callback" };
const TOKEN = "/oauth2/token";

beforeAll(async () => {
  h = await createHarness();
  const doc = authzWorkspace(ws);
  doc.applications.push({
    client_id: BOUND.client_id,
    name: "Bound SPA",
    type: "PUBLIC",
    redirect_uris: [BOUND.redirect_uri],
    identity_scopes: ["openid", "email"],
    dpop_bound_access_tokens: true,
  });
  await seed(h, doc);
});

type Client = { client_id: string; redirect_uri: string; secret?: string };

async function authorizationCode(client: Client = SPA) {
  const r = await signIn(h, ws, { ...client, ...ADA, scope: "openid email" });
  return { code: r.callback.searchParams.get("code")!, verifier: r.verifier };
}

function tokenRequest(client: Client, form: Record<string, string>, dpop?: string) {
  const headers: Record<string, string> = {};
  if (client.secret) headers.authorization = basic(client.client_id, client.secret);
  if (dpop) headers.dpop = dpop;
  return call(h, `/t/${ws}${TOKEN}`, { form: client.secret ? form : { ...form, client_id: client.client_id }, headers });
}

/** The code exchange, with a proof by `holder` (with the server's nonce unless `proof` says otherwise). */
async function exchange(client: Client, holder: Holder | null, proof: ProofOptions = {}, code?: { code: string; verifier: string }) {
  const c = code ?? (await authorizationCode(client));
  const form = { grant_type: "authorization_code", code: c.code, redirect_uri: client.redirect_uri, code_verifier: c.verifier };
  const nonce = holder && !("nonce" in proof) ? await learnNonce(h, ws, holder) : undefined;
  const dpop = holder ? await holder.proof(h, ws, TOKEN, { nonce, ...proof }) : undefined;
  return { res: await tokenRequest(client, form, dpop), code: c };
}

async function refresh(client: Client, refreshToken: string, holder: Holder | null) {
  const dpop = holder ? await holder.proof(h, ws, TOKEN, { nonce: await learnNonce(h, ws, holder) }) : undefined;
  return tokenRequest(client, { grant_type: "refresh_token", refresh_token: refreshToken }, dpop);
}

const accessRow = async (token: string) => (await h.service.db.select().from(accessTokens).where(eq(accessTokens.tokenHash, sha256Hex(token))))[0];
const familyOf = async (refreshToken: string) =>
  (
    await h.service.db
      .select({ grant: grants, state: refreshTokens.state })
      .from(refreshTokens)
      .innerJoin(grants, eq(grants.id, refreshTokens.grantId))
      .where(eq(refreshTokens.tokenHash, sha256Hex(refreshToken)))
  )[0];
const codeConsumed = async (code: string) =>
  (await h.service.db.select({ consumedAt: authorizationCodes.consumedAt }).from(authorizationCodes).where(and(eq(authorizationCodes.workspaceId, ws), eq(authorizationCodes.codeHash, sha256Hex(code)))))[0]
    .consumedAt !== null;

async function refusal(res: Response, status = 400) {
  expect(res.status).toBe(status);
  return res.json();
}

describe("a bound token", () => {
  it("is issued as token_type DPoP, stored with the key's thumbprint, and the public client's family is bound", async () => {
    const holder = await Holder.create("ES256");
    const { res } = await exchange(SPA, holder);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.token_type).toBe("DPoP");
    expect(res.headers.get("dpop-nonce")).toBeTruthy();
    expect((await accessRow(body.access_token)).dpopJkt).toBe(holder.jkt);
    expect((await familyOf(body.refresh_token)).grant.dpopJkt).toBe(holder.jkt);
  });

  it("is issued for EdDSA and RS256 keys too", async () => {
    for (const alg of ["EdDSA", "RS256"]) {
      const holder = await Holder.create(alg);
      const { res } = await exchange(SPA, holder);
      const body = await res.json();
      expect(body.token_type, alg).toBe("DPoP");
      expect((await accessRow(body.access_token)).dpopJkt).toBe(holder.jkt);
    }
  });

  it("shows cnf.jkt and token_type DPoP in introspection; a confidential client's family is not bound", async () => {
    const holder = await Holder.create();
    const { res } = await exchange(WEB, holder);
    const body = await res.json();
    expect(body.token_type).toBe("DPoP");
    expect((await familyOf(body.refresh_token)).grant.dpopJkt).toBeNull();
    const introspection = await call(h, `/t/${ws}/oauth2/introspect`, { form: { token: body.access_token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });
    const answer = await introspection.json();
    expect(answer).toMatchObject({ active: true, token_type: "DPoP", cnf: { jkt: holder.jkt } });
  });

  it("is a Bearer token, unbound, without a proof (the application does not require DPoP)", async () => {
    const { res } = await exchange(SPA, null);
    const body = await res.json();
    expect(body.token_type).toBe("Bearer");
    expect(res.headers.get("dpop-nonce")).toBeNull();
    expect((await accessRow(body.access_token)).dpopJkt).toBeNull();
    expect((await familyOf(body.refresh_token)).grant.dpopJkt).toBeNull();
  });
});

describe("the proof at the token endpoint", () => {
  it("must carry the server's nonce: use_dpop_nonce with a fresh DPoP-Nonce first, the code untouched, then success", async () => {
    const holder = await Holder.create();
    const code = await authorizationCode();
    const first = await exchange(SPA, holder, { nonce: undefined }, code);
    expect(await refusal(first.res)).toMatchObject({ error: "use_dpop_nonce" });
    const nonce = first.res.headers.get("dpop-nonce");
    expect(nonce).toBeTruthy();
    expect(await codeConsumed(code.code)).toBe(false);
    const second = await exchange(SPA, holder, { nonce: nonce! }, code);
    expect(second.res.status).toBe(200);
    expect((await second.res.json()).token_type).toBe("DPoP");
  });

  it("refuses a nonce from two windows ago, and one the server never issued, with use_dpop_nonce", async () => {
    const holder = await Holder.create();
    const old = await learnNonce(h, ws, holder);
    h.clock.advance(DPOP_NONCE_WINDOW_MS);
    // The previous window's nonce is still good.
    const stillGood = await exchange(SPA, holder, { nonce: old });
    expect(stillGood.res.status).toBe(200);
    h.clock.advance(DPOP_NONCE_WINDOW_MS);
    const code = await authorizationCode();
    expect(await refusal((await exchange(SPA, holder, { nonce: old }, code)).res)).toMatchObject({ error: "use_dpop_nonce" });
    expect(await refusal((await exchange(SPA, holder, { nonce: "made-up-nonce" }, code)).res)).toMatchObject({ error: "use_dpop_nonce" });
    expect(await codeConsumed(code.code)).toBe(false);
  });

  it("is refused when replayed (same jti), without consuming the second code", async () => {
    const holder = await Holder.create();
    const nonce = await learnNonce(h, ws, holder);
    const proof = await holder.proof(h, ws, TOKEN, { nonce });
    const a = await authorizationCode();
    const b = await authorizationCode();
    const form = (c: { code: string; verifier: string }) => ({ grant_type: "authorization_code", code: c.code, redirect_uri: SPA.redirect_uri, code_verifier: c.verifier });
    expect((await tokenRequest(SPA, form(a), proof)).status).toBe(200);
    const replayed = await tokenRequest(SPA, form(b), proof);
    expect(await refusal(replayed)).toMatchObject({ error: "invalid_dpop_proof" });
    expect(replayed.headers.get("dpop-nonce")).toBeTruthy();
    expect(await codeConsumed(b.code)).toBe(false);
  });

  it("is refused for another URL (htu), another method (htm), or another host", async () => {
    const holder = await Holder.create();
    const code = await authorizationCode();
    for (const proof of [{ htu: "/oidc/userinfo" }, { htm: "GET" }, { htu: `https://elsewhere.example.test/t/${ws}/oauth2/token` }, { omit: ["htu"] }] as ProofOptions[]) {
      expect(await refusal((await exchange(SPA, holder, proof, code)).res), JSON.stringify(proof)).toMatchObject({ error: "invalid_dpop_proof" });
    }
    expect(await codeConsumed(code.code)).toBe(false);
    // The same URL with a query and a fragment is the same htu (RFC 9449 §4.3).
    const ok = await exchange(SPA, holder, { htu: `/oauth2/token?x=1#y` }, code);
    expect(ok.res.status).toBe(200);
  });

  it("is refused with an iat more than 60 seconds in the past or the future; accepted within", async () => {
    const holder = await Holder.create();
    const code = await authorizationCode();
    for (const iatOffset of [-61, 61]) {
      expect(await refusal((await exchange(SPA, holder, { iatOffset }, code)).res), String(iatOffset)).toMatchObject({ error: "invalid_dpop_proof" });
    }
    expect(await codeConsumed(code.code)).toBe(false);
    expect((await exchange(SPA, holder, { iatOffset: -59 }, code)).res.status).toBe(200);
    expect((await exchange(SPA, holder, { iatOffset: 59 })).res.status).toBe(200);
  });

  it("is refused with another typ, a private key in its jwk header, a jwk that did not sign it, no jti, or two DPoP headers", async () => {
    const holder = await Holder.create();
    const other = await Holder.create();
    const code = await authorizationCode();
    for (const proof of [{ typ: "JWT" }, { jwk: holder.privateJwk }, { jwk: other.publicJwk }, { omit: ["jti"] }] as ProofOptions[]) {
      expect(await refusal((await exchange(SPA, holder, proof, code)).res), JSON.stringify(Object.keys(proof))).toMatchObject({ error: "invalid_dpop_proof" });
    }
    const nonce = await learnNonce(h, ws, holder);
    const two = [await holder.proof(h, ws, TOKEN, { nonce }), await holder.proof(h, ws, TOKEN, { nonce })].join(", ");
    const form = { grant_type: "authorization_code", code: code.code, redirect_uri: SPA.redirect_uri, code_verifier: code.verifier };
    expect(await refusal(await tokenRequest(SPA, form, two))).toMatchObject({ error: "invalid_dpop_proof" });
    expect(await codeConsumed(code.code)).toBe(false);
  });
});

describe("an application with dpop_bound_access_tokens", () => {
  it("is refused a token without a proof (the code untouched), and given a bound one with a proof", async () => {
    const code = await authorizationCode(BOUND);
    const without = await exchange(BOUND, null, {}, code);
    const body = await refusal(without.res);
    expect(body.error).toBe("invalid_request");
    expect(body.error_description).toMatch(/DPoP/);
    expect(without.res.headers.get("dpop-nonce")).toBeTruthy();
    expect(await codeConsumed(code.code)).toBe(false);
    const holder = await Holder.create();
    const withProof = await exchange(BOUND, holder, {}, code);
    expect(withProof.res.status).toBe(200);
    expect((await withProof.res.json()).token_type).toBe("DPoP");
  });

  it("is refused a refresh without a proof", async () => {
    const holder = await Holder.create();
    const { res } = await exchange(BOUND, holder);
    const { refresh_token } = await res.json();
    expect(await refusal(await refresh(BOUND, refresh_token, null))).toMatchObject({ error: "invalid_request" });
    expect((await familyOf(refresh_token)).state).toBe("current");
  });
});

describe("a public client's bound refresh family", () => {
  it("is refused without a proof, or with another key, as invalid_grant, without spending the token; the key's proof rotates it", async () => {
    const holder = await Holder.create();
    const { res } = await exchange(SPA, holder);
    const { refresh_token } = await res.json();

    expect(await refusal(await refresh(SPA, refresh_token, null))).toMatchObject({ error: "invalid_grant" });
    expect((await familyOf(refresh_token)).state).toBe("current");
    const thief = await Holder.create();
    expect(await refusal(await refresh(SPA, refresh_token, thief))).toMatchObject({ error: "invalid_grant" });
    const after = await familyOf(refresh_token);
    expect(after.state).toBe("current");
    expect(after.grant.revokedAt).toBeNull();

    const rotated = await refresh(SPA, refresh_token, holder);
    expect(rotated.status).toBe(200);
    const body = await rotated.json();
    expect(body.token_type).toBe("DPoP");
    expect((await accessRow(body.access_token)).dpopJkt).toBe(holder.jkt);
    expect((await familyOf(refresh_token)).state).toBe("superseded");
  });

  it("rotates in one statement with the key check inside it", async () => {
    const holder = await Holder.create();
    const { res } = await exchange(SPA, holder);
    const { refresh_token } = await res.json();
    const dpop = await holder.proof(h, ws, TOKEN, { nonce: await learnNonce(h, ws, holder) });
    const { value, statements } = await statementsDuring(h.service.db, () => tokenRequest(SPA, { grant_type: "refresh_token", refresh_token }, dpop));
    expect(value.status).toBe(200);
    // The client's lookup, the proof's claim, the rotation.
    const rotation = statements.filter((s) => s.includes("refresh_tokens"));
    expect(rotation).toHaveLength(1);
    expect(rotation[0]).toContain("dpop_jkt");
  });
});

describe("a confidential client's refresh", () => {
  it("is not bound: a refresh without a proof gets a bearer token; one with any key a token bound to that key", async () => {
    const holder = await Holder.create();
    const { res } = await exchange(WEB, holder);
    const { refresh_token } = await res.json();
    const plain = await refresh(WEB, refresh_token, null);
    expect(plain.status).toBe(200);
    const plainBody = await plain.json();
    expect(plainBody.token_type).toBe("Bearer");
    expect((await accessRow(plainBody.access_token)).dpopJkt).toBeNull();
    const another = await Holder.create();
    const bound = await refresh(WEB, plainBody.refresh_token, another);
    const boundBody = await bound.json();
    expect(boundBody.token_type).toBe("DPoP");
    expect((await accessRow(boundBody.access_token)).dpopJkt).toBe(another.jkt);
  });
});

describe("an M2M client", () => {
  it("gets a bearer token whatever proof it sends: its sealed tokens are never bound", async () => {
    const holder = await Holder.create();
    const res = await call(h, `/t/${ws}${TOKEN}`, {
      form: { grant_type: "client_credentials", resource: API, scope: "read:things" },
      headers: { authorization: basic(M2M.client_id, M2M.secret), dpop: await holder.proof(h, ws, TOKEN) },
    });
    expect(res.status).toBe(200);
    expect((await res.json()).token_type).toBe("Bearer");
  });
});

describe("discovery", () => {
  it("lists dpop_signing_alg_values_supported", async () => {
    const doc = await (await call(h, `/t/${ws}/.well-known/openid-configuration`)).json();
    expect(doc.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(["ES256", "EdDSA"]));
  });
});
