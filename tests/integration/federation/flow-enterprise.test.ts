/**
 * Enterprise sign-in end to end: the downstream workspace's organization signs in through an OIDC
 * connection to a second Latchkey workspace (the identity provider), in the same service. Home-realm
 * discovery sends alice@acme.test upstream; back at the downstream, the account is created just in
 * time with the organization's membership and the connection's default roles, and the tokens carry
 * the organization and the connection; the session stands on both.
 */
import { and, eq } from "drizzle-orm";
import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { organizationMembers, userRoles, users } from "../../../db/schema";
import { pairwiseSubject } from "../../../lib/oauth/subject";
import { ACME, API, authzWorkspace, GLOBEX, WEB } from "../../helpers/fixtures";
import { basic, call, createHarness, exchangeCode, Jar, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { outcome, postPassword, startSignIn, userIdOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { createLatchkeyUpstream, signInUpstream, type LatchkeyUpstream, type UpstreamUser } from "../../helpers/federation/latchkey-upstream";
import { connectionIdOf, countsOf, deliverCallback, expectHostedError, identitiesOf, organizationIdOf, roleIdsOf, seedWithSecrets, setConnection, upstreamLocation, userByEmail } from "../../helpers/federation/setup";

let h: Harness;
const ws = uniqueWorkspaceId("fedent");
let idp: LatchkeyUpstream;
let acme: string;
let globex: string;
let connectionId: string;

const ALICE: UpstreamUser = { email: "alice@acme.test", password: "alice upstream password 1", name: "Alice Upstream" };
const EVE: UpstreamUser = { email: "eve@acme.test", password: "eve upstream password 12", email_verified: false };
const CAROL: UpstreamUser = { email: "carol@acme.test", password: "carol upstream password 1" };
const DAN: UpstreamUser = { email: "dan@acme.test", password: "dan upstream password 123" };
const FRED: UpstreamUser = { email: "fred@acme.test", password: "fred upstream password 12" };
const GINA: UpstreamUser = { email: "gina@acme.test", password: "gina upstream password 12" };
/** An upstream account of acme's identity provider with an address of globex's verified domain. */
const SQUATTER: UpstreamUser = { email: "ceo@globex.test", password: "squatter upstream password" };
const SCOPE = "openid email profile read:things write:things";

beforeAll(async () => {
  h = await createHarness();
  idp = await createLatchkeyUpstream(h, ws, [ALICE, EVE, CAROL, DAN, FRED, GINA, SQUATTER]);
  // The organization's domain and connection as the workspace file states them.
  const doc = authzWorkspace(ws);
  doc.organizations[0] = {
    ...doc.organizations[0],
    domains: [{ domain: "acme.test", verified: true }],
    connections: [{ name: "Acme IdP", issuer: idp.issuer, client_id: idp.clientId, client_secret: { env: "ACME_IDP_SECRET" }, default_roles: ["reader"] }],
  };
  doc.organizations[1] = { ...doc.organizations[1], domains: [{ domain: "globex.test", verified: true }] };
  await seedWithSecrets(h, doc, { ACME_IDP_SECRET: idp.clientSecret });
  acme = await organizationIdOf(h, ws, ACME);
  globex = await organizationIdOf(h, ws, GLOBEX);
  connectionId = await connectionIdOf(h, ws, ACME, "Acme IdP");
});

/** Home-realm discovery from the password form, the upstream's own sign-in, and the callback back in this browser. */
async function throughConnection(user: UpstreamUser, upstreamJar = new Jar()): Promise<{ s: PendingSignIn; res: Response }> {
  const s = await startSignIn(h, ws, { ...WEB, scope: SCOPE, resource: API });
  const upstream = upstreamLocation(await postPassword(h, s, user.email, "not checked here"), ws);
  expect(upstream.href.startsWith(`${idp.issuer}/oauth2/authorize?`)).toBe(true);
  const back = await signInUpstream(h, idp, upstream, user, upstreamJar);
  return { s, res: await deliverCallback(h, s, back) };
}

async function tokensThrough(user: UpstreamUser, upstreamJar?: Jar) {
  const { s, res } = await throughConnection(user, upstreamJar);
  const o = outcome(res);
  if (o.to !== "callback") throw new Error(`the sign-in stopped at the page: ${o.error}`);
  const exchanged = await exchangeCode(h, ws, { code: o.code, redirect_uri: WEB.redirect_uri, verifier: s.verifier, authorization: basic(WEB.client_id, WEB.secret) });
  expect(exchanged.status).toBe(200);
  return (await exchanged.json()) as { access_token: string; refresh_token: string; id_token: string };
}

const bearer = (path: string, token: string) => call(h, `/t/${ws}${path}`, { headers: { authorization: `Bearer ${token}` } });
const introspect = async (token: string) =>
  (await (await call(h, `/t/${ws}/oauth2/introspect`, { form: { token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } })).json()).active;
const refresh = (token: string) => call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });

async function allowed(token: string, permission: string, organizationId: string | null): Promise<boolean> {
  const res = await call(h, `/t/${ws}/authorization/check`, {
    method: "POST",
    body: JSON.stringify({ resource: API, permission, organization_id: organizationId }),
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
  expect(res.status).toBe(200);
  return (await res.json()).allowed;
}

async function expectEnded(t: { access_token: string; refresh_token: string }) {
  expect((await bearer("/oidc/session", t.access_token)).status).toBe(401);
  expect((await bearer("/oidc/userinfo", t.access_token)).status).toBe(401);
  expect(await introspect(t.access_token)).toBe(false);
  expect(await allowed(t.access_token, "read:things", acme)).toBe(false);
  const res = await refresh(t.refresh_token);
  expect(res.status).toBe(400);
  expect((await res.json()).error).toBe("invalid_grant");
}

describe("enterprise sign-in through another Latchkey workspace", () => {
  it("creates the account just in time, with the identity, the membership and the default role; the tokens carry organization and connection", async () => {
    expect(await userByEmail(h, ws, ALICE.email)).toBeNull();
    const t = await tokensThrough(ALICE);

    const user = (await userByEmail(h, ws, ALICE.email))!;
    expect(user).toMatchObject({ email: ALICE.email, emailVerified: true, name: ALICE.name, passwordHash: null, status: "active" });
    const upstreamSub = pairwiseSubject(h.service, idp.workspaceId, idp.clientId, await userIdOf(h, idp.workspaceId, ALICE.email));
    const identities = await identitiesOf(h, ws, user.id);
    expect(identities).toHaveLength(1);
    expect(identities[0]).toMatchObject({ issuer: idp.issuer, subject: upstreamSub, connectionId, socialProviderId: null, email: ALICE.email, emailVerified: true });
    const member = await h.service.db.select().from(organizationMembers).where(and(eq(organizationMembers.workspaceId, ws), eq(organizationMembers.userId, user.id)));
    expect(member.map((m) => m.organizationId)).toEqual([acme]);
    const held = await h.service.db.select().from(userRoles).where(and(eq(userRoles.workspaceId, ws), eq(userRoles.userId, user.id)));
    expect(held.map((r) => [r.roleId, r.organizationId])).toEqual([[(await roleIdsOf(h, ws, ["reader"]))[0], acme]]);

    const claims = decodeJwt(t.id_token);
    expect(claims).toMatchObject({ organization_id: acme, connection_id: connectionId, email: ALICE.email, email_verified: true });
    expect(claims.amr).toContain("fed");
    const info = await bearer("/oidc/userinfo", t.access_token);
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({ sub: claims.sub, organization_id: acme, connection_id: connectionId });
    const check = await bearer("/oidc/session", t.access_token);
    expect(check.status).toBe(200);
    expect(await check.json()).toMatchObject({ active: true, sub: claims.sub });

    // The default role grants read:things in acme, nothing else and nowhere else.
    expect(await allowed(t.access_token, "read:things", acme)).toBe(true);
    expect(await allowed(t.access_token, "write:things", acme)).toBe(false);
    expect(await allowed(t.access_token, "read:things", globex)).toBe(false);
  });

  it("records email_verified as the upstream said (false), the organization's verified domain vouching for the address", async () => {
    const t = await tokensThrough(EVE);
    const user = (await userByEmail(h, ws, EVE.email))!;
    expect(user.emailVerified).toBe(false);
    expect((await identitiesOf(h, ws, user.id))[0]).toMatchObject({ email: EVE.email, emailVerified: false, connectionId });
    expect(decodeJwt(t.id_token)).toMatchObject({ email_verified: false, organization_id: acme });
  });

  it("signs a known identity in again as the same user, without a second account or membership", async () => {
    await tokensThrough(CAROL);
    const before = await countsOf(h, ws);
    const carolId = (await userByEmail(h, ws, CAROL.email))!.id;
    const t = await tokensThrough(CAROL);
    const after = await countsOf(h, ws);
    expect({ users: after.users, identities: after.identities, memberships: after.memberships }).toEqual({ users: before.users, identities: before.identities, memberships: before.memberships });
    expect(decodeJwt(t.id_token).sub).toBe(pairwiseSubject(h.service, ws, WEB.client_id, carolId));
  });

  it("ends the session while the connection is disabled: session check 401, refresh refused; the connection is the single reason", async () => {
    const t = await tokensThrough(ALICE);
    expect((await bearer("/oidc/session", t.access_token)).status).toBe(200);
    await setConnection(h, connectionId, { active: false });
    try {
      await expectEnded(t);
    } finally {
      await setConnection(h, connectionId, { active: true });
    }
    expect((await bearer("/oidc/session", t.access_token)).status).toBe(200);
  });

  it("ends the session when the membership is removed, and the connection then refuses the user (federation_not_member), creating nothing", async () => {
    const t = await tokensThrough(DAN);
    const danId = (await userByEmail(h, ws, DAN.email))!.id;
    expect(await allowed(t.access_token, "read:things", acme)).toBe(true);
    await h.service.db.delete(organizationMembers).where(and(eq(organizationMembers.workspaceId, ws), eq(organizationMembers.organizationId, acme), eq(organizationMembers.userId, danId)));
    await expectEnded(t);

    const before = await countsOf(h, ws);
    const { res } = await throughConnection(DAN);
    await expectHostedError(res, "federation_not_member");
    expect(await countsOf(h, ws)).toEqual(before);
    const member = await h.service.db.select().from(organizationMembers).where(and(eq(organizationMembers.workspaceId, ws), eq(organizationMembers.userId, danId)));
    expect(member).toEqual([]);
  });

  it("refuses a disabled account behind a known identity (federation_account_disabled), creating nothing", async () => {
    await tokensThrough(FRED);
    await h.service.db.update(users).set({ status: "disabled" }).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, FRED.email)));
    const before = await countsOf(h, ws);
    await expectHostedError((await throughConnection(FRED)).res, "federation_account_disabled");
    expect(await countsOf(h, ws)).toEqual(before);
  });

  it("a connection disabled while the user was upstream: federation_option_unavailable, nothing created", async () => {
    const s = await startSignIn(h, ws, { ...WEB, scope: SCOPE, resource: API });
    const back = await signInUpstream(h, idp, upstreamLocation(await postPassword(h, s, GINA.email, "not checked here"), ws), GINA);
    await setConnection(h, connectionId, { active: false });
    try {
      const before = await countsOf(h, ws);
      await expectHostedError(await deliverCallback(h, s, back), "federation_option_unavailable");
      expect(await countsOf(h, ws)).toEqual(before);
    } finally {
      await setConnection(h, connectionId, { active: true });
    }
    expect(await userByEmail(h, ws, GINA.email)).toBeNull();
  });

  it("refuses an address in another organization's verified domain through this organization's connection (federation_domain_of_organization), creating nothing", async () => {
    const before = await countsOf(h, ws);
    const s = await startSignIn(h, ws, { ...WEB, scope: SCOPE, resource: API });
    // Acme's connection, reached with an acme address; upstream, an account with a globex address.
    const back = await signInUpstream(h, idp, upstreamLocation(await postPassword(h, s, "someone@acme.test", "not checked here"), ws), SQUATTER);
    await expectHostedError(await deliverCallback(h, s, back), "federation_domain_of_organization");
    expect(await countsOf(h, ws)).toEqual(before);
    expect(await userByEmail(h, ws, SQUATTER.email)).toBeNull();
  });
});
