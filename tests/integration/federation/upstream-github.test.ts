/**
 * GitHub through its OAuth endpoints and user API (a strict stand-in on loopback): the identity
 * is the numeric id, the email the primary one, verified only when GitHub says so; state and
 * PKCE are checked; a denial and an unreachable GitHub have their own codes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { beginUpstream, completeUpstream, upstreamFromSocialRow } from "../../../lib/federation/upstream";
import { FederationError, type UpstreamCall, type UpstreamProvider } from "../../../lib/federation/upstream/contract";
import { startGithubStandin, type GithubStandin } from "../../helpers/federation/github-standin";

const REDIRECT_URI = "https://auth.example.test/t/acme/federation/callback";
const call = (): UpstreamCall => ({ issuer: "https://login.test/t/test", redirectUri: REDIRECT_URI, fetch: globalThis.fetch, now: new Date("2026-11-21T12:00:00Z") });

let github: GithubStandin;
let provider: UpstreamProvider;

beforeAll(async () => {
  github = await startGithubStandin({
    redirectUris: [REDIRECT_URI],
    users: [
      {
        id: 583231,
        login: "octocat",
        name: "The Octocat",
        emails: [
          { email: "old@octo.test", primary: false, verified: true },
          { email: "octocat@octo.test", primary: true, verified: true },
        ],
      },
      { id: 9001, login: "hubot", name: null, emails: [{ email: "hubot@octo.test", primary: true, verified: false }] },
    ],
  });
  provider = upstreamFromSocialRow(
    {
      id: "sp-github",
      preset: "github",
      clientId: github.clientId,
      config: { authorization_endpoint: github.authorizationEndpoint, token_endpoint: github.tokenEndpoint, api_base: github.apiBase },
    },
    github.clientSecret,
  );
});

afterAll(async () => {
  await github?.close();
});

async function failure(promise: Promise<unknown>): Promise<FederationError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FederationError);
  return error as FederationError;
}

describe("GitHub upstream", () => {
  it("asks for the user's profile and emails with state and PKCE (S256)", async () => {
    const start = await beginUpstream(provider, call());
    expect(start.url.origin + start.url.pathname).toBe(github.authorizationEndpoint);
    const q = start.url.searchParams;
    expect(q.get("client_id")).toBe(github.clientId);
    expect(q.get("redirect_uri")).toBe(REDIRECT_URI);
    expect(q.get("response_type")).toBe("code");
    expect(q.get("scope")).toBe("read:user user:email");
    expect(q.get("state")).toBe(start.state);
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("code_challenge")).not.toBe(start.codeVerifier);
  });

  it("signs in as the numeric id with the verified primary email", async () => {
    const start = await beginUpstream(provider, call());
    const url = await github.authorize(start.url, { user: 583231 });
    const identity = await completeUpstream(provider, call(), { url, expected: start });
    expect(identity).toEqual({ issuer: "https://github.com", subject: "583231", email: "octocat@octo.test", emailVerified: true, name: "The Octocat", amr: [], acr: null });
  });

  it("keeps an unverified primary email unverified, and falls back to the login for the name", async () => {
    const start = await beginUpstream(provider, call());
    const url = await github.authorize(start.url, { user: 9001 });
    const identity = await completeUpstream(provider, call(), { url, expected: start });
    expect(identity).toMatchObject({ subject: "9001", email: "hubot@octo.test", emailVerified: false, name: "hubot" });
  });

  it("refuses a callback whose state is not the round trip's", async () => {
    const start = await beginUpstream(provider, call());
    const url = await github.authorize(start.url, { user: 583231 });
    const error = await failure(completeUpstream(provider, call(), { url, expected: { ...start, state: "another-round-trip" } }));
    expect(error.code).toBe("invalid_response");
  });

  it("sends the PKCE verifier: another verifier is refused by GitHub", async () => {
    const start = await beginUpstream(provider, call());
    const url = await github.authorize(start.url, { user: 583231 });
    const other = await beginUpstream(provider, call());
    const error = await failure(completeUpstream(provider, call(), { url, expected: { ...start, codeVerifier: other.codeVerifier } }));
    expect(error.code).toBe("invalid_response");
  });

  it("refuses the same callback twice (the code is used once)", async () => {
    const start = await beginUpstream(provider, call());
    const url = await github.authorize(start.url, { user: 583231 });
    await completeUpstream(provider, call(), { url, expected: start });
    const error = await failure(completeUpstream(provider, call(), { url, expected: start }));
    expect(error.code).toBe("invalid_response");
  });

  it("reports the user's refusal as upstream_denied", async () => {
    const start = await beginUpstream(provider, call());
    const url = await github.authorize(start.url, { deny: true });
    const error = await failure(completeUpstream(provider, call(), { url, expected: start }));
    expect(error.code).toBe("upstream_denied");
  });

  it("reports an unreachable GitHub as upstream_unavailable", async () => {
    const start = await beginUpstream(provider, call());
    const url = await github.authorize(start.url, { user: 583231 });
    const down: UpstreamCall = { ...call(), fetch: () => Promise.reject(new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED") })) };
    const error = await failure(completeUpstream(provider, down, { url, expected: start }));
    expect(error.code).toBe("upstream_unavailable");
    expect(error.cause).toBeDefined();
  });

  it("reports a GitHub API answering 5xx as upstream_unavailable", async () => {
    const start = await beginUpstream(provider, call());
    const url = await github.authorize(start.url, { user: 583231 });
    const flaky: UpstreamCall = {
      ...call(),
      fetch: (input, init) => (String(input).includes("/api/v3/") ? Promise.resolve(new Response("unavailable", { status: 502 })) : globalThis.fetch(input, init)),
    };
    const error = await failure(completeUpstream(provider, flaky, { url, expected: start }));
    expect(error.code).toBe("upstream_unavailable");
  });

  it("refuses a wrong client secret (GitHub's 200 with an error)", async () => {
    const wrong = upstreamFromSocialRow(
      { id: "sp-github", preset: "github", clientId: github.clientId, config: { authorization_endpoint: github.authorizationEndpoint, token_endpoint: github.tokenEndpoint, api_base: github.apiBase } },
      "not-the-secret",
    );
    const start = await beginUpstream(wrong, call());
    const url = await github.authorize(start.url, { user: 583231 });
    const error = await failure(completeUpstream(wrong, call(), { url, expected: start }));
    expect(error.code).toBe("invalid_response");
  });
});
