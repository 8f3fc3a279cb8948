/**
 * One change, one audit event: every console operation in the registry, run as the server action
 * runs it (runOperation), writes exactly one event, `console.<name>`; what the lib function it
 * calls would have recorded on its own (authz.user_role.assigned, …) is folded into that event's
 * `data.effects`, while the same function called outside the console still writes its own event.
 */
import { and, eq, gt, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { apis, auditEvents, enterpriseConnections, federatedIdentities, clients, clientSecrets, grants, hostedSessions, operatorInvitations, operatorMemberships, organizationDomains, organizations, roles, scimTokens, socialProviders, users, organizationInvitations, organizationPortalLinks } from "../../../db/schema";
import { recordAudit } from "../../../lib/audit/events";
import { removeUserRole } from "../../../lib/authz/model";
import { generateRecoveryCodes } from "../../../lib/authn/factors/recovery-codes";
import { userFactors } from "../../../lib/console/factors";
import { newId } from "../../../lib/crypto";
import { DAY } from "../../../lib/clock";
import { defineOperation, runOperation } from "../../../lib/console/operation";
import { operations, type OperationName } from "../../../lib/console/registry";
import { ensureSystemWorkspace, SYSTEM_WORKSPACE_ID } from "../../../lib/console/system";
import { domainDns } from "../../../lib/console/organizations";
import { proofDns } from "../../../lib/federation/dns-proof";
import { systemResolveTxt, txtRecordFor } from "../../../lib/federation/domains";
import { hostnameTxtRecord, listHostnames } from "../../../lib/hostnames/hostnames";
import { z } from "zod";
import { auditCatalogueMismatches } from "../../helpers/audit";
import { ADA, API, BOB, SPA, standardWorkspace, WEB } from "../../helpers/fixtures";
import { seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { humanTokens } from "../../helpers/lifecycle";
import { consoleSignIn, createConsoleHarness, createOperator, operatorId } from "../console-helpers";

let h: Harness;
const W = uniqueWorkspaceId("once");
let owner: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  const doc = standardWorkspace(W);
  await seed(h, { ...doc, organizations: [{ slug: "acme", name: "Acme" }] });
  await ensureSystemWorkspace(h.service);
  // An installation operator (owner of the system workspace): only they disable operator accounts.
  await createOperator(h, "once-owner@operators.test", { [W]: "owner", [SYSTEM_WORKSPACE_ID]: "owner" });
  await createOperator(h, "once-second@operators.test", { [W]: "admin" });
  await createOperator(h, "once-third@operators.test", { [W]: "viewer" });
  owner = (await consoleSignIn(h, "once-owner@operators.test")).token;
});

const userId = async (email: string) => (await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, W), eq(users.emailNormalized, email))))[0].id;
const orgId = async (slug: string) => (await h.service.db.select({ id: organizations.id }).from(organizations).where(and(eq(organizations.workspaceId, W), eq(organizations.slug, slug))))[0].id;
const clientPk = async (clientId: string) => (await h.service.db.select({ id: clients.id }).from(clients).where(and(eq(clients.workspaceId, W), eq(clients.clientId, clientId))))[0].id;
const newestSecret = async (clientId: string) =>
  (await h.service.db.select({ id: clientSecrets.id }).from(clientSecrets).where(eq(clientSecrets.clientPk, await clientPk(clientId))).orderBy(clientSecrets.createdAt))[0].id;
const apiId = async (audience: string) => (await h.service.db.select({ id: apis.id }).from(apis).where(and(eq(apis.workspaceId, W), eq(apis.audience, audience))))[0].id;
const providerId = async (key: string) => (await h.service.db.select({ id: socialProviders.id }).from(socialProviders).where(and(eq(socialProviders.workspaceId, W), eq(socialProviders.key, key))))[0].id;
const membershipId = async (email: string) =>
  (await h.service.db.select({ id: operatorMemberships.id }).from(operatorMemberships).where(and(eq(operatorMemberships.workspaceId, W), eq(operatorMemberships.operatorUserId, await operatorId(h, email)))))[0].id;

let restoreFetch = () => {};

type Step = [OperationName, () => Promise<Record<string, unknown>> | Record<string, unknown>, (() => Promise<void>)?];

/** Every operation in a sequence that makes each one a real change. */
const steps: Step[] = [
  ["createApplication", () => ({ client_id: "once-web", name: "Once web", kind: "web_confidential", redirect_uris: "https://once.example/cb", identity_scopes: ["openid"] })],
  ["updateApplication", () => ({ client_id: "once-web", name: "Once web 2", redirect_uris: "https://once.example/cb", identity_scopes: ["openid"] })],
  ["setApplicationActive", () => ({ client_id: "once-web", active: "false" })],
  ["setApplicationOptions", () => ({ client_id: WEB.client_id, options: ["device_authorization_grant"] })],
  ["trySignIn", () => ({ client_id: WEB.client_id })],
  ["createSecret", () => ({ client_id: WEB.client_id, lifetime_days: "30" })],
  ["rotateSecret", () => ({ client_id: WEB.client_id, overlap_hours: "1" })],
  ["revokeSecret", async () => ({ client_id: WEB.client_id, secret_id: await newestSecret(WEB.client_id) })],
  ["expireSecretNow", async () => ({ client_id: "once-web", secret_id: await newestSecret("once-web") })],
  ["createApi", () => ({ audience: "https://once-api.example", name: "Once API", permissions: "read write" })],
  ["updateApi", async () => ({ api_id: (await h.service.db.select({ id: apis.id }).from(apis).where(eq(apis.audience, "https://once-api.example")))[0].id, name: "Once API 2", active: "on", permissions: "read write delete" })],
  ["setClientApiGrant", () => ({ client_id: SPA.client_id, audience: "https://once-api.example", granted: "on", permissions: ["read"] })],
  ["createRole", () => ({ name: "once-role", description: "" })],
  ["updateRole", async () => ({ role_id: (await h.service.db.select({ id: roles.id }).from(roles).where(and(eq(roles.workspaceId, W), eq(roles.name, "once-role"))))[0].id, name: "once-role", description: "changed" })],
  ["setRoleApiPermissions", () => ({ role: "once-role", audience: API, permissions: ["read:things"] })],
  ["createUser", () => ({ email: "carol@example.test", password: "a long enough password" })],
  ["setUserPassword", async () => ({ user_id: await userId("carol@example.test"), password: "another long password" })],
  ["updateUserProfile", async () => ({ user_id: await userId("carol@example.test"), name: "Carol", email_verified: "on" })],
  ["assignRole", async () => ({ user_id: await userId(BOB.email), role: "once-role", organization: "" })],
  ["removeRole", async () => ({ user_id: await userId(BOB.email), role: "once-role", organization: "" })],
  ["deleteRole", async () => ({ role_id: (await h.service.db.select({ id: roles.id }).from(roles).where(and(eq(roles.workspaceId, W), eq(roles.name, "once-role"))))[0].id, confirm: "once-role" })],
  ["createOrganization", () => ({ slug: "globex", name: "Globex" })],
  ["updateOrganization", async () => ({ organization_id: await orgId("globex"), name: "Globex Inc", active: "on" })],
  ["addMember", () => ({ organization: "acme", email: BOB.email })],
  ["setOrganizationMemberAdministrator", async () => ({ organization_id: await orgId("acme"), user_id: await userId(BOB.email), administrator: "on" })],
  ["removeMember", async () => ({ organization: "acme", user_id: await userId(BOB.email) })],
  ["inviteOrganizationMember", async () => ({ organization_id: await orgId("acme"), email: "once-invited@example.test" })],
  ["resendOrganizationInvitation", async () => ({ organization_id: await orgId("acme"), invitation_id: (await h.service.db.select().from(organizationInvitations).where(eq(organizationInvitations.workspaceId, W)))[0].id })],
  ["withdrawOrganizationInvitation", async () => ({ organization_id: await orgId("acme"), invitation_id: (await h.service.db.select().from(organizationInvitations).where(eq(organizationInvitations.workspaceId, W)))[0].id })],
  ["saveConnection", async () => ({ organization_id: await orgId("acme"), name: "Acme SSO", kind: "oidc", active: "on", issuer: "https://sso.acme.example", client_id: "latchkey", client_secret: "upstream" })],
  [
    "testConnection",
    async () => {
      // The saved connection's upstream, answering discovery only (the test goes no further here).
      const issuer = "https://sso.acme.example";
      const metadata = { issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` };
      const real = h.service.fetch;
      h.service.fetch = async (input, init) => (new Request(input, init).url === `${issuer}/.well-known/openid-configuration` ? Response.json(metadata) : real(input, init));
      restoreFetch = () => (h.service.fetch = real);
      const [c] = await h.service.db.select({ id: enterpriseConnections.id }).from(enterpriseConnections).where(eq(enterpriseConnections.workspaceId, W));
      return { organization_id: await orgId("acme"), connection_id: c.id };
    },
    async () => restoreFetch(),
  ],
  ["createPortalLink", async () => ({ organization_id: await orgId("acme"), email: "it@acme.example" })],
  ["revokePortalLink", async () => ({ organization_id: await orgId("acme"), link_id: (await h.service.db.select().from(organizationPortalLinks).where(eq(organizationPortalLinks.workspaceId, W)))[0].id })],
  ["addDomain", async () => ({ organization_id: await orgId("acme"), domain: "acme.example" })],
  ["saveDirectorySettings", async () => ({ organization_id: await orgId("acme"), enabled: "on", connection_id: "", subject_attribute: "userName", group_roles: "Engineering: reader" })],
  ["issueScimToken", async () => ({ organization_id: await orgId("acme"), overlap_hours: "0" })],
  ["revokeScimToken", async () => ({ organization_id: await orgId("acme"), token_id: (await h.service.db.select({ id: scimTokens.id }).from(scimTokens).where(eq(scimTokens.workspaceId, W)))[0].id })],
  [
    "checkDomainDns",
    async () => {
      const [d] = await h.service.db.select().from(organizationDomains).where(eq(organizationDomains.domain, "acme.example"));
      domainDns.resolveTxt = async () => [[txtRecordFor(d).value]];
      return { organization_id: await orgId("acme"), domain_id: d.id, domain: d.domain };
    },
    async () => {
      domainDns.resolveTxt = systemResolveTxt;
    },
  ],
  ["addDomain", async () => ({ organization_id: await orgId("acme"), domain: "acme2.example" })],
  ["markDomainVerified", async () => ({ organization_id: await orgId("acme"), domain_id: (await h.service.db.select().from(organizationDomains).where(eq(organizationDomains.domain, "acme2.example")))[0].id })],
  ["removeDomain", async () => ({ organization_id: await orgId("acme"), domain_id: (await h.service.db.select().from(organizationDomains).where(eq(organizationDomains.domain, "acme2.example")))[0].id })],
  ["addHostname", () => ({ hostname: `login.${W}.test` })],
  [
    "verifyHostname",
    async () => {
      const [claim] = await listHostnames(h.service.db, W);
      proofDns.resolveTxt = async () => [[hostnameTxtRecord(claim).value]];
      return { hostname_id: claim.id, hostname: claim.hostname };
    },
    async () => {
      proofDns.resolveTxt = systemResolveTxt;
    },
  ],
  ["makePrimaryHostname", async () => ({ hostname_id: (await listHostnames(h.service.db, W))[0].id })],
  ["setRelatedOrigins", () => ({ related_origins: "on" })],
  ["setPasswordScreening", () => ({ screening: "on", minimum_score: "3" })],
  ["setPasswordReset", () => ({ reset: "email" })],
  ["setBotChallenge", () => ({ mode: "adaptive" })],
  ["setSecurityAlerts", () => ({ new_browser: "on" })],
  ["removeHostname", async () => ({ hostname_id: (await listHostnames(h.service.db, W))[0].id, confirm: `login.${W}.test` })],
  ["createSocialProvider", () => ({ preset: "google", key: "google", name: "Google", client_id: "g.apps", client_secret: "google-secret", enabled: "on" })],
  ["createSocialProvider", () => ({ preset: "github", key: "github", name: "GitHub", client_id: "gh", client_secret: "s", enabled: "on" })],
  ["updateSocialProvider", async () => ({ provider_id: await providerId("google"), name: "Google!", client_id: "g.apps", enabled: "on" })],
  ["moveSocialProvider", async () => ({ provider_id: await providerId("github"), direction: "up" })],
  ["setApplicationSocialProviders", async () => ({ client_id: SPA.client_id, provider_ids: [await providerId("google")] })],
  ["removeSocialProvider", async () => ({ provider_id: await providerId("github") })],
  ["setWorkspacePolicy", () => ({ first_factors: ["password", "passkey"], mfa: "required", passkey_enrollment: "offer", sign_up: "on" })],
  ["setApplicationPolicy", () => ({ client_id: WEB.client_id, first_factors_mode: "inherit", mfa: "required", passkey_enrollment: "inherit", sign_up: "inherit" })],
  ["publishKey", () => ({})],
  ["activateKey", () => ({})],
  ["inviteOperator", () => ({ email: "once-fourth@operators.test", role: "viewer" })],
  ["revokeInvitation", async () => ({ invitation_id: (await h.service.db.select({ id: operatorInvitations.id }).from(operatorInvitations).where(eq(operatorInvitations.emailNormalized, "once-fourth@operators.test")))[0].id })],
  ["changeOperatorRole", async () => ({ membership_id: await membershipId("once-third@operators.test"), role: "admin" })],
  ["setOperatorStatus", async () => ({ operator_user_id: await operatorId(h, "once-second@operators.test"), status: "disabled" })],
  ["removeOperator", async () => ({ membership_id: await membershipId("once-third@operators.test") })],
];

describe("one audit event per console change", () => {
  it("folds what the inner writer recorded into the console event's effects", async () => {
    const bob = await userId(BOB.email);
    await runOperation(h.service, owner, W, operations.assignRole, { user_id: bob, role: "reader", organization: "" });
    const events = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, "console.user.role_assigned")));
    const last = events.at(-1)!;
    expect(last.data).toMatchObject({ user_id: bob, role: "reader", effects: [{ type: "authz.user_role.assigned", data: { user_id: bob, role: "reader" } }] });
  });

  it("outside an operation the same writer still records its own event", async () => {
    const bob = await userId(BOB.email);
    expect(await removeUserRole(h.service.db, { workspaceId: W, clock: h.clock, actor: "cli", userId: bob, role: "reader", organization: null })).toBe(true);
    const events = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, "authz.user_role.removed")));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: "cli" });
  });

  it("an inner event recorded in a nested transaction is folded too; flagged effects flag the operation's event", async () => {
    const op = defineOperation({
      name: "user.updated",
      role: "admin",
      input: z.object({}),
      async run(ctx) {
        await ctx.db.transaction(async (tx) => {
          await recordAudit(tx as never, { workspaceId: W, type: "grant.revoked", flagged: "possible_token_theft", at: ctx.now });
        });
        await recordAudit(ctx.service.db, { workspaceId: W, type: "token.revoked", at: ctx.now });
        return { result: null, audit: { target: "x" } };
      },
    });
    h.clock.advance(1000);
    const since = h.clock.now();
    expect(await runOperation(h.service, owner, W, op, {})).toEqual({ ok: true, result: null });
    const events = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), gt(auditEvents.createdAt, new Date(since.getTime() - 1))));
    expect(events.map((e) => e.type)).toEqual(["console.user.updated"]);
    expect(events[0].flagged).toBe("possible_token_theft");
    expect((events[0].data.effects as { type: string }[]).map((e) => e.type)).toEqual(["grant.revoked", "token.revoked"]);
  });

  it("every operation in the registry writes exactly one event, of its own type, carrying what the catalogue declares", async () => {
    // Sessions and grants to end: Ada signs in to the web application.
    await humanTokens(h, W, WEB, ADA);
    const ada = await userId(ADA.email);
    const grantOf = async () => (await h.service.db.select({ id: grants.id }).from(grants).where(eq(grants.userId, ada)))[0].id;
    const sessionOf = async () => (await h.service.db.select({ id: hostedSessions.id }).from(hostedSessions).where(eq(hostedSessions.userId, ada)))[0].id;
    const all: Step[] = [
      ...steps,
      ["revokeUserGrant", async () => ({ user_id: ada, grant_id: await grantOf() })],
      ["endUserSession", async () => ({ user_id: ada, session_id: await sessionOf() })],
      ["setUserStatus", () => ({ user_id: ada, status: "disabled" })],
      ["deleteApplication", () => ({ client_id: "once-web", confirm: "once-web" })],
      ["setApiActive", async () => ({ api_id: await apiId("https://once-api.example"), active: "false", confirm: "https://once-api.example" })],
      ["deleteApi", async () => ({ api_id: await apiId("https://once-api.example"), confirm: "https://once-api.example" })],
      [
        "removeUserFactor",
        async () => {
          const bob = await userId(BOB.email);
          await generateRecoveryCodes({ service: h.service, workspace: { id: W, name: W } }, bob, { ip: null, context: {} });
          const [factor] = await userFactors(h.service, { id: W, name: W }, bob);
          return { user_id: bob, kind: factor.kind, factor_id: factor.id };
        },
      ],
      [
        "unlinkUserIdentity",
        async () => {
          const bob = await userId(BOB.email);
          const id = newId();
          await h.service.db.insert(federatedIdentities).values({ id, workspaceId: W, userId: bob, source: "connection:test", issuer: "https://idp.example", subject: "bob-upstream", createdAt: h.clock.now() });
          return { user_id: bob, identity_id: id };
        },
      ],
      ["deleteUser", async () => ({ user_id: await userId("carol@example.test"), confirm: "carol@example.test" })],
      ["renameWorkspace", () => ({ name: "Once renamed" })],
      // Last: the workspace's own log goes with it; its event is in the system workspace's.
      ["deleteWorkspace", () => ({ confirm: W })],
    ];
    const covered = new Set<string>();
    for (const [name, input, after] of all) {
      // Keys need time between publication and activation.
      if (name === "activateKey") {
        h.clock.advance(2 * DAY);
        owner = (await consoleSignIn(h, "once-owner@operators.test")).token;
      }
      const raw = await input();
      h.clock.advance(1000);
      const since = h.clock.now();
      const out = await runOperation(h.service, owner, W, operations[name] as (typeof operations)["createUser"], raw, { ip: "192.0.2.1" });
      await after?.();
      if (!out.ok) throw new Error(`${name}: ${JSON.stringify(out)}`);
      const events = await h.service.db.select().from(auditEvents).where(and(inArray(auditEvents.workspaceId, [W, SYSTEM_WORKSPACE_ID]), gt(auditEvents.createdAt, new Date(since.getTime() - 1))));
      expect(events.map((e) => e.type), name).toEqual([`console.${operations[name].name}`]);
      // What it carries is what the audit catalogue declares for it (and for each folded effect).
      expect(auditCatalogueMismatches(events[0]), name).toEqual([]);
      covered.add(name);
    }
    // A new operation without a step here is a change nobody proved is audited once.
    expect(Object.keys(operations).filter((n) => !covered.has(n))).toEqual([]);
  });
});

