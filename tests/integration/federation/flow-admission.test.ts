/**
 * Who an enterprise connection admits, and identities keyed per connection. Two organizations'
 * connections share one upstream issuer (as every Google Workspace connection does), an
 * oidc-provider on loopback. Reached by home-realm discovery (the address typed at the first step
 * picks the connection), the upstream then asserts an account of its own choosing:
 *
 * - under the default rule (`verified_domains`), a vouched address outside the organization's
 *   verified domains is refused and nothing is created;
 * - under `any_vouched`, it is admitted with the connection's default roles;
 * - an identity known through Acme's connection arriving through Globex's is a new admission
 *   decision under Globex's rule: refused, no Globex membership or roles.
 */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizationMembers, userRoles } from "../../../db/schema";
import { ACME, ADA, API, authzWorkspace, BOB, GLOBEX, WEB } from "../../helpers/fixtures";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { outcome, postPassword, startSignIn, viewOf } from "../../helpers/factors/sign-in";
import { startOidcProviderUpstream, type OidcProviderUpstream } from "../../helpers/federation/oidc-provider-upstream";
import {
  addConnection,
  addDomain,
  callbackUrlOf,
  countsOf,
  deliverCallback,
  expectHostedError,
  identitiesOf,
  organizationIdOf,
  roleIdsOf,
  setConnection,
  upstreamLocation,
  userByEmail,
} from "../../helpers/federation/setup";

let h: Harness;
const ws = uniqueWorkspaceId("fedadm");
let upstream: OidcProviderUpstream;
let acme: string;
let globex: string;
let acmeConnection: string;
let globexConnection: string;

const MALLORY = { sub: "mallory-upstream", email: "mallory@gmail.test" };
const ALICE = { sub: "alice-upstream", email: "alice@acme.test" };
/** An address in no organization's verified domain. */
const ERIN = { sub: "erin-upstream", email: "erin@contractor.test" };
/** The addresses of local accounts (outside every verified domain): Ada is a member of Acme and Globex, Bob of Globex only. */
const ADA_UPSTREAM = { sub: "ada-upstream", email: ADA.email };
const BOB_UPSTREAM = { sub: "bob-upstream", email: BOB.email };

beforeAll(async () => {
  h = await createHarness();
  await seed(h, authzWorkspace(ws));
  upstream = await startOidcProviderUpstream({
    redirectUris: [callbackUrlOf(ws)],
    now: () => h.clock.now(),
    accounts: [MALLORY, ALICE, ERIN, ADA_UPSTREAM, BOB_UPSTREAM].map((a) => ({ ...a, email_verified: true })),
  });
  acme = await organizationIdOf(h, ws, ACME);
  globex = await organizationIdOf(h, ws, GLOBEX);
  await addDomain(h, ws, { organization: ACME, domain: "acme.test", verified: true });
  await addDomain(h, ws, { organization: GLOBEX, domain: "globex.test", verified: true });
  const same = { issuer: upstream.issuer, clientId: upstream.clientId, clientSecret: upstream.clientSecret };
  acmeConnection = await addConnection(h, ws, { organization: ACME, name: "Acme Workspace", ...same, defaultRoles: ["admin"] });
  globexConnection = await addConnection(h, ws, { organization: GLOBEX, name: "Globex Workspace", ...same, defaultRoles: ["writer"] });
});

afterAll(async () => {
  await upstream?.close();
});

/** Into `organization`'s connection by typing an address of its domain, then upstream as `sub`. */
async function through(typed: string, sub: string) {
  const s = await startSignIn(h, ws, { ...WEB, scope: "openid email", resource: API });
  const url = upstreamLocation(await postPassword(h, s, typed, "not checked here"), ws);
  expect(url.href.startsWith(upstream.issuer)).toBe(true);
  return { s, res: await deliverCallback(h, s, (await upstream.authorize(url, { account: sub })).url) };
}

async function membershipsOf(userId: string) {
  return h.service.db.select().from(organizationMembers).where(and(eq(organizationMembers.workspaceId, ws), eq(organizationMembers.userId, userId)));
}

async function rolesOf(userId: string) {
  return (await h.service.db.select().from(userRoles).where(and(eq(userRoles.workspaceId, ws), eq(userRoles.userId, userId)))).map((r) => [r.roleId, r.organizationId]);
}

describe("admission through an enterprise connection", () => {
  it("refuses, under the default rule, a vouched address outside the organization's verified domains (federation_not_admitted), creating nothing", async () => {
    const before = await countsOf(h, ws);
    const { res } = await through("someone@acme.test", MALLORY.sub);
    await expectHostedError(res, "federation_not_admitted");
    expect(await countsOf(h, ws)).toEqual(before);
    expect(await userByEmail(h, ws, MALLORY.email)).toBeNull();
  });

  it("refuses the address of an existing local account outside the domains, not a member, before any link prompt (federation_not_admitted)", async () => {
    const before = await countsOf(h, ws);
    await expectHostedError((await through("someone@acme.test", BOB_UPSTREAM.sub)).res, "federation_not_admitted");
    expect(await countsOf(h, ws)).toEqual(before);
  });

  it("admits an address of the organization's verified domain, with the membership (origin sign_in) and the default roles, keyed to this connection", async () => {
    const { res } = await through("alice@acme.test", ALICE.sub);
    expect(outcome(res).to).toBe("callback");
    const alice = (await userByEmail(h, ws, ALICE.email))!;
    expect((await membershipsOf(alice.id)).map((m) => [m.organizationId, m.origin])).toEqual([[acme, "sign_in"]]);
    expect(await rolesOf(alice.id)).toEqual([[(await roleIdsOf(h, ws, ["admin"]))[0], acme]]);
    expect((await identitiesOf(h, ws, alice.id)).map((i) => [i.source, i.issuer, i.subject])).toEqual([[`connection:${acmeConnection}`, upstream.issuer, ALICE.sub]]);
  });

  it("admits any vouched address with the default roles once the organization chose any_vouched", async () => {
    await setConnection(h, acmeConnection, { admission: "any_vouched" });
    const { res } = await through("someone@acme.test", MALLORY.sub);
    expect(outcome(res).to).toBe("callback");
    const mallory = (await userByEmail(h, ws, MALLORY.email))!;
    expect((await membershipsOf(mallory.id)).map((m) => [m.organizationId, m.origin])).toEqual([[acme, "sign_in"]]);
    expect(await rolesOf(mallory.id)).toEqual([[(await roleIdsOf(h, ws, ["admin"]))[0], acme]]);
  });

  it("still refuses, under any_vouched, an address of another organization's verified domain (federation_domain_of_organization)", async () => {
    const before = await countsOf(h, ws);
    // Globex's connection now admits any vouched address; Alice's address is Acme's.
    await setConnection(h, globexConnection, { admission: "any_vouched" });
    try {
      await expectHostedError((await through("someone@globex.test", ALICE.sub)).res, "federation_domain_of_organization");
    } finally {
      await setConnection(h, globexConnection, { admission: "verified_domains" });
    }
    expect(await countsOf(h, ws)).toEqual(before);
  });
});

describe("identities keyed per connection: the same upstream (iss, sub) through another organization's connection", () => {
  it("refuses an Acme employee known through Acme's connection at Globex's (same issuer): no Globex membership, no Globex roles", async () => {
    const alice = (await userByEmail(h, ws, ALICE.email))!;
    const before = await countsOf(h, ws);
    await expectHostedError((await through("someone@globex.test", ALICE.sub)).res, "federation_domain_of_organization");
    expect(await countsOf(h, ws)).toEqual(before);
    expect((await membershipsOf(alice.id)).map((m) => m.organizationId)).toEqual([acme]);
    expect((await rolesOf(alice.id)).filter(([, org]) => org === globex)).toEqual([]);
  });

  it("refuses, under Globex's default rule, someone Acme admitted with an address in nobody's domain (federation_not_admitted)", async () => {
    // Acme admits anyone vouched (set above): Erin joins Acme.
    expect(outcome((await through("someone@acme.test", ERIN.sub)).res).to).toBe("callback");
    const erin = (await userByEmail(h, ws, ERIN.email))!;
    const before = await countsOf(h, ws);
    await expectHostedError((await through("someone@globex.test", ERIN.sub)).res, "federation_not_admitted");
    expect(await countsOf(h, ws)).toEqual(before);
    expect((await membershipsOf(erin.id)).map((m) => m.organizationId)).toEqual([acme]);
    expect((await rolesOf(erin.id)).filter(([, org]) => org === globex)).toEqual([]);
  });

  it("under Globex's any_vouched, the existing account must be proved before anything is linked or joined", async () => {
    const erin = (await userByEmail(h, ws, ERIN.email))!;
    await setConnection(h, globexConnection, { admission: "any_vouched" });
    try {
      const before = await countsOf(h, ws);
      const { s, res } = await through("someone@globex.test", ERIN.sub);
      expect(outcome(res)).toEqual({ to: "page", error: null });
      expect((await viewOf(h, s)).federation.linking).toEqual({ email: ERIN.email, provider: "Globex" });
      expect(await countsOf(h, ws)).toEqual(before);
      expect((await membershipsOf(erin.id)).map((m) => m.organizationId)).toEqual([acme]);
    } finally {
      await setConnection(h, globexConnection, { admission: "verified_domains" });
    }
  });

  it("signs a known identity in through its own connection even after the rule narrows; a removed membership still sticks", async () => {
    await setConnection(h, acmeConnection, { admission: "verified_domains" });
    const mallory = (await userByEmail(h, ws, MALLORY.email))!;
    expect(outcome((await through("someone@acme.test", MALLORY.sub)).res).to).toBe("callback");
    await h.service.db.delete(organizationMembers).where(and(eq(organizationMembers.workspaceId, ws), eq(organizationMembers.userId, mallory.id)));
    const before = await countsOf(h, ws);
    await expectHostedError((await through("someone@acme.test", MALLORY.sub)).res, "federation_not_member");
    expect(await countsOf(h, ws)).toEqual(before);
  });
});

describe("an account an administrator already added to the organization", () => {
  it("is admitted under the default rule whatever its domain, and still must prove the account before the identity is linked", async () => {
    // Ada (ada@example.test, outside Acme's domains) is a member of Acme through the workspace file.
    const ada = (await userByEmail(h, ws, ADA.email))!;
    const before = await countsOf(h, ws);
    const { s, res } = await through("someone@acme.test", ADA_UPSTREAM.sub);
    expect(outcome(res)).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).federation.linking).toEqual({ email: ADA.email, provider: "Acme" });
    expect(await countsOf(h, ws)).toEqual(before);
    expect(await identitiesOf(h, ws, ada.id)).toEqual([]);
  });
});
