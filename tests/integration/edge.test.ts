import { beforeAll, describe, expect, it } from "vitest";
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
