/**
 * A user's linked upstream identities in the console: listed with where they came from, and
 * unlinked by an administrator (audited); the identity then no longer reaches the account.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, federatedIdentities, socialProviders, users } from "../../../db/schema";
import { userIdentities } from "../../../lib/console/identities";
import { runOperation } from "../../../lib/console/operation";
import { operations } from "../../../lib/console/registry";
import { ensureSystemWorkspace } from "../../../lib/console/system";
import { newId } from "../../../lib/crypto";
import { ADA, BOB, standardWorkspace } from "../../helpers/fixtures";
import { seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { consoleSignIn, createConsoleHarness, createOperator } from "../console-helpers";

let h: Harness;
const W = uniqueWorkspaceId("linked");
let admin: string;
let viewer: string;
let ada: string;
let bob: string;
let identityId: string;

const run = (token: string, name: keyof typeof operations, input: Record<string, unknown>) =>
  runOperation(h.service, token, W, operations[name] as (typeof operations)["setWorkspacePolicy"], input, { ip: "192.0.2.44" });
const userId = async (email: string) =>
  (await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, W), eq(users.emailNormalized, email))))[0].id;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, standardWorkspace(W));
  await ensureSystemWorkspace(h.service);
  await createOperator(h, "admin@operators.test", { [W]: "admin" });
  await createOperator(h, "viewer@operators.test", { [W]: "viewer" });
  admin = (await consoleSignIn(h, "admin@operators.test")).token;
  viewer = (await consoleSignIn(h, "viewer@operators.test")).token;
  ada = await userId(ADA.email);
  bob = await userId(BOB.email);
  const now = h.clock.now();
  const providerId = newId();
  await h.service.db.insert(socialProviders).values({ id: providerId, workspaceId: W, key: "gh", preset: "github", name: "GitHub", clientId: "c", createdAt: now, updatedAt: now });
  identityId = newId();
  await h.service.db.insert(federatedIdentities).values({
    id: identityId,
    workspaceId: W,
    userId: ada,
    socialProviderId: providerId,
    source: `social:${providerId}`,
    issuer: "https://github.com",
    subject: "4242",
    email: ADA.email,
    emailVerified: true,
    createdAt: now,
  });
});

describe("linked sign-ins in the console", () => {
  it("lists a user's identities with their provider, and no one else's", async () => {
    expect(await userIdentities(h.service, W, ada)).toEqual([
      expect.objectContaining({ id: identityId, sourceName: "GitHub", kind: "social", issuer: "https://github.com", subject: "4242", email: ADA.email, emailVerified: true }),
    ]);
    expect(await userIdentities(h.service, W, bob)).toEqual([]);
  });

  it("refuses a viewer and another user's identity; an administrator unlinks it once, audited", async () => {
    await expect(run(viewer, "unlinkUserIdentity", { user_id: ada, identity_id: identityId })).rejects.toMatchObject({ code: "forbidden" });
    expect(await run(admin, "unlinkUserIdentity", { user_id: bob, identity_id: identityId })).toMatchObject({ ok: false, formError: "This sign-in is no longer linked" });
    expect(await userIdentities(h.service, W, ada)).toHaveLength(1);

    expect(await run(admin, "unlinkUserIdentity", { user_id: ada, identity_id: identityId })).toEqual({ ok: true, result: null });
    expect(await userIdentities(h.service, W, ada)).toEqual([]);
    const events = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, "console.user.identity_unlinked")));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ subject: ADA.email, data: { user_id: ada, identity_id: identityId, issuer: "https://github.com", subject: "4242" } });

    expect(await run(admin, "unlinkUserIdentity", { user_id: ada, identity_id: identityId })).toMatchObject({ ok: false });
  });
});
