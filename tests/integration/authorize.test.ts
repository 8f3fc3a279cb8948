import { beforeAll, describe, expect, it } from "vitest";
import { authorizeQuery, authorizeQueryWith, call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { API, MINIMAL, SPA, standardWorkspace } from "../helpers/fixtures";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { signInView } from "../../lib/sign-in/view";

let h: Harness;
const ws = uniqueWorkspaceId("authz");
const issuer = `${PUBLIC_URL}/t/${ws}`;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

const authorize = (query: URLSearchParams | string, cookie?: string) => call(h, `/t/${ws}/oauth2/authorize?${query}`, { cookie });

const spaQuery = (overrides: Record<string, string | null> = {}) => authorizeQueryWith({ ...SPA }, overrides);

async function expectHostedError(res: Response, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("location")).toBeNull();
  expect(res.headers.get("content-type")).toContain("text/html");
  expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  expect(res.headers.get("access-control-allow-origin")).toBeNull();
}

function expectErrorRedirect(res: Response, error: string, state: string) {
  expect(res.status).toBe(303);
  const url = new URL(res.headers.get("location")!);
  expect(url.origin + url.pathname).toBe(SPA.redirect_uri);
  expect(url.searchParams.get("error")).toBe(error);
  expect(url.searchParams.get("state")).toBe(state);
  expect(url.searchParams.get("iss")).toBe(issuer);
  expect(url.searchParams.get("code")).toBeNull();
}

describe("before the client and redirect URI are verified: hosted error page, never a redirect", () => {
  it("missing client_id", async () => expectHostedError(await authorize(spaQuery({ client_id: null })), 400));
  it("duplicated client_id", async () => expectHostedError(await authorize(spaQuery() + "&client_id=spa"), 400));
  it("unknown client (404, like any unresolved client)", async () => expectHostedError(await authorize(spaQuery({ client_id: "nope" })), 404));
  it("M2M client", async () => expectHostedError(await authorize(spaQuery({ client_id: "m2m" })), 400));
  it("unregistered redirect URI", async () => expectHostedError(await authorize(spaQuery({ redirect_uri: "https://evil.example/callback" })), 400));
  it("redirect URI that differs only by a trailing slash", async () => expectHostedError(await authorize(spaQuery({ redirect_uri: SPA.redirect_uri + "/" })), 400));
  it("duplicated redirect_uri", async () => expectHostedError(await authorize(spaQuery() + `&redirect_uri=${encodeURIComponent(SPA.redirect_uri)}`), 400));
  it("missing redirect_uri", async () => expectHostedError(await authorize(spaQuery({ redirect_uri: null })), 400));
  it("unusable state (too short)", async () => expectHostedError(await authorize(spaQuery({ state: "abc" })), 400));
  it("unusable state (not base64url)", async () => expectHostedError(await authorize(spaQuery({ state: "a".repeat(30) + "!" })), 400));
  it("state over 128 characters", async () => expectHostedError(await authorize(spaQuery({ state: "a".repeat(129) })), 400));
  it("disabled client", async () => {
    const other = uniqueWorkspaceId("authz-off");
    const doc = standardWorkspace(other);
    doc.applications[0] = { ...doc.applications[0], active: false };
    await seed(h, doc);
    await expectHostedError(await call(h, `/t/${other}/oauth2/authorize?${spaQuery()}`), 404);
  });
});

describe("after verification: errors go to the callback with state and iss", () => {
  const cases: [string, Record<string, string | null>, string][] = [
    ["response_type other than code", { response_type: "token" }, "invalid_request"],
    ["missing response_type", { response_type: null }, "invalid_request"],
    ["missing scope", { scope: null }, "invalid_request"],
    ["scope without openid", { scope: "email profile" }, "invalid_scope"],
    ["duplicated scope value", { scope: "openid email email" }, "invalid_scope"],
    ["scope with a double space", { scope: "openid  email" }, "invalid_scope"],
    ["unregistered identity scope", { scope: "openid offline_access" }, "invalid_scope"],
    ["unknown scope", { scope: "openid read:unknown" }, "invalid_scope"],
    ["permission without resource", { scope: "openid read:things" }, "invalid_scope"],
    ["permission not granted to the client", { scope: "openid admin:things", resource: API }, "invalid_scope"],
    ["resource not granted", { resource: "https://other.example.test" }, "invalid_scope"],
    ["missing nonce", { nonce: null }, "invalid_request"],
    ["nonce too short", { nonce: "a".repeat(23) }, "invalid_request"],
    ["nonce too long", { nonce: "a".repeat(129) }, "invalid_request"],
    ["nonce not base64url", { nonce: "a".repeat(30) + "=" }, "invalid_request"],
    ["missing code_challenge", { code_challenge: null }, "invalid_request"],
    ["code_challenge with padding", { code_challenge: "a".repeat(43) + "=" }, "invalid_request"],
    ["code_challenge of the wrong length", { code_challenge: "a".repeat(42) }, "invalid_request"],
    ["plain PKCE", { code_challenge_method: "plain" }, "invalid_request"],
    ["missing code_challenge_method", { code_challenge_method: null }, "invalid_request"],
    ["unrecognized parameter", { foo: "bar" }, "invalid_request"],
  ];
  for (const name of ["prompt", "max_age", "login_hint", "organization", "connection", "response_mode", "audience"]) {
    cases.push([`unsupported parameter ${name}`, { [name]: "x" }, "invalid_request"]);
  }
  for (const [name, overrides, error] of cases) {
    it(name, async () => {
      const query = spaQuery(overrides);
      expectErrorRedirect(await authorize(query), error, query.get("state")!);
    });
  }

  it("duplicated scope parameter", async () => {
    const query = spaQuery();
    expectErrorRedirect(await authorize(`${query}&scope=openid`), "invalid_request", query.get("state")!);
  });

  it("more than 68 scopes", async () => {
    const many = ["openid", ...Array.from({ length: 68 }, (_, i) => `p${i}`)].join(" ");
    const query = spaQuery({ scope: many, resource: API });
    expectErrorRedirect(await authorize(query), "invalid_scope", query.get("state")!);
  });

  it("nonce equal to state", async () => {
    const query = spaQuery();
    query.set("nonce", query.get("state")!);
    expectErrorRedirect(await authorize(query), "invalid_request", query.get("state")!);
  });

  it("registered scope of another client is refused (minimal client has only openid)", async () => {
    const { query, state } = authorizeQuery({ ...MINIMAL, scope: "openid email" });
    const res = await authorize(query);
    expect(res.status).toBe(303);
    const url = new URL(res.headers.get("location")!);
    expect(url.searchParams.get("error")).toBe("invalid_scope");
    expect(url.searchParams.get("state")).toBe(state);
  });
});

describe("a valid request", () => {
  it("stores a pending transaction and hands the browser to hosted sign-in with a bound cookie", async () => {
    const res = await authorize(spaQuery({ scope: "openid email read:things", resource: API }));
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get("location")!, PUBLIC_URL);
    expect(location.pathname).toBe(`/t/${ws}/sign-in`);
    const tx = location.searchParams.get("tx")!;
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`lk_tx_${tx}=`))!;
    expect(cookie).toContain(`Path=/t/${ws}`);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("Secure");
    expect(cookie).toContain("SameSite=Lax");
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const ctx = contextFor(h.service, (await resolveWorkspace(h.service, ws))!);
    const jar = new Jar().take(res);
    expect((await signInView(ctx, tx, jar.header())).kind).toBe("step");
    // Without the browser's cookie the transaction is not usable.
    expect((await signInView(ctx, tx, null)).kind).toBe("expired");
  });

  it("expires the pending transaction after 10 minutes", async () => {
    const res = await authorize(spaQuery());
    const tx = new URL(res.headers.get("location")!, PUBLIC_URL).searchParams.get("tx")!;
    const jar = new Jar().take(res);
    const ctx = contextFor(h.service, (await resolveWorkspace(h.service, ws))!);
    h.clock.advance(10 * 60 * 1000 - 1000);
    expect((await signInView(ctx, tx, jar.header())).kind).toBe("step");
    h.clock.advance(2000);
    expect((await signInView(ctx, tx, jar.header())).kind).toBe("expired");
  });
});
