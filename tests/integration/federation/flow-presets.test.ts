/**
 * The Google and Microsoft presets end to end, pointed (issuer override, as private deployments
 * and tests do) at an independent OpenID Connect provider on loopback: the preset's scopes are
 * asked for, the button signs in, and the account and identity are created as for any provider.
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authzWorkspace, WEB } from "../../helpers/fixtures";
import { basic, createHarness, exchangeCode, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { outcome, startSignIn, viewOf } from "../../helpers/factors/sign-in";
import { startOidcProviderUpstream, type OidcProviderUpstream } from "../../helpers/federation/oidc-provider-upstream";
import { callbackUrlOf, deliverCallback, identitiesOf, seedWithSecrets, socialProviderIdOf, startSocial, upstreamLocation, userByEmail } from "../../helpers/federation/setup";

let h: Harness;
const ws = uniqueWorkspaceId("fedpre");
let google: OidcProviderUpstream;
let microsoft: OidcProviderUpstream;

beforeAll(async () => {
  h = await createHarness();
  const accounts = [{ sub: "g-1", email: "gina@gmail.test", email_verified: true, name: "Gina" }, { sub: "m-1", email: "mo@contoso.test", email_verified: true, name: "Mo" }];
  google = await startOidcProviderUpstream({ redirectUris: [callbackUrlOf(ws)], now: () => h.clock.now(), accounts });
  microsoft = await startOidcProviderUpstream({ redirectUris: [callbackUrlOf(ws)], now: () => h.clock.now(), accounts });
  const doc = authzWorkspace(ws);
  doc.applications.find((a) => a.client_id === WEB.client_id)!.social_providers = ["microsoft", "google"];
  await seedWithSecrets(
    h,
    {
      ...doc,
      social_providers: [
        { key: "microsoft", preset: "microsoft", name: "Microsoft", client_id: microsoft.clientId, client_secret: { env: "MS_SECRET" }, tenant: "contoso.onmicrosoft.com", issuer: microsoft.issuer },
        { key: "google", preset: "google", name: "Google", client_id: google.clientId, client_secret: { env: "GOOGLE_SECRET" }, issuer: google.issuer },
      ],
    },
    { MS_SECRET: microsoft.clientSecret, GOOGLE_SECRET: google.clientSecret },
  );
});

afterAll(async () => {
  await google?.close();
  await microsoft?.close();
});

async function signInWith(key: "google" | "microsoft", upstream: OidcProviderUpstream, account: string) {
  const s = await startSignIn(h, ws, { ...WEB, scope: "openid email profile" });
  const url = upstreamLocation(await startSocial(h, s, key), ws);
  expect(url.origin).toBe(new URL(upstream.issuer).origin);
  expect(url.searchParams.get("scope")!.split(" ").sort()).toEqual(["email", "openid", "profile"]);
  const o = outcome(await deliverCallback(h, s, (await upstream.authorize(url, { account })).url));
  if (o.to !== "callback") throw new Error(`stopped at the page: ${o.error}`);
  const exchanged = await exchangeCode(h, ws, { code: o.code, redirect_uri: WEB.redirect_uri, verifier: s.verifier, authorization: basic(WEB.client_id, WEB.secret) });
  return decodeJwt((await exchanged.json()).id_token);
}

describe("the Google and Microsoft presets", () => {
  it("show their buttons in the application's order", async () => {
    const view = await viewOf(h, await startSignIn(h, ws, { ...WEB, scope: "openid email" }));
    expect(view.federation.buttons.map((b) => [b.key, b.preset])).toEqual([
      ["microsoft", "microsoft"],
      ["google", "google"],
    ]);
  });

  it("Google: signs in and creates the account, the identity keyed by the upstream's exact issuer and subject", async () => {
    const claims = await signInWith("google", google, "g-1");
    expect(claims).toMatchObject({ email: "gina@gmail.test", email_verified: true, name: "Gina", amr: ["fed"] });
    const user = (await userByEmail(h, ws, "gina@gmail.test"))!;
    expect(await identitiesOf(h, ws, user.id)).toMatchObject([{ issuer: google.issuer, subject: "g-1", socialProviderId: await socialProviderIdOf(h, ws, "google") }]);
  });

  it("Microsoft: signs in and creates the account through the tenant's issuer", async () => {
    const claims = await signInWith("microsoft", microsoft, "m-1");
    expect(claims).toMatchObject({ email: "mo@contoso.test", amr: ["fed"] });
    const user = (await userByEmail(h, ws, "mo@contoso.test"))!;
    expect(await identitiesOf(h, ws, user.id)).toMatchObject([{ issuer: microsoft.issuer, subject: "m-1", socialProviderId: await socialProviderIdOf(h, ws, "microsoft") }]);
  });
});
