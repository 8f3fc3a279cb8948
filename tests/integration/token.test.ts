import { beforeAll, describe, expect, inject, it } from "vitest";
import { createLocalJWKSet, decodeJwt, jwtVerify } from "jose";
import { basic, call, createHarness, exchangeCode, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, API, BOB, M2M, SPA, WEB, standardWorkspace } from "../helpers/fixtures";

let h: Harness;
const ws = uniqueWorkspaceId("token");
const issuer = `${PUBLIC_URL}/t/${ws}`;
const token = (form: Record<string, string> | string, headers: Record<string, string> = {}) => call(h, `/t/${ws}/oauth2/token`, { form, headers });

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

async function spaCode(scope = "openid email profile", user: { email: string; password: string } = ADA, extra: { resource?: string } = {}) {
  const r = await signIn(h, ws, { ...SPA, ...user, scope, ...extra });
  return { code: r.callback.searchParams.get("code")!, verifier: r.verifier, nonce: r.nonce, jar: r.jar };
}

async function verifyIdToken(idToken: string, audience: string) {
  const jwks = await (await call(h, `/t/${ws}/.well-known/jwks.json`)).json();
  return jwtVerify(idToken, createLocalJWKSet(jwks), { issuer, audience, algorithms: ["ES256"], currentDate: h.clock.now() });
}

describe("authorization_code grant", () => {
  it("returns the full token response with no-store, and a verifiable ID token", async () => {
    const { code, verifier, nonce } = await spaCode();
    const res = await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "id_token", "refresh_token", "scope", "token_type"]);
    expect(body.token_type).toBe("Bearer");
    expect(body.expires_in).toBe(300);
    expect(body.scope).toBe("openid email profile");
    expect(body.access_token.split(".")).toHaveLength(1); // opaque, not a JWT
    const { payload, protectedHeader } = await verifyIdToken(body.id_token, SPA.client_id);
    expect(protectedHeader.alg).toBe("ES256");
    expect(payload.nonce).toBe(nonce);
    expect(payload.exp! - payload.iat!).toBe(300);
    for (const claim of ["sub", "auth_time", "acr", "amr", "sid"]) expect(payload[claim]).toBeDefined();
    expect(payload.amr).toEqual(["pwd"]);
    expect(payload.email).toBe(ADA.email);
    expect(payload.email_verified).toBe(true);
    expect(payload.name).toBe(ADA.name);
  });

  it("leaves out email without the email scope and name without the profile scope", async () => {
    const { code, verifier } = await spaCode("openid");
    const body = await (await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id })).json();
    const claims = decodeJwt(body.id_token);
    expect(claims.email).toBeUndefined();
    expect(claims.email_verified).toBeUndefined();
    expect(claims.name).toBeUndefined();
  });

  it("gives email_verified false explicitly and no name when the user has none", async () => {
    const { code, verifier } = await spaCode("openid email profile", BOB);
    const body = await (await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id })).json();
    const claims = decodeJwt(body.id_token);
    expect(claims.email_verified).toBe(false);
    expect("name" in claims).toBe(false);
  });

  it("uses pairwise subjects: the same user has different subs at different clients", async () => {
    const spa = await spaCode();
    const spaBody = await (await exchangeCode(h, ws, { code: spa.code, redirect_uri: SPA.redirect_uri, verifier: spa.verifier, client_id: SPA.client_id })).json();
    const web = await signIn(h, ws, { ...WEB, ...ADA });
    const webBody = await (await exchangeCode(h, ws, { code: web.callback.searchParams.get("code")!, redirect_uri: WEB.redirect_uri, verifier: web.verifier, authorization: basic(WEB.client_id, WEB.secret) })).json();
    const a = decodeJwt(spaBody.id_token).sub;
    const b = decodeJwt(webBody.id_token).sub;
    expect(a).toBeTruthy();
    expect(b).toBeTruthy();
    expect(a).not.toBe(b);
    const spaAgain = await spaCode();
    const again = await (await exchangeCode(h, ws, { code: spaAgain.code, redirect_uri: SPA.redirect_uri, verifier: spaAgain.verifier, client_id: SPA.client_id })).json();
    expect(decodeJwt(again.id_token).sub).toBe(a);
  });

  it("grants only permissions the client may request and the user holds through roles", async () => {
    const { code, verifier } = await spaCode("openid read:things write:things", ADA, { resource: API });
    const body = await (await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id })).json();
    expect(body.scope).toBe("openid read:things");
  });

  it("rejects a wrong verifier with invalid_grant", async () => {
    const { code } = await spaCode();
    const res = await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier: "x".repeat(43), client_id: SPA.client_id });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_grant");
  });

  it("rejects a verifier outside 43–128 unreserved characters with invalid_request", async () => {
    for (const verifier of ["a".repeat(42), "a".repeat(129), "a".repeat(42) + "!"]) {
      const { code } = await spaCode();
      const res = await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toBe("invalid_request");
    }
  });

  it("rejects a different redirect_uri", async () => {
    const { code, verifier } = await spaCode();
    const res = await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri + "x", verifier, client_id: SPA.client_id });
    expect((await res.json()).error).toBe("invalid_grant");
  });

  it("expires the code after 60 seconds", async () => {
    const { code, verifier } = await spaCode();
    h.clock.advance(61_000);
    const res = await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id });
    expect((await res.json()).error).toBe("invalid_grant");
  });

  it("accepts the code just inside 60 seconds", async () => {
    const { code, verifier } = await spaCode();
    h.clock.advance(59_000);
    const res = await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id });
    expect(res.status).toBe(200);
  });

  it("refuses a second redemption and revokes what the first issued", async () => {
    const { code, verifier } = await spaCode();
    const first = await (await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id })).json();
    const check = () => call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${first.access_token}` } });
    expect((await check()).status).toBe(200);
    const second = await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id });
    expect((await second.json()).error).toBe("invalid_grant");
    expect((await check()).status).toBe(401);
    const refresh = await token({ grant_type: "refresh_token", refresh_token: first.refresh_token, client_id: SPA.client_id });
    expect((await refresh.json()).error).toBe("invalid_grant");
  });

  it("refuses a code issued to another client", async () => {
    const { code, verifier } = await spaCode();
    const res = await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier, authorization: basic(WEB.client_id, WEB.secret) });
    expect((await res.json()).error).toBe("invalid_grant");
  });
});

describe("client authentication at the token endpoint", () => {
  async function webCode() {
    const r = await signIn(h, ws, { ...WEB, ...ADA });
    return { code: r.callback.searchParams.get("code")!, verifier: r.verifier };
  }
  const form = (c: { code: string; verifier: string }) => ({ grant_type: "authorization_code", code: c.code, redirect_uri: WEB.redirect_uri, code_verifier: c.verifier });

  it("accepts HTTP Basic with form-encoded credentials, and a matching body client_id", async () => {
    const res = await token({ ...form(await webCode()), client_id: WEB.client_id }, { authorization: basic(WEB.client_id, WEB.secret) });
    expect(res.status).toBe(200);
  });

  it("rejects a wrong secret with 401 invalid_client and WWW-Authenticate", async () => {
    const res = await token(form(await webCode()), { authorization: basic(WEB.client_id, "wrong-secret") });
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe("invalid_client");
    expect(res.headers.get("www-authenticate")).toMatch(/^Basic/);
  });

  it("rejects an unknown client with 401 invalid_client", async () => {
    const res = await token(form(await webCode()), { authorization: basic("ghost", "whatever") });
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe("invalid_client");
  });

  it("rejects a confidential client that sends no Basic credentials", async () => {
    const res = await token({ ...form(await webCode()), client_id: WEB.client_id });
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe("invalid_client");
  });

  it("rejects client_secret in the body (client_secret_post is not supported)", async () => {
    const res = await token({ ...form(await webCode()), client_id: WEB.client_id, client_secret: WEB.secret });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_request");
  });

  it("rejects private-key JWT client authentication (client_assertion), with or without Basic", async () => {
    const assertion = { client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", client_assertion: "eyJhbGciOiJFUzI1NiJ9.e30.sig" };
    for (const headers of [{}, { authorization: basic(WEB.client_id, WEB.secret) }] as Record<string, string>[]) {
      const res = await token({ ...form(await webCode()), client_id: WEB.client_id, ...assertion }, headers);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: "invalid_request", error_description: "Private-key JWT client authentication is not supported" });
    }
  });

  it("rejects mixed methods: Basic plus a body secret", async () => {
    const res = await token({ ...form(await webCode()), client_secret: WEB.secret }, { authorization: basic(WEB.client_id, WEB.secret) });
    expect(res.status).toBe(400);
  });

  it("rejects a body client_id that differs from the Basic one", async () => {
    const res = await token({ ...form(await webCode()), client_id: SPA.client_id }, { authorization: basic(WEB.client_id, WEB.secret) });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_request");
  });

  it("rejects a public client presenting Basic credentials", async () => {
    const { code, verifier } = await spaCode();
    const res = await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier, authorization: basic(SPA.client_id, "anything") });
    expect(res.status).toBe(401);
  });

  it("rejects a public client without client_id", async () => {
    const { code, verifier } = await spaCode();
    const res = await exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier });
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe("invalid_client");
  });

  it("rejects an Origin header on confidential client authentication", async () => {
    const res = await token(form(await webCode()), { authorization: basic(WEB.client_id, WEB.secret), origin: "https://web.example.test" });
    expect(res.status).toBe(403);
  });

  it("rejects an M2M client at the authorization_code grant", async () => {
    const res = await token({ grant_type: "authorization_code", code: "x", redirect_uri: WEB.redirect_uri, code_verifier: "a".repeat(43) }, { authorization: basic(M2M.client_id, M2M.secret) });
    expect(res.status).toBe(400);
  });
});

describe("the token endpoint's edge", () => {
  it("rejects duplicated parameters", async () => {
    const res = await token(`grant_type=authorization_code&grant_type=authorization_code&code=x&client_id=spa`);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_request");
  });
  it("rejects unrecognized parameters", async () => {
    const { code, verifier } = await spaCode();
    const res = await token({ grant_type: "authorization_code", code, redirect_uri: SPA.redirect_uri, code_verifier: verifier, client_id: SPA.client_id, resource: API });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_request");
  });
  it("answers 415 to a JSON body", async () => {
    const res = await call(h, `/t/${ws}/oauth2/token`, { body: JSON.stringify({ grant_type: "authorization_code" }), headers: { "content-type": "application/json" } });
    expect(res.status).toBe(415);
  });
  it("answers 413 to a body over 8 KiB", async () => {
    const res = await token({ grant_type: "authorization_code", code: "x".repeat(8 * 1024), client_id: SPA.client_id });
    expect(res.status).toBe(413);
  });
  it("accepts a body of exactly 8 KiB (then fails on its content, not its size)", async () => {
    const base = `grant_type=authorization_code&client_id=spa&redirect_uri=x&code_verifier=${"a".repeat(43)}&code=`;
    const res = await token(base + "c".repeat(8 * 1024 - base.length));
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_grant");
  });
  it("answers unsupported_grant_type for an unknown grant", async () => {
    const res = await token({ grant_type: "password", client_id: SPA.client_id });
    expect((await res.json()).error).toBe("unsupported_grant_type");
  });
  it("answers 405 to GET", async () => {
    expect((await call(h, `/t/${ws}/oauth2/token`)).status).toBe(405);
  });
  it("never puts a stack trace on the wire", async () => {
    const res = await token("%E0%A4%A=broken&grant_type=authorization_code&client_id=spa");
    const text = await res.text();
    expect(text).not.toMatch(/at .*\.ts:\d+/);
  });
});

describe.runIf(Boolean(inject("databaseUrl")))("authorization_code grant: a code raced (PostgreSQL)", () => {
  it("gives one of 10 parallel redemptions the tokens, and the replays revoke them", async () => {
    const { code, verifier } = await spaCode();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => exchangeCode(h, ws, { code, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id }).then(async (r) => ({ status: r.status, body: await r.json() }))),
    );
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    for (const lost of answers.filter((a) => a.status !== 200)) expect(lost).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    // The replays ended what the winner got.
    expect((await call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${won[0].body.access_token}` } })).status).toBe(401);
    const refresh = await token({ grant_type: "refresh_token", refresh_token: won[0].body.refresh_token, client_id: SPA.client_id });
    expect((await refresh.json()).error).toBe("invalid_grant");
  });
});
