/**
 * Home-realm discovery: an address in a domain an organization verified goes to its connection
 * from the password form (no password is checked, whether or not an account has the address), the
 * email-code form and the single sign-on form; an address in a domain only claimed, not verified,
 * stays with the local sign-in.
 */
import { and, eq } from "drizzle-orm";
import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { organizationMembers, organizations } from "../../../db/schema";
import { ACME, authzWorkspace, SPA, WEB } from "../../helpers/fixtures";
import { basic, createHarness, exchangeCode, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { OUTBOX, outboxFor } from "../../helpers/factors/email";
import { outcome, postPassword, postStep, startSignIn, userIdOf, viewOf } from "../../helpers/factors/sign-in";
import { postPasskey, SoftAuthenticator } from "../../helpers/factors/webauthn";
import { createLatchkeyUpstream, signInUpstream, type LatchkeyUpstream } from "../../helpers/federation/latchkey-upstream";
import { addConnection, addDomain, countsOf, deliverCallback, identitiesOf, organizationIdOf, setApplicationPolicy, setConnection, upstreamLocation } from "../../helpers/federation/setup";

let h: Harness;
const ws = uniqueWorkspaceId("fedhrd");
let idp: LatchkeyUpstream;
let connectionId: string;

/** A local account in the verified domain, with a password of its own. */
const LOCAL_ALICE = { email: "alice@acme.test", password: "alice's local password 1" };
/** Another local account of the verified domain, with a password from before single sign-on. */
const FORMER = { email: "former@acme.test", password: "a password from before sso" };
/** A local account in a domain acme only claimed. */
const PENDING = { email: "pat@pending.test", password: "pat's local password 12" };
const UPSTREAM_ALICE = { email: "alice@acme.test", password: "alice's upstream password" };

beforeAll(async () => {
  // Two password failures per account and address: a password checked locally would soon be refused.
  h = await createHarness({ mail: OUTBOX, rateLimits: { requestsPerMinute: 100_000, failuresPer5Minutes: 2 } });
  const doc = authzWorkspace(ws);
  doc.users.push({ email: LOCAL_ALICE.email, password: LOCAL_ALICE.password, email_verified: true }, { email: PENDING.email, password: PENDING.password, email_verified: true }, { email: FORMER.email, password: FORMER.password, email_verified: true });
  await seed(h, doc);
  idp = await createLatchkeyUpstream(h, ws, [UPSTREAM_ALICE]);
  connectionId = await addConnection(h, ws, { organization: ACME, issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret });
  await addDomain(h, ws, { organization: ACME, domain: "acme.test", verified: true });
  await addDomain(h, ws, { organization: ACME, domain: "pending.test", verified: false });
});

const startWeb = () => startSignIn(h, ws, { ...WEB, scope: "openid email" });

/** Where the connection's upstream asks the user to sign in. */
function expectUpstream(res: Response): URL {
  const url = upstreamLocation(res, ws);
  expect(url.origin + url.pathname).toBe(`${idp.issuer}/oauth2/authorize`);
  expect(url.searchParams.get("client_id")).toBe(idp.clientId);
  expect(url.searchParams.get("redirect_uri")).toBe(`https://auth.example.test/t/${ws}/federation/callback`);
  return url;
}

describe("home-realm discovery", () => {
  it("offers single sign-on on the first step while a verified domain has an enabled connection", async () => {
    expect((await viewOf(h, await startWeb())).federation.sso).toBe(true);
    await setConnection(h, connectionId, { active: false });
    try {
      expect((await viewOf(h, await startWeb())).federation.sso).toBe(false);
    } finally {
      await setConnection(h, connectionId, { active: true });
    }
  });

  it("does not offer single sign-on while the only organization with a verified domain is deactivated", async () => {
    const acme = await organizationIdOf(h, ws, ACME);
    await h.service.db.update(organizations).set({ active: false }).where(eq(organizations.id, acme));
    try {
      const s = await startWeb();
      expect((await viewOf(h, s)).federation.sso).toBe(false);
      expect(outcome(await postStep(h, s, "/sign-in/sso", { email: "someone@acme.test" }))).toEqual({ to: "page", error: "sso_not_configured" });
    } finally {
      await h.service.db.update(organizations).set({ active: true }).where(eq(organizations.id, acme));
    }
  });

  it("sends the password form of a verified-domain address upstream without checking the password (right, wrong, or no account)", async () => {
    const before = await countsOf(h, ws);
    for (const [email, password] of [
      [LOCAL_ALICE.email, LOCAL_ALICE.password],
      [LOCAL_ALICE.email, "a wrong password entirely"],
      [LOCAL_ALICE.email, "a second wrong password"],
      [LOCAL_ALICE.email, "a third wrong password!"],
      ["ALICE@Acme.Test", "another wrong password"],
      ["nobody-here@acme.test", "no account has this address"],
    ]) {
      const s = await startWeb();
      const res = await postPassword(h, s, email!, password!);
      expectUpstream(res);
      // Nothing signed in locally: no session cookie, no code.
      expect(res.headers.getSetCookie().filter((c) => c.startsWith("lk_session="))).toEqual([]);
    }
    expect(await countsOf(h, ws)).toEqual(before);
  });

  it("sends a verified-domain account's own passkey upstream too (no local session), and keeps a claimed-only domain's passkey local", async () => {
    const alice = new SoftAuthenticator();
    await alice.enrol(h, ws, await userIdOf(h, ws, LOCAL_ALICE.email), "passkey");
    const before = await countsOf(h, ws);
    expectUpstream(await postPasskey(h, await startWeb(), alice));
    expect(await countsOf(h, ws)).toEqual(before);
    const pat = new SoftAuthenticator();
    await pat.enrol(h, ws, await userIdOf(h, ws, PENDING.email), "passkey");
    expect(outcome(await postPasskey(h, await startWeb(), pat)).to).toBe("callback");
  });

  it("keeps an address of a domain that is only claimed (not verified) with the local sign-in", async () => {
    const wrong = await postPassword(h, await startWeb(), PENDING.email, "a wrong password entirely");
    expect(outcome(wrong)).toEqual({ to: "page", error: "invalid_credentials" });
    const right = outcome(await postPassword(h, await startWeb(), PENDING.email, PENDING.password));
    expect(right.to).toBe("callback");
  });

  it("keeps a verified-domain address local while the organization's only connection is disabled", async () => {
    await setConnection(h, connectionId, { active: false });
    try {
      const o = outcome(await postPassword(h, await startWeb(), LOCAL_ALICE.email, LOCAL_ALICE.password));
      expect(o.to).toBe("callback");
    } finally {
      await setConnection(h, connectionId, { active: true });
    }
  });

  it("sends the email-code form of a verified-domain address upstream and sends no code", async () => {
    const s = await startWeb();
    expectUpstream(await postStep(h, s, "/sign-in/email", { email: LOCAL_ALICE.email }));
    expect(await outboxFor(h, ws, LOCAL_ALICE.email)).toEqual([]);
    // The claimed-only domain gets its code as usual.
    const other = await startWeb();
    expect(outcome(await postStep(h, other, "/sign-in/email", { email: PENDING.email }))).toEqual({ to: "page", error: null });
    expect(await outboxFor(h, ws, PENDING.email)).toHaveLength(1);
  });

  it("sends the sign-up form of a verified-domain address upstream (its account comes from the connection) and sends no code", async () => {
    await setApplicationPolicy(h, ws, SPA.client_id, { signUp: true });
    const s = await startSignIn(h, ws, { ...SPA });
    expectUpstream(await postStep(h, s, "/sign-up/email", { email: "newcomer@acme.test" }));
    expect(await outboxFor(h, ws, "newcomer@acme.test")).toEqual([]);
    const other = await startSignIn(h, ws, { ...SPA });
    expect(outcome(await postStep(h, other, "/sign-up/email", { email: "newcomer@pending.test" }))).toEqual({ to: "page", error: null });
    expect(await outboxFor(h, ws, "newcomer@pending.test")).toHaveLength(1);
  });

  it("the single sign-on form: a verified domain goes upstream; a claimed-only or unknown domain and a malformed address stay, with their message", async () => {
    expectUpstream(await postStep(h, await startWeb(), "/sign-in/sso", { email: "Someone@ACME.test" }));
    expect(outcome(await postStep(h, await startWeb(), "/sign-in/sso", { email: PENDING.email }))).toEqual({ to: "page", error: "sso_not_configured" });
    expect(outcome(await postStep(h, await startWeb(), "/sign-in/sso", { email: "x@globex.test" }))).toEqual({ to: "page", error: "sso_not_configured" });
    expect(outcome(await postStep(h, await startWeb(), "/sign-in/sso", { email: "not an address" }))).toEqual({ to: "page", error: "invalid_email" });
  });

  it("completes through the upstream: the local account with the address is not signed in by its email alone (link prompt)", async () => {
    const s = await startWeb();
    const back = await signInUpstream(h, idp, expectUpstream(await postPassword(h, s, LOCAL_ALICE.email, "whatever")), UPSTREAM_ALICE);
    const o = outcome(await deliverCallback(h, s, back));
    expect(o).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).federation.linking).toEqual({ email: LOCAL_ALICE.email, provider: "Acme" });
    // While linking, another address of the verified domain still goes to the connection, its password unchecked.
    expectUpstream(await postPassword(h, s, FORMER.email, FORMER.password));
    expectUpstream(await postStep(h, s, "/sign-in/email", { email: FORMER.email }));
    expect(await outboxFor(h, ws, FORMER.email)).toEqual([]);
    expect((await viewOf(h, s)).federation.linking).toEqual({ email: LOCAL_ALICE.email, provider: "Acme" });
    // Only the account being linked skips home-realm discovery: the password form proves it.
    const proved = outcome(await postPassword(h, s, LOCAL_ALICE.email, LOCAL_ALICE.password));
    if (proved.to !== "callback") throw new Error(`not completed: ${proved.error}`);
    // Linked through the connection: the account joins the organization and the tokens carry it.
    const exchanged = await exchangeCode(h, ws, { code: proved.code, redirect_uri: WEB.redirect_uri, verifier: s.verifier, authorization: basic(WEB.client_id, WEB.secret) });
    const claims = decodeJwt((await exchanged.json()).id_token);
    expect(claims).toMatchObject({ organization_id: await organizationIdOf(h, ws, ACME), connection_id: connectionId });
    expect(claims.amr).toEqual(expect.arrayContaining(["pwd", "fed"]));
    const aliceId = await userIdOf(h, ws, LOCAL_ALICE.email);
    expect(await identitiesOf(h, ws, aliceId)).toMatchObject([{ issuer: idp.issuer, connectionId }]);
    const member = await h.service.db.select().from(organizationMembers).where(and(eq(organizationMembers.workspaceId, ws), eq(organizationMembers.userId, aliceId)));
    expect(member).toHaveLength(1);
  });
});
