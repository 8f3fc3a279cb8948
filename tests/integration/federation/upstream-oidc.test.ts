/**
 * The OpenID Connect round trip against a real upstream (oidc-provider on loopback): the
 * authorization URL, the callback verified (state, RFC 9207 `iss`, ID token signature, issuer,
 * nonce, PKCE, UserInfo subject), and every failure as a FederationError with its code.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { beginUpstream, completeUpstream, upstreamFromConnectionRow } from "../../../lib/federation/upstream";
import { FederationError, type UpstreamCall, type UpstreamProvider } from "../../../lib/federation/upstream/contract";
import { forgetDiscoveries } from "../../../lib/federation/upstream/oidc";
import { startOidcProviderUpstream, type OidcProviderUpstream } from "../../helpers/federation/oidc-provider-upstream";

const REDIRECT_URI = "https://auth.example.test/t/acme/federation/callback";

let upstream: OidcProviderUpstream;
let upstreamNow = new Date("2026-11-21T12:00:00Z");
let provider: UpstreamProvider;
/** The service clock of these tests: fixed, days away from real time (the upstream follows it). */
let serviceNow = new Date("2026-11-21T12:00:00Z");
const call = (): UpstreamCall => ({ issuer: "https://login.test/t/test", redirectUri: REDIRECT_URI, fetch: globalThis.fetch, now: serviceNow });

beforeAll(async () => {
  upstream = await startOidcProviderUpstream({
    redirectUris: [REDIRECT_URI],
    now: () => upstreamNow,
    accounts: [
      { sub: "alice-1", email: "alice@acme.test", email_verified: true, name: "Alice Example" },
      { sub: "bob-2", email: "bob@acme.test", email_verified: false, name: "Bob" },
      { sub: "carol-3", email: "carol@acme.test", email_verified: "true", name: "Carol" },
    ],
  });
  provider = upstreamFromConnectionRow(
    { id: "conn-1", organizationId: "org-1", kind: "oidc", config: { issuer: upstream.issuer, client_id: upstream.clientId } },
    upstream.clientSecret,
  );
});

afterAll(async () => {
  await upstream?.close();
});

beforeEach(() => {
  serviceNow = new Date("2026-11-21T12:00:00Z");
  upstreamNow = serviceNow;
  for (const key of Object.keys(upstream.tamper)) delete (upstream.tamper as Record<string, unknown>)[key];
});

async function roundTrip(choice: Parameters<OidcProviderUpstream["authorize"]>[1], expectedOverride: Partial<{ state: string; nonce: string; codeVerifier: string }> = {}) {
  const start = await beginUpstream(provider, call());
  const delivered = await upstream.authorize(start.url, choice);
  return completeUpstream(provider, call(), { ...delivered, expected: { state: start.state, nonce: start.nonce, codeVerifier: start.codeVerifier, ...expectedOverride } });
}

async function failure(promise: Promise<unknown>): Promise<FederationError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FederationError);
  return error as FederationError;
}

describe("OpenID Connect upstream: the round trip", () => {
  it("asks for code with openid, the provider's scopes, state, nonce and PKCE (S256), fresh each time", async () => {
    const first = await beginUpstream(provider, call());
    const second = await beginUpstream(provider, call());
    const q = first.url.searchParams;
    expect(first.url.origin).toBe(upstream.issuer);
    expect(q.get("client_id")).toBe(upstream.clientId);
    expect(q.get("redirect_uri")).toBe(REDIRECT_URI);
    expect(q.get("response_type")).toBe("code");
    expect(q.get("scope")).toBe("openid email profile");
    expect(q.get("state")).toBe(first.state);
    expect(q.get("nonce")).toBe(first.nonce);
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("response_mode")).toBeNull();
    expect(second.state).not.toBe(first.state);
    expect(second.nonce).not.toBe(first.nonce);
    expect(second.codeVerifier).not.toBe(first.codeVerifier);
  });

  it("signs in with the upstream's verified identity, amr and acr passed through (email from UserInfo)", async () => {
    const before = upstream.hits.get("/me") ?? 0;
    const { received, ...identity } = await roundTrip({ account: "alice-1", amr: ["pwd", "otp"], acr: "urn:acme:mfa" });
    expect(identity).toEqual({
      issuer: upstream.issuer,
      subject: "alice-1",
      email: "alice@acme.test",
      emailVerified: true,
      name: "Alice Example",
      amr: ["pwd", "otp"],
      acr: "urn:acme:mfa",
    });
    // What was sent, by where it came from (a connection test's page shows it): each value as text, an array's elements each one.
    const sent = (source: string, name: string) => received?.find((a) => a.source === source && a.name === name)?.values;
    expect(sent("ID token", "sub")).toEqual(["alice-1"]);
    expect(sent("ID token", "amr")).toEqual(["pwd", "otp"]);
    expect(sent("ID token", "exp")?.[0]).toMatch(/^\d+$/);
    expect(sent("ID token", "email")).toBeUndefined();
    expect(sent("UserInfo", "email")).toEqual(["alice@acme.test"]);
    expect(sent("UserInfo", "email_verified")).toEqual(["true"]);
    // This upstream keeps email out of the ID token, so UserInfo was asked.
    expect(upstream.hits.get("/me") ?? 0).toBe(before + 1);
  });

  it("keeps email_verified false as false, and a string \"true\" is not true", async () => {
    expect(await roundTrip({ account: "bob-2" })).toMatchObject({ email: "bob@acme.test", emailVerified: false, amr: [], acr: null });
    expect(await roundTrip({ account: "carol-3" })).toMatchObject({ email: "carol@acme.test", emailVerified: false });
  });

  it("accepts the response form-posted (response_mode=form_post)", async () => {
    const start = await beginUpstream(provider, call());
    start.url.searchParams.set("response_mode", "form_post");
    const delivered = await upstream.authorize(start.url, { account: "alice-1" });
    expect(delivered.body?.get("code")).toBeTruthy();
    const identity = await completeUpstream(provider, call(), { url: delivered.url, body: delivered.body, expected: start });
    expect(identity.subject).toBe("alice-1");
  });

  it("checks ID token times against the service clock, not real time", async () => {
    // The upstream's clock and ours agree (days from real time): accepted above. Ours an hour ahead: expired.
    upstreamNow = new Date(serviceNow.getTime());
    const start = await beginUpstream(provider, call());
    const delivered = await upstream.authorize(start.url, { account: "alice-1" });
    serviceNow = new Date(serviceNow.getTime() + 2 * 60 * 60 * 1000);
    const error = await failure(completeUpstream(provider, call(), { ...delivered, expected: start }));
    expect(error.code).toBe("invalid_response");
  });
});

describe("OpenID Connect upstream: verification failures", () => {
  it("refuses a callback whose state is not the round trip's", async () => {
    const error = await failure(roundTrip({ account: "alice-1" }, { state: "another-round-trip" }));
    expect(error.code).toBe("invalid_response");
  });

  it("refuses an ID token signed with a key the upstream does not publish", async () => {
    upstream.tamper.signWithUnpublishedKey = true;
    const error = await failure(roundTrip({ account: "alice-1" }));
    expect(error.code).toBe("invalid_response");
  });

  it("refuses an ID token from another issuer", async () => {
    upstream.tamper.idTokenClaims = { iss: "http://127.0.0.1:1" };
    const error = await failure(roundTrip({ account: "alice-1" }));
    expect(error.code).toBe("invalid_response");
  });

  it("refuses an ID token for another audience", async () => {
    upstream.tamper.idTokenClaims = { aud: "someone-else" };
    const error = await failure(roundTrip({ account: "alice-1" }));
    expect(error.code).toBe("invalid_response");
  });

  it("refuses an authorization response whose iss (RFC 9207) is not the upstream's", async () => {
    upstream.tamper.responseIss = "https://idp.attacker.test";
    const error = await failure(roundTrip({ account: "alice-1" }));
    expect(error.code).toBe("invalid_response");
  });

  it("refuses an authorization response without iss from an upstream that advertises it", async () => {
    upstream.tamper.responseIss = null;
    const error = await failure(roundTrip({ account: "alice-1" }));
    expect(error.code).toBe("invalid_response");
  });

  it("refuses an ID token whose nonce is not the round trip's", async () => {
    const error = await failure(roundTrip({ account: "alice-1" }, { nonce: "another-nonce" }));
    expect(error.code).toBe("invalid_response");
  });

  it("refuses a verifier that is not the round trip's (PKCE)", async () => {
    const other = await beginUpstream(provider, call());
    const error = await failure(roundTrip({ account: "alice-1" }, { codeVerifier: other.codeVerifier! }));
    expect(error.code).toBe("invalid_response");
  });

  it("refuses the same callback replayed", async () => {
    const start = await beginUpstream(provider, call());
    const delivered = await upstream.authorize(start.url, { account: "alice-1" });
    await completeUpstream(provider, call(), { ...delivered, expected: start });
    const error = await failure(completeUpstream(provider, call(), { ...delivered, expected: start }));
    expect(error.code).toBe("invalid_response");
  });

  it("refuses UserInfo about another subject than the ID token's", async () => {
    upstream.tamper.userinfoClaims = { sub: "bob-2", email: "bob@acme.test", email_verified: true };
    const error = await failure(roundTrip({ account: "alice-1" }));
    expect(error.code).toBe("invalid_response");
  });

  it("reports the user's refusal upstream as upstream_denied", async () => {
    const error = await failure(roundTrip({ deny: true }));
    expect(error.code).toBe("upstream_denied");
  });

  it("treats a refusal with another round trip's state as an invalid response, not a denial", async () => {
    const error = await failure(roundTrip({ deny: true }, { state: "another-round-trip" }));
    expect(error.code).toBe("invalid_response");
  });
});

describe("OpenID Connect upstream: availability and settings", () => {
  it("uses the service's fetch, and never keeps a failed discovery", async () => {
    const second = upstreamFromConnectionRow(
      { id: "conn-2", organizationId: "org-1", kind: "oidc", config: { issuer: upstream.issuer, client_id: upstream.clientId, scopes: ["groups"] } },
      `${upstream.clientSecret}-other`,
    );
    const seen: string[] = [];
    const failing: UpstreamCall = { ...call(), fetch: (input) => (seen.push(String(input)), Promise.reject(new TypeError("fetch failed"))) };
    expect((await failure(beginUpstream(second, failing))).code).toBe("upstream_unavailable");
    expect(seen[0]).toBe(`${upstream.issuer}/.well-known/openid-configuration`);
    const discoveries = upstream.hits.get("/.well-known/openid-configuration") ?? 0;
    const start = await beginUpstream(second, call());
    expect(start.url.searchParams.get("scope")).toBe("openid email profile groups");
    expect(upstream.hits.get("/.well-known/openid-configuration")).toBe(discoveries + 1);
    // Now kept: the next start needs no discovery.
    await beginUpstream(second, call());
    expect(upstream.hits.get("/.well-known/openid-configuration")).toBe(discoveries + 1);
  });

  it("reports an upstream that went down as upstream_unavailable (start and callback)", async () => {
    const short = await startOidcProviderUpstream({ redirectUris: [REDIRECT_URI], accounts: [{ sub: "dave-4", email: "dave@acme.test", email_verified: true }], now: () => serviceNow });
    const p = upstreamFromConnectionRow({ id: "conn-3", organizationId: "org-1", kind: "oidc", config: { issuer: short.issuer, client_id: short.clientId } }, short.clientSecret);
    const start = await beginUpstream(p, call());
    const delivered = await short.authorize(start.url, { account: "dave-4" });
    await short.close();
    const atCallback = await failure(completeUpstream(p, call(), { ...delivered, expected: start }));
    expect(atCallback.code).toBe("upstream_unavailable");
    expect(atCallback.cause).toBeDefined();
    forgetDiscoveries();
    const atStart = await failure(beginUpstream(p, call()));
    expect(atStart.code).toBe("upstream_unavailable");
  });

  it("reports an upstream answering 5xx as upstream_unavailable", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(503, { "content-type": "text/plain" });
      res.end("maintenance");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const p = upstreamFromConnectionRow({ id: "conn-5", organizationId: "org-1", kind: "oidc", config: { issuer, client_id: "x" } }, "secret");
      expect((await failure(beginUpstream(p, call()))).code).toBe("upstream_unavailable");
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("gives up on an upstream that does not answer within 10 seconds", { timeout: 25_000 }, async () => {
    const server = createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const p = upstreamFromConnectionRow({ id: "conn-6", organizationId: "org-1", kind: "oidc", config: { issuer, client_id: "x" } }, "secret");
      const started = Date.now();
      expect((await failure(beginUpstream(p, call()))).code).toBe("upstream_unavailable");
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_000);
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("refuses a discovery document for another issuer as misconfigured", async () => {
    // localhost and 127.0.0.1 reach the same server, but the document names 127.0.0.1.
    const p = upstreamFromConnectionRow(
      { id: "conn-7", organizationId: "org-1", kind: "oidc", config: { issuer: upstream.issuer.replace("127.0.0.1", "localhost"), client_id: upstream.clientId } },
      upstream.clientSecret,
    );
    expect((await failure(beginUpstream(p, call()))).code).toBe("misconfigured");
  });

  it("refuses an http issuer outside loopback as misconfigured", async () => {
    const row = { id: "conn-8", organizationId: "org-1", kind: "oidc" as const, config: { issuer: "http://idp.acme.test", client_id: "x" } };
    const error = (() => {
      try {
        upstreamFromConnectionRow(row, "secret");
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(FederationError);
    expect((error as FederationError).code).toBe("misconfigured");
    // Also when a provider is described directly, before any request is made.
    const seen: string[] = [];
    const direct: UpstreamProvider = { ...provider, issuer: "http://idp.acme.test" };
    const recording: UpstreamCall = { ...call(), fetch: (input, init) => (seen.push(String(input)), globalThis.fetch(input, init)) };
    expect((await failure(beginUpstream(direct, recording))).code).toBe("misconfigured");
    expect(seen).toEqual([]);
  });
});
