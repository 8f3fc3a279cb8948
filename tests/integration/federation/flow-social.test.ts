/**
 * Social sign-in end to end, through a GitHub stand-in and a generic OpenID Connect provider
 * (oidc-provider) on loopback: an account is created just in time only for an email address the
 * provider verified (`email_verified` strictly true, GitHub's verified primary address); otherwise
 * the hosted error page, and nothing is created. Only the providers an application offers, enabled.
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { socialProviders } from "../../../db/schema";
import { eq } from "drizzle-orm";
import { encryptSecret } from "../../../lib/crypto";
import { socialSecretPurpose } from "../../../lib/federation/secrets";
import { authzWorkspace, SPA, WEB } from "../../helpers/fixtures";
import { authorizeQuery, basic, call, createHarness, exchangeCode, PUBLIC_URL, uniqueWorkspaceId, type Harness, type Jar } from "../../helpers/harness";
import { outcome, startSignIn, userIdOf, viewOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { startGithubStandin, type GithubStandin } from "../../helpers/federation/github-standin";
import { startOidcProviderUpstream, type OidcProviderUpstream } from "../../helpers/federation/oidc-provider-upstream";
import { callbackUrlOf, countsOf, deliverCallback, expectHostedError, identitiesOf, seedWithSecrets, setApplicationPolicy, socialProviderIdOf, startSocial, upstreamLocation, userByEmail } from "../../helpers/federation/setup";

let h: Harness;
const ws = uniqueWorkspaceId("fedsoc");
let github: GithubStandin;
let oidc: OidcProviderUpstream;
let githubId: string;
let oidcId: string;

const OCTOCAT = { id: 583231, login: "octocat", name: "The Octocat", emails: [{ email: "old@octo.test", primary: false, verified: true }, { email: "octocat@octo.test", primary: true, verified: true }] };
const HUBOT = { id: 9001, login: "hubot", name: null, emails: [{ email: "hubot@octo.test", primary: true, verified: false }, { email: "hubot-other@octo.test", primary: false, verified: true }] };

beforeAll(async () => {
  h = await createHarness();
  github = await startGithubStandin({ redirectUris: [callbackUrlOf(ws)], users: [OCTOCAT, HUBOT] });
  oidc = await startOidcProviderUpstream({
    redirectUris: [callbackUrlOf(ws)],
    now: () => h.clock.now(),
    accounts: [
      { sub: "verified-1", email: "vera@mail.test", email_verified: true, name: "Vera" },
      { sub: "unverified-2", email: "una@mail.test", email_verified: false },
      { sub: "string-true-3", email: "stella@mail.test", email_verified: "true" },
      { sub: "no-email-4" },
      { sub: "posted-5", email: "posted@mail.test", email_verified: true },
      { sub: "reused-6", email: "reused@mail.test", email_verified: true },
    ],
  });
  // The providers and the web application's buttons as the workspace file states them.
  const doc = authzWorkspace(ws);
  const web = doc.applications.find((a) => a.client_id === WEB.client_id)!;
  web.social_providers = ["github", "contoso"];
  await seedWithSecrets(
    h,
    {
      ...doc,
      social_providers: [
        github.workspaceProvider("GITHUB_SECRET"),
        { key: "contoso", preset: "oidc", name: "Contoso ID", client_id: oidc.clientId, client_secret: { env: "CONTOSO_SECRET" }, issuer: oidc.issuer },
      ],
    },
    { GITHUB_SECRET: github.clientSecret, CONTOSO_SECRET: oidc.clientSecret },
  );
  githubId = await socialProviderIdOf(h, ws, "github");
  oidcId = await socialProviderIdOf(h, ws, "contoso");
});

afterAll(async () => {
  await github?.close();
  await oidc?.close();
});

const startWeb = () => startSignIn(h, ws, { ...WEB, scope: "openid email profile" });

async function viaGithub(user: number): Promise<{ s: PendingSignIn; res: Response }> {
  const s = await startWeb();
  const url = upstreamLocation(await startSocial(h, s, "github"), ws);
  expect(url.origin).toBe(github.origin);
  return { s, res: await deliverCallback(h, s, await github.authorize(url, { user })) };
}

async function viaOidc(account: string): Promise<{ s: PendingSignIn; res: Response }> {
  const s = await startWeb();
  const url = upstreamLocation(await startSocial(h, s, "contoso"), ws);
  expect(url.origin).toBe(oidc.issuer);
  return { s, res: await deliverCallback(h, s, (await oidc.authorize(url, { account })).url) };
}

async function idTokenOf(s: PendingSignIn, res: Response) {
  const o = outcome(res);
  if (o.to !== "callback") throw new Error(`stopped at the page: ${o.error}`);
  const exchanged = await exchangeCode(h, ws, { code: o.code, redirect_uri: WEB.redirect_uri, verifier: s.verifier, authorization: basic(WEB.client_id, WEB.secret) });
  expect(exchanged.status).toBe(200);
  return decodeJwt((await exchanged.json()).id_token);
}

describe("social sign-in", () => {
  it("shows the application's enabled providers, in order; another application offers none", async () => {
    expect((await viewOf(h, await startWeb())).federation.buttons.map((b) => b.key)).toEqual(["github", "contoso"]);
    const spa = await startSignIn(h, ws, { ...SPA });
    expect((await viewOf(h, spa)).federation.buttons).toEqual([]);
    expect(outcome(await startSocial(h, spa, "github"))).toEqual({ to: "page", error: "method_not_allowed" });
    expect(github.hits.get("/login/oauth/authorize") ?? 0).toBe(0);
  });

  it("GitHub: creates the account with the verified primary address, the identity keyed by the numeric id", async () => {
    const { s, res } = await viaGithub(OCTOCAT.id);
    const claims = await idTokenOf(s, res);
    const user = (await userByEmail(h, ws, "octocat@octo.test"))!;
    expect(user).toMatchObject({ emailVerified: true, name: "The Octocat", passwordHash: null });
    expect(await identitiesOf(h, ws, user.id)).toMatchObject([{ issuer: "https://github.com", subject: "583231", socialProviderId: githubId, connectionId: null, emailVerified: true }]);
    expect(claims).toMatchObject({ email: "octocat@octo.test", email_verified: true });
    expect(claims.organization_id).toBeUndefined();
    expect(claims.connection_id).toBeUndefined();
    expect(claims.amr).toContain("fed");
    // The next sign-in is the same account.
    const again = await viaGithub(OCTOCAT.id);
    expect((await idTokenOf(again.s, again.res)).sub).toBe(claims.sub);
    expect(await identitiesOf(h, ws, await userIdOf(h, ws, "octocat@octo.test"))).toHaveLength(1);
  });

  it("GitHub: an unverified primary address creates nothing (federation_email_unverified)", async () => {
    const before = await countsOf(h, ws);
    const { res } = await viaGithub(HUBOT.id);
    await expectHostedError(res, "federation_email_unverified");
    expect(await countsOf(h, ws)).toEqual(before);
    expect(await userByEmail(h, ws, "hubot@octo.test")).toBeNull();
    expect(await userByEmail(h, ws, "hubot-other@octo.test")).toBeNull();
  });

  it("generic OIDC: email_verified true creates the account (identity by the exact iss and sub)", async () => {
    const { s, res } = await viaOidc("verified-1");
    expect((await idTokenOf(s, res)).email).toBe("vera@mail.test");
    const user = (await userByEmail(h, ws, "vera@mail.test"))!;
    expect(user).toMatchObject({ emailVerified: true, name: "Vera" });
    expect(await identitiesOf(h, ws, user.id)).toMatchObject([{ issuer: oidc.issuer, subject: "verified-1", socialProviderId: oidcId }]);
  });

  it("generic OIDC: email_verified false, or the string \"true\", creates nothing (federation_email_unverified); no email at all: federation_no_email", async () => {
    const before = await countsOf(h, ws);
    await expectHostedError((await viaOidc("unverified-2")).res, "federation_email_unverified");
    await expectHostedError((await viaOidc("string-true-3")).res, "federation_email_unverified");
    await expectHostedError((await viaOidc("no-email-4")).res, "federation_no_email");
    expect(await countsOf(h, ws)).toEqual(before);
  });

  it("a provider disabled while the user was upstream: federation_option_unavailable, nothing created", async () => {
    const s = await startWeb();
    const url = upstreamLocation(await startSocial(h, s, "github"), ws);
    const back = await github.authorize(url, { user: OCTOCAT.id });
    await h.service.db.update(socialProviders).set({ enabled: false }).where(eq(socialProviders.id, githubId));
    try {
      const before = await countsOf(h, ws);
      await expectHostedError(await deliverCallback(h, s, back), "federation_option_unavailable");
      expect(await countsOf(h, ws)).toEqual(before);
      expect(outcome(await startSocial(h, await startWeb(), "github"))).toEqual({ to: "page", error: "method_not_allowed" });
    } finally {
      await h.service.db.update(socialProviders).set({ enabled: true }).where(eq(socialProviders.id, githubId));
    }
  });

  it("a provider whose secret is not set yet: the button ends on federation_misconfigured (never a server error), nothing created", async () => {
    await h.service.db.update(socialProviders).set({ secretEncrypted: null }).where(eq(socialProviders.id, githubId));
    try {
      const before = await countsOf(h, ws);
      await expectHostedError(await startSocial(h, await startWeb(), "github"), "federation_misconfigured");
      expect(await countsOf(h, ws)).toEqual(before);
    } finally {
      await h.service.db.update(socialProviders).set({ secretEncrypted: encryptSecret(h.service.config.masterKey, github.clientSecret, socialSecretPurpose(githubId)) }).where(eq(socialProviders.id, githubId));
    }
  });

  it("the user refusing at the provider: federation_denied, nothing created", async () => {
    const before = await countsOf(h, ws);
    const s = await startWeb();
    const url = upstreamLocation(await startSocial(h, s, "github"), ws);
    await expectHostedError(await deliverCallback(h, s, await github.authorize(url, { deny: true })), "federation_denied");
    expect(await countsOf(h, ws)).toEqual(before);
  });

  it("a form-posted callback (response_mode=form_post) becomes the same GET on our origin, where the browser's cookies complete it", async () => {
    const s = await startWeb();
    const url = upstreamLocation(await startSocial(h, s, "contoso"), ws);
    const back = (await oidc.authorize(url, { account: "posted-5" })).url;
    // Cross-site, the SameSite=Lax cookies do not come with the POST.
    const posted = await call(h, `/t/${ws}/federation/callback`, { form: { ...Object.fromEntries(back.searchParams), unexpected: "dropped" } });
    expect(posted.status).toBe(303);
    const location = new URL(posted.headers.get("location")!, PUBLIC_URL);
    expect(location.pathname).toBe(`/t/${ws}/federation/callback`);
    expect([...location.searchParams.keys()].sort()).toEqual([...back.searchParams.keys()].sort());
    expect(await userByEmail(h, ws, "posted@mail.test")).toBeNull();
    expect(outcome(await deliverCallback(h, s, location)).to).toBe("callback");
    expect(await userByEmail(h, ws, "posted@mail.test")).not.toBeNull();
  });

  it("a social session serves only the applications that offer its provider; another one asks for a sign-in", async () => {
    // The SPA offers no provider and accepts passkeys only.
    await setApplicationPolicy(h, ws, SPA.client_id, { firstFactors: ["passkey"] });
    const authorizeWith = async (client: typeof SPA, jar: Jar) => {
      const res = await call(h, `/t/${ws}/oauth2/authorize?${authorizeQuery({ ...client, scope: "openid" }).query}`, { cookie: jar.header() });
      expect(res.status).toBe(303);
      return new URL(res.headers.get("location")!, PUBLIC_URL);
    };
    const { s, res } = await viaOidc("reused-6");
    expect(outcome(res).to).toBe("callback");
    expect((await authorizeWith(WEB, s.jar)).origin).toBe(new URL(WEB.redirect_uri).origin);
    expect((await authorizeWith(SPA, s.jar)).pathname).toBe(`/t/${ws}/sign-in`);
  });
});
