/**
 * Sign in with Apple's differences, against oidc-provider standing in for Apple: the response is
 * form-posted when name or email is asked for, the client authenticates with an ES256 JWT it
 * signs (checked here on the wire, then swapped for the stand-in's secret), and the name comes
 * from the posted `user` field when the ID token has none.
 */
import { exportPKCS8, generateKeyPair, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { beginUpstream, completeUpstream, upstreamFromSocialRow } from "../../../lib/federation/upstream";
import type { UpstreamCall, UpstreamProvider } from "../../../lib/federation/upstream/contract";
import { startOidcProviderUpstream, type OidcProviderUpstream } from "../../helpers/federation/oidc-provider-upstream";

const REDIRECT_URI = "https://auth.example.test/t/acme/federation/callback";
const now = new Date("2026-11-21T12:00:00Z");

let upstream: OidcProviderUpstream;
let provider: UpstreamProvider;
let publicKey: CryptoKey;
const sentSecrets: string[] = [];

/** The service's fetch, with the token request's Apple JWT recorded and replaced by the stand-in's secret. */
const call = (): UpstreamCall => ({
  issuer: "https://login.test/t/test",
  redirectUri: REDIRECT_URI,
  now,
  fetch: (input, init) => {
    if (String(input).endsWith("/token") && init?.body instanceof URLSearchParams) {
      const body = new URLSearchParams(init.body);
      sentSecrets.push(body.get("client_secret") ?? "");
      body.set("client_secret", upstream.clientSecret);
      return globalThis.fetch(input, { ...init, body });
    }
    return globalThis.fetch(input, init);
  },
});

beforeAll(async () => {
  upstream = await startOidcProviderUpstream({
    redirectUris: [REDIRECT_URI],
    clientId: "com.acme.signin",
    clientAuthMethod: "client_secret_post",
    claimsInIdToken: true,
    now: () => now,
    accounts: [{ sub: "001234.abcdef", email: "ada@privaterelay.appleid.test", email_verified: true }],
  });
  const keys = await generateKeyPair("ES256", { extractable: true });
  publicKey = keys.publicKey;
  provider = upstreamFromSocialRow(
    { id: "sp-apple", preset: "apple", clientId: "com.acme.signin", config: { issuer: upstream.issuer, team_id: "TEAM123456", key_id: "KEY1234567" } },
    await exportPKCS8(keys.privateKey),
  );
});

afterAll(async () => {
  await upstream?.close();
});

describe("Sign in with Apple", () => {
  it("asks for name and email with response_mode=form_post", async () => {
    const start = await beginUpstream(provider, call());
    expect(start.url.searchParams.get("scope")).toBe("openid name email");
    expect(start.url.searchParams.get("response_mode")).toBe("form_post");
  });

  it("completes from the posted form, authenticating with its client secret JWT, the name from `user`", async () => {
    const start = await beginUpstream(provider, call());
    const delivered = await upstream.authorize(start.url, { account: "001234.abcdef" });
    expect(delivered.body).toBeDefined();
    delivered.body!.set("user", JSON.stringify({ name: { firstName: "Ada", lastName: "Lovelace" }, email: "someone-else@attacker.test" }));
    const before = sentSecrets.length;
    const identity = await completeUpstream(provider, call(), { url: delivered.url, body: delivered.body, expected: start });
    // The email is the ID token's, never the unsigned `user` field's.
    expect(identity).toMatchObject({ issuer: upstream.issuer, subject: "001234.abcdef", email: "ada@privaterelay.appleid.test", emailVerified: true, name: "Ada Lovelace" });
    expect(sentSecrets.length).toBe(before + 1);
    const { payload, protectedHeader } = await jwtVerify(sentSecrets.at(-1)!, publicKey, { issuer: "TEAM123456", subject: "com.acme.signin", audience: "https://appleid.apple.com", currentDate: now });
    expect(protectedHeader).toMatchObject({ alg: "ES256", kid: "KEY1234567" });
    expect(payload.iat).toBe(now.getTime() / 1000);
  });
});
