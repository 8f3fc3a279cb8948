/**
 * A provisioned user signs in through the organization's connection (an OIDC connection to a
 * second Latchkey workspace) as the account the directory created: matched by the subject the
 * directory sent, not by the address. The directory's deactivation ends that live session at once;
 * its groups give roles the permission check reads. An account the directory manages does not
 * sign in any other way unless the directory allows it.
 */
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { roles, scimDirectories, users } from "../../../db/schema";
import { hashPassword } from "../../../lib/authn/password";
import { pairwiseSubject } from "../../../lib/oauth/subject";
import { ACME, ADA, API, authzWorkspace, WEB } from "../../helpers/fixtures";
import { basic, call, createHarness, exchangeCode, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { outcome, postPassword, startSignIn, userIdOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { createLatchkeyUpstream, signInUpstream, type LatchkeyUpstream, type UpstreamUser } from "../../helpers/federation/latchkey-upstream";
import { connectionIdOf, deliverCallback, organizationIdOf, seedWithSecrets, upstreamLocation, userByEmail } from "../../helpers/federation/setup";
import { directoryWithToken, json, scimClient, type ScimClient } from "./helpers";

let h: Harness;
const ws = uniqueWorkspaceId("scims");
let idp: LatchkeyUpstream;
let acme: string;
let directoryId: string;
let scim: ScimClient;
const JANE: UpstreamUser = { email: "jane@acme.test", password: "jane upstream password 12", name: "Jane Upstream" };
const KIM: UpstreamUser = { email: "kim@acme.test", password: "kim upstream password 123" };
const SCOPE = "openid email profile read:things write:things";
const PATCH = ["urn:ietf:params:scim:api:messages:2.0:PatchOp"];

beforeAll(async () => {
  h = await createHarness();
  idp = await createLatchkeyUpstream(h, ws, [JANE, KIM]);
  const doc = authzWorkspace(ws);
  doc.organizations[0] = {
    ...doc.organizations[0],
    domains: [{ domain: "acme.test", verified: true }],
    connections: [{ name: "Acme IdP", issuer: idp.issuer, client_id: idp.clientId, client_secret: { env: "ACME_IDP_SECRET" } }],
  };
  await seedWithSecrets(h, doc, { ACME_IDP_SECRET: idp.clientSecret });
  acme = await organizationIdOf(h, ws, ACME);
  const connectionId = await connectionIdOf(h, ws, ACME, "Acme IdP");
  const writer = (await h.service.db.select().from(roles).where(eq(roles.workspaceId, ws))).find((r) => r.name === "writer")!.id;
  const made = await directoryWithToken(h, ws, acme, { connectionId, subjectAttribute: "externalId", groupRoles: [{ group: "Writers", roleIds: [writer] }] });
  directoryId = made.directory.id;
  scim = scimClient(h, ws, ACME, made.token);
});

/** The subject the upstream gives its user for this workspace's connection (what an identity provider's directory sends as externalId). */
const upstreamSubject = async (user: UpstreamUser) => pairwiseSubject(h.service, idp.workspaceId, idp.clientId, await userIdOf(h, idp.workspaceId, user.email));

async function throughConnection(user: UpstreamUser): Promise<{ s: PendingSignIn; res: Response }> {
  const s = await startSignIn(h, ws, { ...WEB, scope: SCOPE, resource: API });
  const upstream = upstreamLocation(await postPassword(h, s, user.email, "not checked here"), ws);
  const back = await signInUpstream(h, idp, upstream, user);
  return { s, res: await deliverCallback(h, s, back) };
}

async function tokensThrough(user: UpstreamUser) {
  const { s, res } = await throughConnection(user);
  const o = outcome(res);
  if (o.to !== "callback") throw new Error(`the sign-in stopped at the page: ${o.error}`);
  const exchanged = await exchangeCode(h, ws, { code: o.code, redirect_uri: WEB.redirect_uri, verifier: s.verifier, authorization: basic(WEB.client_id, WEB.secret) });
  expect(exchanged.status).toBe(200);
  return (await exchanged.json()) as { access_token: string; refresh_token: string };
}

const sessionCheck = (token: string) => call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${token}` } });
async function allowed(token: string, permission: string): Promise<boolean> {
  const res = await call(h, `/t/${ws}/authorization/check`, {
    method: "POST",
    body: JSON.stringify({ resource: API, permission, organization_id: acme }),
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
  return res.status === 200 && (await res.json()).allowed === true;
}

describe("a provisioned user signing in through the organization's connection", () => {
  let jane: Record<string, any>;
  let tokens: { access_token: string; refresh_token: string };

  it("is the account the directory created, found by the subject the directory sent", async () => {
    jane = await json(await scim("POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: JANE.email, externalId: await upstreamSubject(JANE), name: { givenName: "Jane", familyName: "Doe" } }));
    const created = (await userByEmail(h, ws, JANE.email))!;
    tokens = await tokensThrough(JANE);
    expect(await userByEmail(h, ws, JANE.email)).toMatchObject({ id: created.id });
    const check = await sessionCheck(tokens.access_token);
    expect(await check.json()).toMatchObject({ active: true });
  });

  it("gets the roles its directory groups give, read by the permission check", async () => {
    expect(await allowed(tokens.access_token, "write:things")).toBe(false);
    const group = await json(await scim("POST", "/Groups", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "Writers", members: [{ value: jane.id }] }));
    // A token's permissions are what the user held when it was issued, each checked again at use.
    tokens = await tokensThrough(JANE);
    expect(await allowed(tokens.access_token, "write:things")).toBe(true);
    await scim("PATCH", `/Groups/${group.id}`, { schemas: PATCH, Operations: [{ op: "Remove", path: "members", value: [{ value: jane.id }] }] });
    expect(await allowed(tokens.access_token, "write:things")).toBe(false);
  });

  it("loses the live session within a second of the directory's deactivation, and cannot sign in again", async () => {
    const started = Date.now();
    const res = await scim("PATCH", `/Users/${jane.id}`, { schemas: PATCH, Operations: [{ op: "Replace", path: "active", value: "False" }] });
    expect(res.status).toBe(200);
    const check = await sessionCheck(tokens.access_token);
    const elapsed = Date.now() - started;
    expect(check.status === 401 || (await check.json()).active === false).toBe(true);
    expect(elapsed).toBeLessThan(1000);
    const refresh = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });
    expect(refresh.status).toBe(400);
    // The connection refuses an identity whose membership was removed: the hosted error page.
    expect((await throughConnection(JANE)).res.status).toBe(403);
    // Reactivated, the same account signs in again.
    await scim("PATCH", `/Users/${jane.id}`, { schemas: PATCH, Operations: [{ op: "replace", value: { active: true } }] });
    const back = await tokensThrough(JANE);
    expect(await (await sessionCheck(back.access_token)).json()).toMatchObject({ active: true });
  });
});

describe("an account the directory manages, signing in another way", () => {
  it("is refused a password sign-in (its form says to use single sign-on) unless the directory allows local sign-in; an account it did not create is not", async () => {
    // A contractor's address outside the verified domains (the directory allows any): home-realm discovery does not send it upstream.
    await h.service.db.update(scimDirectories).set({ anyDomain: true }).where(eq(scimDirectories.id, directoryId));
    await scim("POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "kim@contractor.test", externalId: await upstreamSubject(KIM) });
    const kim = (await userByEmail(h, ws, "kim@contractor.test"))!;
    // A password the account got by other means (the portal, a reset) does not open it.
    await h.service.db.update(users).set({ passwordHash: await hashPassword("kim local password 1234") }).where(eq(users.id, kim.id));
    const refused = outcome(await postPassword(h, await startSignIn(h, ws, { ...WEB, scope: "openid" }), "kim@contractor.test", "kim local password 1234"));
    expect(refused).toEqual({ to: "page", error: "organization_sign_in" });
    await h.service.db.update(scimDirectories).set({ localSignIn: true }).where(eq(scimDirectories.id, directoryId));
    const allowedNow = outcome(await postPassword(h, await startSignIn(h, ws, { ...WEB, scope: "openid" }), "kim@contractor.test", "kim local password 1234"));
    expect(allowedNow.to).toBe("callback");
    await h.service.db.update(scimDirectories).set({ localSignIn: false, anyDomain: false }).where(eq(scimDirectories.id, directoryId));
    // Ada's own account (not the directory's) signs in with her password as before.
    expect(outcome(await postPassword(h, await startSignIn(h, ws, { ...WEB, scope: "openid" }), ADA.email, ADA.password)).to).toBe("callback");
  });
});
