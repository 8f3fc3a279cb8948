/**
 * Parameter names are the client's: names that an object inherits from its prototype must be
 * treated like any other unknown name (the route's own 400), never looked up as a property.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { authorizeQuery, basic, call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { API, M2M, SPA, WEB, standardWorkspace } from "../helpers/fixtures";

let h: Harness;
const ws = uniqueWorkspaceId("names");
const NAMES = ["toString", "__proto__", "constructor", "hasOwnProperty", "valueOf"];

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

async function expectOAuthError(res: Response, status: number, error: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  expect((await res.json()).error).toBe(error);
}

async function expectHostedPage(res: Response, status = 400) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^text\/html/);
  expect(res.headers.get("location")).toBeNull();
}

describe("prototype property names as parameter names", () => {
  for (const name of NAMES) {
    describe(name, () => {
      it("logout: the hosted 400 page", async () => {
        await expectHostedPage(await call(h, `/t/${ws}/oidc/logout?${name}=1`));
        await expectHostedPage(await call(h, `/t/${ws}/oidc/logout?client_id=${SPA.client_id}&post_logout_redirect_uri=https%3A%2F%2Fapp.example.test%2F&${name}=1`));
      });

      it("authorize: the hosted page before the client is verified, the callback after", async () => {
        await expectHostedPage(await call(h, `/t/${ws}/oauth2/authorize?${name}=1`));
        const { query } = authorizeQuery({ ...SPA, extra: { [name]: "1" } });
        const res = await call(h, `/t/${ws}/oauth2/authorize?${query}`);
        expect(res.status).toBe(303);
        const location = new URL(res.headers.get("location")!);
        expect(location.origin + location.pathname).toBe(SPA.redirect_uri);
        expect(location.searchParams.get("error")).toBe("invalid_request");
      });

      it("token: invalid_request as a parameter, unsupported_grant_type as a grant type", async () => {
        await expectOAuthError(await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: "lkr_x", client_id: SPA.client_id, [name]: "1" } }), 400, "invalid_request");
        await expectOAuthError(
          await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "client_credentials", resource: API, scope: "read:things", [name]: "1" }, headers: { authorization: basic(M2M.client_id, M2M.secret) } }),
          400,
          "invalid_request",
        );
        await expectOAuthError(await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: name, client_id: SPA.client_id } }), 400, "unsupported_grant_type");
      });

      it("revoke and introspect: invalid_request", async () => {
        await expectOAuthError(await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: "lkr_x", client_id: SPA.client_id, [name]: "1" } }), 400, "invalid_request");
        await expectOAuthError(await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: "lkr_x", client_id: SPA.client_id, token_type_hint: name } }), 400, "invalid_request");
        await expectOAuthError(
          await call(h, `/t/${ws}/oauth2/introspect`, { form: { token: "lka_x", [name]: "1" }, headers: { authorization: basic(WEB.client_id, WEB.secret) } }),
          400,
          "invalid_request",
        );
      });

      it("discovery and JWKS: invalid_request", async () => {
        await expectOAuthError(await call(h, `/t/${ws}/.well-known/openid-configuration?${name}=1`), 400, "invalid_request");
        await expectOAuthError(await call(h, `/t/${ws}/.well-known/jwks.json?${name}=1`), 400, "invalid_request");
        // As a value it is just an unknown client.
        await expectOAuthError(await call(h, `/t/${ws}/.well-known/openid-configuration?client_id=${name}`), 404, "invalid_request");
      });

      it("permission check: its own 400 for an extra member, and a plain denial as a value", async () => {
        const headers = { "content-type": "application/json", authorization: "Bearer lka_x" };
        const extra = await call(h, `/t/${ws}/authorization/check`, {
          method: "POST",
          body: `{"resource":"${API}","permission":"read:things","organization_id":null,"${name}":1}`,
          headers,
        });
        expect(extra.status).toBe(400);
        expect(extra.headers.get("content-type")).toContain("application/problem+json");
        const instead = await call(h, `/t/${ws}/authorization/check`, {
          method: "POST",
          body: `{"resource":"${API}","permission":"read:things","${name}":null}`,
          headers,
        });
        expect(instead.status).toBe(400);
        expect(instead.headers.get("content-type")).toContain("application/problem+json");
        const asValue = await call(h, `/t/${ws}/authorization/check`, { method: "POST", body: JSON.stringify({ resource: API, permission: name, organization_id: name }), headers });
        expect(asValue.status).toBe(401);
        expect(asValue.headers.get("content-type")).toContain("application/problem+json");
      });
    });
  }
});
