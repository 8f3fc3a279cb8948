import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "../../db/client";
import { authorizeQuery, call, createHarness, exchangeCode, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, SPA, standardWorkspace } from "../helpers/fixtures";

let h: Harness;
const ws = uniqueWorkspaceId("edge");
const APP_ORIGIN = "https://app.example.test";

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

async function spaTokens() {
  const r = await signIn(h, ws, { ...SPA, ...ADA });
  return { r, form: { grant_type: "authorization_code", code: r.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, code_verifier: r.verifier, client_id: SPA.client_id } };
}

describe("CORS for browser applications", () => {
  it("grants CORS on the token endpoint only to the public client's registered origin", async () => {
    const { form } = await spaTokens();
    const res = await call(h, `/t/${ws}/oauth2/token`, { form, headers: { origin: APP_ORIGIN } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(res.headers.get("vary")).toContain("Origin");
  });

  it("refuses another origin with 403 and no CORS grant", async () => {
    const { form } = await spaTokens();
    const res = await call(h, `/t/${ws}/oauth2/token`, { form, headers: { origin: "https://evil.example" } });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("lets the browser read error answers from its registered origin", async () => {
    const res = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "nope", client_id: SPA.client_id }, headers: { origin: APP_ORIGIN } });
    expect(res.status).toBe(400);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
  });

  it("answers preflights for registered origins only", async () => {
    const ok = await call(h, `/t/${ws}/oidc/userinfo`, { method: "OPTIONS", headers: { origin: APP_ORIGIN, "access-control-request-method": "GET", "access-control-request-headers": "authorization" } });
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(ok.headers.get("access-control-allow-headers")).toContain("Authorization");
    const denied = await call(h, `/t/${ws}/oidc/userinfo`, { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "GET" } });
    expect(denied.status).toBe(403);
    expect(denied.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("grants CORS on UserInfo and the session check to the token's client origin only", async () => {
    const { form } = await spaTokens();
    const tokens = await (await call(h, `/t/${ws}/oauth2/token`, { form })).json();
    const auth = { authorization: `Bearer ${tokens.access_token}` };
    const ok = await call(h, `/t/${ws}/oidc/userinfo`, { headers: { ...auth, origin: APP_ORIGIN } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    const denied = await call(h, `/t/${ws}/oidc/session`, { headers: { ...auth, origin: "https://web.example.test" } });
    expect(denied.status).toBe(403);
    const noOrigin = await call(h, `/t/${ws}/oidc/session`, { headers: auth });
    expect(noOrigin.status).toBe(200);
    expect(noOrigin.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("never sends CORS headers from the authorize endpoint", async () => {
    const { query } = authorizeQuery({ ...SPA });
    const res = await call(h, `/t/${ws}/oauth2/authorize?${query}`, { headers: { origin: APP_ORIGIN } });
    expect(res.status).toBe(303);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await call(h, `/t/${ws}/oauth2/authorize`, { method: "OPTIONS", headers: { origin: APP_ORIGIN } });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("CORS for the public documents", () => {
  const ANY_ORIGIN = "https://anywhere.example.org";
  const documents = [`/.well-known/openid-configuration`, `/.well-known/jwks.json`, `/.well-known/openid-configuration?client_id=${SPA.client_id}`];

  it("serves discovery and JWKS to any origin, without credentials", async () => {
    for (const path of documents) {
      const res = await call(h, `/t/${ws}${path}`, { headers: { origin: ANY_ORIGIN } });
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });

  it("lets any origin read their errors too", async () => {
    for (const [path, status] of [[`/.well-known/openid-configuration?client_id=nobody`, 404], [`/.well-known/openid-configuration?x=1`, 400], [`/.well-known/jwks.json?x=1`, 400]] as const) {
      const res = await call(h, `/t/${ws}${path}`, { headers: { origin: ANY_ORIGIN } });
      expect(res.status).toBe(status);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
    }
  });

  it("lets any origin read the answers made before their endpoint runs: unknown workspace, rate limit", async () => {
    for (const path of documents.slice(0, 2)) {
      const res = await call(h, `/t/no-such-${ws}${path}`, { headers: { origin: ANY_ORIGIN } });
      expect(res.status).toBe(404);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
    }
    const limited = await createHarness({ rateLimits: { requestsPerMinute: 1, failuresPer5Minutes: 10 } });
    await seed(limited, standardWorkspace(ws));
    const path = `/t/${ws}/.well-known/jwks.json`;
    expect((await call(limited, path, { headers: { origin: ANY_ORIGIN } })).status).toBe(200);
    const res = await call(limited, path, { headers: { origin: ANY_ORIGIN } });
    expect(res.status).toBe(429);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("answers their preflight for any origin", async () => {
    for (const path of [`/.well-known/openid-configuration`, `/.well-known/jwks.json`]) {
      const res = await call(h, `/t/${ws}${path}`, { method: "OPTIONS", headers: { origin: ANY_ORIGIN, "access-control-request-method": "GET" } });
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-methods")).toContain("GET");
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });
});

describe("CORS on revocation", () => {
  it("lets the registered origin read the 200 of a revocation that happened", async () => {
    const { form } = await spaTokens();
    const tokens = await (await call(h, `/t/${ws}/oauth2/token`, { form })).json();
    const res = await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: tokens.refresh_token, client_id: SPA.client_id }, headers: { origin: APP_ORIGIN } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(res.headers.get("vary")).toContain("Origin");
    expect((await call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  it("lets the registered origin read its errors, before and after the client is known", async () => {
    const unknownClient = await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: "lkr_x", client_id: "nobody" }, headers: { origin: APP_ORIGIN } });
    expect(unknownClient.status).toBe(401);
    expect(unknownClient.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    const badHint = await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: "lkr_x", token_type_hint: "id_token", client_id: SPA.client_id }, headers: { origin: APP_ORIGIN } });
    expect(badHint.status).toBe(400);
    expect(badHint.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
  });

  it("gives no grant to an origin no client registered", async () => {
    const res = await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: "lkr_x", client_id: SPA.client_id }, headers: { origin: "https://evil.example" } });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("CORS on errors before the client is known", () => {
  const endpoints = [`/oidc/userinfo`, `/oidc/session`];

  it("lets a registered origin read the 401 of an invalid or missing token, with WWW-Authenticate exposed", async () => {
    for (const path of endpoints) {
      for (const headers of [{ authorization: "Bearer lka_not-a-token" }, {}] as Record<string, string>[]) {
        const res = await call(h, `/t/${ws}${path}`, { headers: { ...headers, origin: APP_ORIGIN } });
        expect(res.status).toBe(401);
        expect(res.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
        expect(res.headers.get("access-control-expose-headers")).toContain("WWW-Authenticate");
        expect(res.headers.get("www-authenticate")).toBeTruthy();
      }
    }
  });

  it("gives no grant to an origin no active public client registered", async () => {
    // web.example.test is a confidential client's host, not a registered browser origin.
    for (const origin of ["https://evil.example", "https://web.example.test"]) {
      const res = await call(h, `/t/${ws}/oidc/session`, { headers: { authorization: "Bearer lka_not-a-token", origin } });
      expect(res.status).toBe(401);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    }
  });

  it("lets a registered origin read the token endpoint's errors for an unknown client or grant type", async () => {
    const unknown = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "lkr_x", client_id: "nobody" }, headers: { origin: APP_ORIGIN } });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    const grantType = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "password", client_id: SPA.client_id }, headers: { origin: APP_ORIGIN } });
    expect(grantType.status).toBe(400);
    expect(grantType.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    const evil = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "lkr_x", client_id: "nobody" }, headers: { origin: "https://evil.example" } });
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
  });

  describe("when the database fails after the origin was confirmed", () => {
    let down: DatabaseHandle;
    beforeAll(async () => {
      // Nothing listens on port 9: every query fails to connect.
      down = await openDatabase({ databaseUrl: "postgres://postgres@127.0.0.1:9/latchkey" });
    });
    afterAll(async () => down.close());

    it("keeps the 503 of UserInfo and the session check readable by the origin the preflight confirmed", async () => {
      for (const path of endpoints) {
        const preflight = await call(h, `/t/${ws}${path}`, { method: "OPTIONS", headers: { origin: APP_ORIGIN, "access-control-request-method": "GET" } });
        expect(preflight.status).toBe(204);
        // Same process caches (the workspace is resolved from them), a database that no longer answers.
        const failing: Harness = { ...h, service: { ...h.service, db: down.db } };
        const res = await call(failing, `/t/${ws}${path}`, { headers: { authorization: "Bearer lka_not-a-token", origin: APP_ORIGIN } });
        expect(res.status).toBe(503);
        expect(res.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
        expect(res.headers.get("access-control-expose-headers")).toContain("Retry-After");
        const unconfirmed = await call(failing, `/t/${ws}${path}`, { headers: { authorization: "Bearer lka_not-a-token", origin: "https://evil.example" } });
        expect(unconfirmed.status).toBe(503);
        expect(unconfirmed.headers.get("access-control-allow-origin")).toBeNull();
      }
    });
  });
});

describe("reserved and unknown paths", () => {
  for (const path of ["/v1/access/check", "/v1/audit/events", "/v1/management/users", "/v1/management"]) {
    it(`${path} fails closed with the generic 404`, async () => {
      for (const method of ["GET", "POST"]) {
        const res = await call(h, `/t/${ws}${path}`, { method, body: method === "POST" ? "{}" : undefined, headers: { "content-type": "application/json" } });
        expect(res.status).toBe(404);
        expect(await res.json()).toEqual({ error: "invalid_request", error_description: "Not found" });
      }
    });
  }
});

describe("hosted pages", () => {
  it("send CSP frame-ancestors 'none', no-referrer and nosniff", async () => {
    const res = await call(h, `/t/${ws}/oauth2/authorize?client_id=nope`);
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });
});

describe("the code exchange from a browser", () => {
  it("works end to end with the exchange helper too", async () => {
    const { r } = await spaTokens();
    const res = await exchangeCode(h, ws, { code: r.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: r.verifier, client_id: SPA.client_id });
    expect(res.status).toBe(200);
  });
});
