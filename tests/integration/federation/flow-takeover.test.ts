/**
 * Account takeover by email: an upstream asserting (even verifiedly) the address of an existing
 * local account gets no session and no tokens for it. The sign-in asks the user to prove the local
 * account; only then is the upstream identity linked, and later upstream sign-ins go straight in.
 * Cancelling, failing the proof, or proving another account links nothing.
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADA, authzWorkspace, BOB, WEB } from "../../helpers/fixtures";
import { basic, createHarness, exchangeCode, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { outcome, postPassword, postStep, startSignIn, userIdOf, viewOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { startOidcProviderUpstream, type OidcProviderUpstream } from "../../helpers/federation/oidc-provider-upstream";
import { pairwiseSubject } from "../../../lib/oauth/subject";
import { addSocialProvider, setApplicationPolicy, callbackUrlOf, countsOf, deliverCallback, identitiesOf, startSocial, upstreamLocation } from "../../helpers/federation/setup";

let h: Harness;
const ws = uniqueWorkspaceId("fedlink");
let upstream: OidcProviderUpstream;

const CAROL = { email: "carol@example.test", password: "carol's local password!" };
const DAVE = { email: "dave@example.test", password: "dave's local password!!" };
const ERIN = { email: "erin@example.test", password: "erin's local password!!" };

beforeAll(async () => {
  h = await createHarness();
  const doc = authzWorkspace(ws);
  doc.users.push({ email: CAROL.email, password: CAROL.password, email_verified: true });
  doc.users.push({ email: DAVE.email, password: DAVE.password, email_verified: true });
  doc.users.push({ email: ERIN.email, password: ERIN.password, email_verified: true });
  await seed(h, doc);
  upstream = await startOidcProviderUpstream({
    redirectUris: [callbackUrlOf(ws)],
    now: () => h.clock.now(),
    accounts: [
      { sub: "ada-upstream", email: ADA.email, email_verified: true, name: "Ada elsewhere" },
      { sub: "bob-upstream", email: BOB.email, email_verified: true },
      { sub: "carol-upstream", email: CAROL.email, email_verified: true },
      { sub: "dave-upstream", email: DAVE.email, email_verified: true },
      // Another spelling of Erin's address: upper case, and the domain's trailing dot.
      { sub: "erin-upstream", email: "ERIN@Example.test.", email_verified: true },
    ],
  });
  await addSocialProvider(h, ws, { key: "contoso", preset: "oidc", name: "Contoso ID", clientId: upstream.clientId, clientSecret: upstream.clientSecret, config: { issuer: upstream.issuer }, applications: [WEB.client_id] });
});

afterAll(async () => {
  await upstream?.close();
});

async function viaUpstream(sub: string): Promise<{ s: PendingSignIn; res: Response }> {
  const s = await startSignIn(h, ws, { ...WEB, scope: "openid email" });
  const url = upstreamLocation(await startSocial(h, s, "contoso"), ws);
  return { s, res: await deliverCallback(h, s, (await upstream.authorize(url, { account: sub })).url) };
}

async function idTokenOf(s: PendingSignIn, res: Response) {
  const o = outcome(res);
  if (o.to !== "callback") throw new Error(`stopped at the page: ${o.error}`);
  const exchanged = await exchangeCode(h, ws, { code: o.code, redirect_uri: WEB.redirect_uri, verifier: s.verifier, authorization: basic(WEB.client_id, WEB.secret) });
  expect(exchanged.status).toBe(200);
  return decodeJwt((await exchanged.json()).id_token);
}

/** The link prompt: back on the sign-in page, the upstream identity waiting, nothing issued or linked. */
async function expectLinkPrompt(s: PendingSignIn, res: Response, email: string) {
  expect(outcome(res)).toEqual({ to: "page", error: null });
  expect(res.headers.getSetCookie().filter((c) => c.startsWith("lk_session="))).toEqual([]);
  const view = await viewOf(h, s);
  expect(view.step.kind).toBe("first_factor");
  expect(view.federation).toEqual({ buttons: [], sso: false, linking: { email, provider: "Contoso ID" } });
}

describe("an upstream asserting the email of a local account", () => {
  it("gets the link prompt, not the account: no session, no code, nothing linked; the password links it; the next upstream sign-in goes straight in", async () => {
    const adaId = await userIdOf(h, ws, ADA.email);
    const before = await countsOf(h, ws);
    const { s, res } = await viaUpstream("ada-upstream");
    await expectLinkPrompt(s, res, ADA.email);
    expect(await countsOf(h, ws)).toEqual(before);

    // A wrong password links nothing and keeps the prompt.
    expect(outcome(await postPassword(h, s, ADA.email, "not Ada's password"))).toEqual({ to: "page", error: "invalid_credentials" });
    expect(await identitiesOf(h, ws, adaId)).toEqual([]);
    expect((await viewOf(h, s)).federation.linking).toEqual({ email: ADA.email, provider: "Contoso ID" });

    const claims = await idTokenOf(s, await postPassword(h, s, ADA.email, ADA.password));
    expect(claims.sub).toBe(pairwiseSubject(h.service, ws, WEB.client_id, adaId));
    expect(claims.amr).toEqual(expect.arrayContaining(["pwd", "fed"]));
    expect(await identitiesOf(h, ws, adaId)).toMatchObject([{ issuer: upstream.issuer, subject: "ada-upstream", email: ADA.email }]);

    const next = await viaUpstream("ada-upstream");
    expect((await idTokenOf(next.s, next.res)).sub).toBe(claims.sub);
    expect(await identitiesOf(h, ws, adaId)).toHaveLength(1);
  });

  it("cancelling the link leaves nothing linked; the local sign-in afterwards links nothing either", async () => {
    const bobId = await userIdOf(h, ws, BOB.email);
    const { s, res } = await viaUpstream("bob-upstream");
    await expectLinkPrompt(s, res, BOB.email);
    expect(outcome(await postStep(h, s, "/sign-in/federation/cancel"))).toEqual({ to: "page", error: null });
    const view = await viewOf(h, s);
    expect(view.federation.linking).toBeNull();
    expect(view.federation.buttons.map((b) => b.key)).toEqual(["contoso"]);
    expect((await idTokenOf(s, await postPassword(h, s, BOB.email, BOB.password))).sub).toBe(pairwiseSubject(h.service, ws, WEB.client_id, bobId));
    expect(await identitiesOf(h, ws, bobId)).toEqual([]);
    // Still not linked: the upstream gets the prompt again.
    const again = await viaUpstream("bob-upstream");
    await expectLinkPrompt(again.s, again.res, BOB.email);
  });

  it("links only once the account's own policy is met: with MFA required, the password alone links nothing, and the upstream's MFA does not count", async () => {
    await setApplicationPolicy(h, ws, WEB.client_id, { mfa: "required" });
    try {
      const daveId = await userIdOf(h, ws, DAVE.email);
      const { s, res } = await viaUpstream("dave-upstream");
      await expectLinkPrompt(s, res, DAVE.email);
      // The password is proved; Dave has no second factor, so the sign-in asks to enrol one. Abandoned here.
      expect(outcome(await postPassword(h, s, DAVE.email, DAVE.password))).toEqual({ to: "page", error: null });
      expect((await viewOf(h, s)).step.kind).toBe("enroll_second_factor");
      expect(await identitiesOf(h, ws, daveId)).toEqual([]);
      // The upstream again: still only the prompt (nothing was linked, no session exists).
      const again = await viaUpstream("dave-upstream");
      await expectLinkPrompt(again.s, again.res, DAVE.email);
    } finally {
      await setApplicationPolicy(h, ws, WEB.client_id, {});
    }
  });

  it("proving another account instead signs that account in and links nothing to either", async () => {
    const carolId = await userIdOf(h, ws, CAROL.email);
    const adaId = await userIdOf(h, ws, ADA.email);
    const adaIdentities = (await identitiesOf(h, ws, adaId)).length;
    const { s, res } = await viaUpstream("carol-upstream");
    await expectLinkPrompt(s, res, CAROL.email);
    const claims = await idTokenOf(s, await postPassword(h, s, ADA.email, ADA.password));
    expect(claims.sub).toBe(pairwiseSubject(h.service, ws, WEB.client_id, adaId));
    expect(claims.amr).not.toContain("fed");
    expect(await identitiesOf(h, ws, carolId)).toEqual([]);
    expect(await identitiesOf(h, ws, adaId)).toHaveLength(adaIdentities);
  });

  it("another spelling of the address (upper case, the domain's trailing dot) is the same account: the link prompt, no second account", async () => {
    const erinId = await userIdOf(h, ws, ERIN.email);
    const before = await countsOf(h, ws);
    const { s, res } = await viaUpstream("erin-upstream");
    await expectLinkPrompt(s, res, "ERIN@Example.test");
    expect(await countsOf(h, ws)).toEqual(before);
    const claims = await idTokenOf(s, await postPassword(h, s, ERIN.email, ERIN.password));
    expect(claims.sub).toBe(pairwiseSubject(h.service, ws, WEB.client_id, erinId));
    expect(await identitiesOf(h, ws, erinId)).toMatchObject([{ subject: "erin-upstream" }]);
    expect((await countsOf(h, ws)).users).toBe(before.users);
  });
});
