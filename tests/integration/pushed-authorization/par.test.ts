/**
 * Pushed authorization requests (RFC 9126, lib/oauth/pushed-authorization): the endpoint holds the
 * parameters to the authorization endpoint's rules, the browser's request_uri is used once, by the
 * client that pushed it, within 60 seconds, and an application can require pushing.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { authorizeQuery, basic, call, createHarness, exchangeCode, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, M2M, SPA, WEB, standardWorkspace } from "../../helpers/fixtures";
import { contextFor, resolveWorkspace } from "../../../lib/server/router";
import { signInView } from "../../../lib/sign-in/view";
import { PUSHED_REQUEST_TTL_MS } from "../../../lib/oauth/pushed-authorization/endpoint";
import { validateWorkspaceDocument } from "../../../lib/workspaces/document";

let h: Harness;
const ws = uniqueWorkspaceId("par");
const issuer = `${PUBLIC_URL}/t/${ws}`;
/** A second public client that requires pushed requests. */
const STRICT = { client_id: "strict", redirect_uri: "https://strict.example.test/cb" };

beforeAll(async () => {
  h = await createHarness();
  const doc = standardWorkspace(ws);
  doc.applications.push({ client_id: STRICT.client_id, name: "Strict", type: "PUBLIC", redirect_uris: [STRICT.redirect_uri], identity_scopes: ["openid"], require_pushed_authorization_requests: true });
  await seed(h, doc);
});

const push = (form: Record<string, string>, headers: Record<string, string> = {}) => call(h, `/t/${ws}/oauth2/par`, { form, headers });
const authorize = (query: URLSearchParams | string, cookie?: string) => call(h, `/t/${ws}/oauth2/authorize?${query}`, { cookie });
const byUri = (clientId: string, requestUri: string) => new URLSearchParams({ client_id: clientId, request_uri: requestUri });

async function pushed(client: { client_id: string; redirect_uri: string }, scope = "openid"): Promise<{ requestUri: string; verifier: string; state: string }> {
  const { query, verifier, state } = authorizeQuery({ ...client, scope });
  const res = await push(Object.fromEntries(query));
  expect(res.status).toBe(201);
  const body = (await res.json()) as { request_uri: string; expires_in: number };
  return { requestUri: body.request_uri, verifier, state };
}

async function expectHostedError(res: Response, oauthError: string) {
  expect(res.status).toBe(400);
  expect(res.headers.get("location")).toBeNull();
  expect(await res.text()).toContain(oauthError);
}

/** Signs Ada in through the sign-in page a pushed request led to; returns the callback. */
async function signInFrom(res: Response): Promise<URL> {
  expect(res.status).toBe(303);
  const jar = new Jar().take(res);
  const location = new URL(res.headers.get("location")!, PUBLIC_URL);
  expect(location.pathname).toBe(`/t/${ws}/sign-in`);
  const tx = location.searchParams.get("tx")!;
  const view = await signInView(contextFor(h.service, (await resolveWorkspace(h.service, ws))!), tx, jar.header());
  if (view.kind !== "step") throw new Error("no sign-in step");
  const post = await call(h, `/t/${ws}/sign-in/password`, { form: { tx, csrf: view.csrf, email: ADA.email, password: ADA.password }, cookie: jar.header(), headers: { origin: PUBLIC_URL } });
  expect(post.status).toBe(303);
  return new URL(post.headers.get("location")!);
}

describe("POST /oauth2/par", () => {
  it("a public client pushes its request and the browser signs in with client_id and request_uri only; the code exchange works", async () => {
    const { query, verifier, state } = authorizeQuery({ ...SPA, scope: "openid email" });
    const res = await push(Object.fromEntries(query));
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toContain("no-store");
    const body = (await res.json()) as { request_uri: string; expires_in: number };
    expect(body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);
    expect(body.expires_in).toBe(60);
    const callback = await signInFrom(await authorize(byUri(SPA.client_id, body.request_uri)));
    expect(callback.origin + callback.pathname).toBe(SPA.redirect_uri);
    expect(callback.searchParams.get("state")).toBe(state);
    expect(callback.searchParams.get("iss")).toBe(issuer);
    const token = await exchangeCode(h, ws, { code: callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id });
    expect(token.status).toBe(200);
    expect(((await token.json()) as { scope: string }).scope).toBe("openid email");
  });

  it("a confidential client pushes with HTTP Basic, and only so", async () => {
    const { query } = authorizeQuery({ ...WEB, scope: "openid" });
    const form = Object.fromEntries(query);
    expect((await push(form, { authorization: basic(WEB.client_id, WEB.secret) })).status).toBe(201);
    const withoutSecret = await push(form);
    expect(withoutSecret.status).toBe(401);
    expect(((await withoutSecret.json()) as { error: string }).error).toBe("invalid_client");
    const wrongSecret = await push(form, { authorization: basic(WEB.client_id, "x".repeat(40)) });
    expect(wrongSecret.status).toBe(401);
  });

  it("holds the parameters to the authorization endpoint's rules, answered as JSON (never a redirect)", async () => {
    const cases: [Record<string, string | null>, string][] = [
      [{ nonce: "short" }, "invalid_request"],
      [{ scope: "email" }, "invalid_scope"],
      [{ scope: "openid read:things" }, "invalid_scope"],
      [{ redirect_uri: "https://evil.example/cb" }, "invalid_request"],
      [{ state: "abc" }, "invalid_request"],
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ response_type: "token" }, "invalid_request"],
      [{ prompt: "none" }, "invalid_request"],
      [{ request_uri: "urn:ietf:params:oauth:request_uri:x" }, "invalid_request"],
      [{ request: "eyJhbGciOiJub25lIn0.e30." }, "invalid_request"],
    ];
    for (const [overrides, error] of cases) {
      const { query } = authorizeQuery(SPA);
      for (const [k, v] of Object.entries(overrides)) v === null ? query.delete(k) : query.set(k, v);
      const res = await push(Object.fromEntries(query));
      expect(res.status, JSON.stringify(overrides)).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(((await res.json()) as { error: string }).error, JSON.stringify(overrides)).toBe(error);
    }
  });

  it("refuses a machine-to-machine client as unauthorized_client", async () => {
    const res = await push({ response_type: "code", scope: "openid" }, { authorization: basic(M2M.client_id, M2M.secret) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("unauthorized_client");
  });

  it("a single-page app pushes from its registered origin (CORS), and not from another", async () => {
    const preflight = await call(h, `/t/${ws}/oauth2/par`, { method: "OPTIONS", headers: { origin: "https://app.example.test", "access-control-request-method": "POST" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://app.example.test");
    const { query } = authorizeQuery(SPA);
    const allowed = await push(Object.fromEntries(query), { origin: "https://app.example.test" });
    expect(allowed.status).toBe(201);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example.test");
    const denied = await push(Object.fromEntries(authorizeQuery(SPA).query), { origin: "https://evil.example" });
    expect(denied.status).toBe(403);
  });

  it("a duplicated parameter is refused", async () => {
    const { query } = authorizeQuery(SPA);
    const res = await call(h, `/t/${ws}/oauth2/par`, { form: `${query}&nonce=${"a".repeat(30)}` });
    expect(res.status).toBe(400);
  });
});

describe("the request_uri at the authorization endpoint", () => {
  it("is used once: the second use is refused on the hosted page", async () => {
    const { requestUri } = await pushed(SPA);
    expect((await authorize(byUri(SPA.client_id, requestUri))).status).toBe(303);
    await expectHostedError(await authorize(byUri(SPA.client_id, requestUri)), "invalid_request_uri");
  });

  it("expires after 60 seconds", async () => {
    const { requestUri } = await pushed(SPA);
    h.clock.advance(PUSHED_REQUEST_TTL_MS);
    await expectHostedError(await authorize(byUri(SPA.client_id, requestUri)), "invalid_request_uri");
  });

  it("belongs to the client that pushed it: another client_id is refused, and does not use it up", async () => {
    const { requestUri } = await pushed(SPA);
    await expectHostedError(await authorize(byUri("minimal", requestUri)), "invalid_request_uri");
    await expectHostedError(await authorize(byUri(WEB.client_id, requestUri)), "invalid_request_uri");
    expect((await authorize(byUri(SPA.client_id, requestUri))).status).toBe(303);
  });

  it("comes with client_id and nothing else", async () => {
    const { requestUri } = await pushed(SPA);
    const withScope = byUri(SPA.client_id, requestUri);
    withScope.set("scope", "openid email");
    await expectHostedError(await authorize(withScope), "invalid_request");
    await expectHostedError(await authorize(new URLSearchParams({ request_uri: requestUri })), "invalid_request");
    // Neither attempt used it.
    expect((await authorize(byUri(SPA.client_id, requestUri))).status).toBe(303);
  });

  it("an unknown request_uri is refused", async () => {
    await expectHostedError(await authorize(byUri(SPA.client_id, "urn:ietf:params:oauth:request_uri:nothing")), "invalid_request_uri");
  });

  it("is checked again when used: a client disabled since the push is refused", async () => {
    const other = uniqueWorkspaceId("par-off");
    const doc = standardWorkspace(other);
    await seed(h, doc);
    const { query } = authorizeQuery(SPA);
    const res = await call(h, `/t/${other}/oauth2/par`, { form: Object.fromEntries(query) });
    const { request_uri } = (await res.json()) as { request_uri: string };
    doc.applications[0] = { ...doc.applications[0], active: false };
    await seed(h, doc);
    const used = await call(h, `/t/${other}/oauth2/authorize?${byUri(SPA.client_id, request_uri)}`);
    expect(used.status).toBe(404);
  });

  it("is used by exactly one of many parallel requests", async () => {
    const { requestUri } = await pushed(SPA);
    const answers = await Promise.all(Array.from({ length: 12 }, () => authorize(byUri(SPA.client_id, requestUri))));
    expect(answers.filter((r) => r.status === 303)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 400)).toHaveLength(11);
  });
});

describe("require_pushed_authorization_requests", () => {
  it("refuses the application's front-channel request at its callback, and accepts its pushed one", async () => {
    const { query, state } = authorizeQuery({ ...STRICT, scope: "openid" });
    const res = await authorize(query);
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(STRICT.redirect_uri);
    expect(location.searchParams.get("error")).toBe("invalid_request");
    expect(location.searchParams.get("error_description")).toContain("pushed");
    expect(location.searchParams.get("state")).toBe(state);
    const { requestUri } = await pushed(STRICT);
    const signIn = await authorize(byUri(STRICT.client_id, requestUri));
    expect(new URL(signIn.headers.get("location")!, PUBLIC_URL).pathname).toBe(`/t/${ws}/sign-in`);
  });

  it("leaves the other applications' front-channel requests alone", async () => {
    const res = await authorize(authorizeQuery(SPA).query);
    expect(new URL(res.headers.get("location")!, PUBLIC_URL).pathname).toBe(`/t/${ws}/sign-in`);
  });

  it("the workspace file refuses it on a machine-to-machine application", () => {
    const doc = standardWorkspace("x");
    doc.applications[2] = { ...doc.applications[2], require_pushed_authorization_requests: true };
    expect(() => validateWorkspaceDocument(doc)).toThrow(/require_pushed_authorization_requests/);
  });
});

describe("discovery", () => {
  it("lists the endpoint; require_pushed_authorization_requests follows the application asked for", async () => {
    const all = (await (await call(h, `/t/${ws}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(all.pushed_authorization_request_endpoint).toBe(`${issuer}/oauth2/par`);
    expect(all.require_pushed_authorization_requests).toBe(false);
    const strict = (await (await call(h, `/t/${ws}/.well-known/openid-configuration?client_id=${STRICT.client_id}`)).json()) as Record<string, unknown>;
    expect(strict.require_pushed_authorization_requests).toBe(true);
    const spa = (await (await call(h, `/t/${ws}/.well-known/openid-configuration?client_id=${SPA.client_id}`)).json()) as Record<string, unknown>;
    expect(spa.require_pushed_authorization_requests).toBe(false);
  });
});
