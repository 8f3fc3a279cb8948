/**
 * The application's policy applies on top of a federated sign-in: with MFA required, an enterprise
 * sign-in counts as one factor and the user is asked for a second one; only a connection that
 * trusts its upstream's MFA, with an upstream `amr` containing "mfa", completes it alone. The
 * upstream is oidc-provider on loopback, which lets each sign-in choose its `amr`.
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACME, authzWorkspace, WEB } from "../../helpers/fixtures";
import { basic, createHarness, exchangeCode, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { outcome, postStep, startSignIn, viewOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { codeAt, giveTotp } from "../../helpers/factors/totp";
import { startOidcProviderUpstream, type OidcProviderUpstream } from "../../helpers/federation/oidc-provider-upstream";
import { addConnection, addDomain, callbackUrlOf, countsOf, deliverCallback, setApplicationPolicy, setConnection, upstreamLocation } from "../../helpers/federation/setup";

let h: Harness;
const ws = uniqueWorkspaceId("fedmfa");
let upstream: OidcProviderUpstream;
let connectionId: string;

const account = (name: string) => ({ sub: `${name}-sub`, email: `${name}@acme.test`, email_verified: true, name });
const NAMES = ["untrusted", "trusted", "trustedpwd", "totp"];

beforeAll(async () => {
  h = await createHarness();
  await seed(h, authzWorkspace(ws));
  upstream = await startOidcProviderUpstream({ redirectUris: [callbackUrlOf(ws)], accounts: NAMES.map(account), now: () => h.clock.now() });
  connectionId = await addConnection(h, ws, { organization: ACME, issuer: upstream.issuer, clientId: upstream.clientId, clientSecret: upstream.clientSecret });
  await addDomain(h, ws, { organization: ACME, domain: "acme.test", verified: true });
  await setApplicationPolicy(h, ws, WEB.client_id, { mfa: "required" });
});

afterAll(async () => {
  await upstream?.close();
});

/** Single sign-on by address, the upstream signing `name` in with `amr`, and the callback in this browser. */
async function federated(name: string, amr: string[]): Promise<{ s: PendingSignIn; res: Response }> {
  const s = await startSignIn(h, ws, { ...WEB, scope: "openid email" });
  const url = upstreamLocation(await postStep(h, s, "/sign-in/sso", { email: account(name).email }), ws);
  const delivered = await upstream.authorize(url, { account: account(name).sub, amr });
  return { s, res: await deliverCallback(h, s, delivered.url) };
}

async function idTokenOf(s: PendingSignIn, code: string) {
  const res = await exchangeCode(h, ws, { code, redirect_uri: WEB.redirect_uri, verifier: s.verifier, authorization: basic(WEB.client_id, WEB.secret) });
  expect(res.status).toBe(200);
  return decodeJwt((await res.json()).id_token);
}

describe("MFA required, over a federated sign-in", () => {
  it("asks for a second factor when the connection does not trust the upstream's MFA, even with amr mfa; no session, no code yet", async () => {
    const before = await countsOf(h, ws);
    const { s, res } = await federated("untrusted", ["pwd", "otp", "mfa"]);
    expect(outcome(res)).toEqual({ to: "page", error: null });
    expect(res.headers.getSetCookie().filter((c) => c.startsWith("lk_session="))).toEqual([]);
    // A just-created account has no second factor: it enrols one before the sign-in completes.
    expect((await viewOf(h, s)).step).toEqual({ kind: "enroll_second_factor", options: ["totp", "security_key", "passkey"] });
    const after = await countsOf(h, ws);
    expect({ sessions: after.sessions, codes: after.codes }).toEqual({ sessions: before.sessions, codes: before.codes });
  });

  it("completes with the trusted upstream's MFA alone; amr says fed and mfa", async () => {
    await setConnection(h, connectionId, { trustUpstreamMfa: true });
    try {
      const { s, res } = await federated("trusted", ["pwd", "otp", "mfa"]);
      const o = outcome(res);
      if (o.to !== "callback") throw new Error(`stopped at the page: ${o.error}`);
      const claims = await idTokenOf(s, o.code);
      expect(claims.amr).toEqual(expect.arrayContaining(["fed", "mfa"]));
    } finally {
      await setConnection(h, connectionId, { trustUpstreamMfa: false });
    }
  });

  it("asks for a second factor when the trusted upstream's amr does not say mfa", async () => {
    await setConnection(h, connectionId, { trustUpstreamMfa: true });
    try {
      const { s, res } = await federated("trustedpwd", ["pwd"]);
      expect(outcome(res)).toEqual({ to: "page", error: null });
      expect((await viewOf(h, s)).step.kind).toBe("enroll_second_factor");
    } finally {
      await setConnection(h, connectionId, { trustUpstreamMfa: false });
    }
  });

  it("a user with an authenticator app: the federated sign-in, then the code; amr has fed, otp and mfa", async () => {
    // First sign-in creates the account (it stops at the enrolment); then it gets an authenticator app.
    await federated("totp", ["pwd"]);
    const { seed: totpSeed } = await giveTotp(h, ws, account("totp").email);
    h.clock.advance(30_000);
    const { s, res } = await federated("totp", ["pwd"]);
    expect(outcome(res)).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).step).toEqual({ kind: "second_factor", options: ["totp"] });
    const o = outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, totpSeed) }));
    if (o.to !== "callback") throw new Error(`refused: ${o.error}`);
    expect((await idTokenOf(s, o.code)).amr).toEqual(expect.arrayContaining(["fed", "otp", "mfa"]));
  });
});
