/**
 * "Client secrets expiring soon" (lib/console/secret-expiry.ts), one rule for the overview, the
 * application list and the application's page: a client is warned about when its longest-lived live
 * secret expires within 14 days. After a rotation with overlap only the superseded secret is about
 * to expire, and that is no reason for a warning.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { DAY, HOUR } from "../../../lib/clock";
import { createClientSecret, listClientSecrets, revokeClientSecret, rotateClientSecret } from "../../../lib/clients/secrets";
import type { WorkspaceAccess } from "../../../lib/console/authz";
import { latestSecretExpiries, warnsOfExpiry } from "../../../lib/console/secret-expiry";
import { workspaceOverview } from "../../../lib/console/workspaces";
import { authzWorkspace, M2M, WEB } from "../../helpers/fixtures";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";

let h: Harness;
const ws = uniqueWorkspaceId("secret-expiry");
const ref = { workspaceId: ws, clientId: M2M.client_id, get clock() { return h.clock; } };

const access = (): WorkspaceAccess => ({
  operator: { userId: "operator", email: "operator@example.test", name: null, sessionId: "s", grantId: "g", hostedSessionId: "hs" },
  workspace: { id: ws, name: "Secret expiry" },
  role: "viewer",
});

/** The overview's warning, for this test's client. */
const warned = async () => (await workspaceOverview(h.service, access())).expiringSecrets.filter((s) => s.clientId === M2M.client_id);
const liveSecrets = async () => (await listClientSecrets(h.service.db, ref)).filter((s) => s.status === "active");

beforeAll(async () => {
  h = await createHarness();
  const doc = authzWorkspace(ws);
  doc.users = [];
  doc.organizations = [];
  await seed(h, doc);
  // One secret of 20 days, nothing else.
  for (const s of await liveSecrets()) await revokeClientSecret(h.service.db, { ...ref, secretId: s.id });
  await createClientSecret(h.service.db, { ...ref, lifetimeDays: 20 });
});

describe("client secrets expiring soon", () => {
  it("warns when the only live secret expires within 14 days, not before", async () => {
    expect(await warned()).toEqual([]);
    h.clock.advance(7 * DAY);
    const [only] = await liveSecrets();
    expect(await warned()).toEqual([{ clientId: M2M.client_id, expiresAt: only!.expiresAt }]);
    expect(warnsOfExpiry(only!, [only!], h.clock.now())).toBe(true);
  });

  it("does not warn after a rotation with overlap: only the superseded secret expires soon", async () => {
    const rotated = await rotateClientSecret(h.service.db, { ...ref, overlapHours: 24, lifetimeDays: 90 });
    const live = await liveSecrets();
    expect(live).toHaveLength(2);
    const old = live.find((s) => s.id !== rotated.id)!;
    expect(old.expiresAt.getTime() - h.clock.now().getTime()).toBe(24 * HOUR);

    expect(await warned()).toEqual([]);
    // The application's page: neither secret is flagged "expires soon"; the list shows the new one's expiry.
    expect(live.map((s) => warnsOfExpiry(s, live, h.clock.now()))).toEqual([false, false]);
    const [[, latest]] = [...(await latestSecretExpiries(h.service.db, ws, h.clock.now()))].filter(([, v]) => v.clientId === M2M.client_id);
    expect(latest!.expiresAt).toEqual(rotated.expiresAt);
  });

  it("warns again once the secret that keeps the client working is itself within 14 days", async () => {
    h.clock.advance(80 * DAY);
    const live = await liveSecrets();
    expect(live).toHaveLength(1);
    expect(await warned()).toEqual([{ clientId: M2M.client_id, expiresAt: live[0]!.expiresAt }]);
    // Another client's secrets are its own.
    expect((await workspaceOverview(h.service, access())).expiringSecrets.every((s) => s.clientId === M2M.client_id || s.clientId === WEB.client_id)).toBe(true);
  });
});
