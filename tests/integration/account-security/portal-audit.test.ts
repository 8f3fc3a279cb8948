/**
 * The portal's one audit record (lib/account-security/portal-session.ts `auditPortal`): the user
 * as actor and subject, the portal session, the application where known, the request's address.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { auditEvents } from "../../../db/schema";
import { auditPortal } from "../../../lib/account-security/portal-session";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { standardWorkspace } from "../../helpers/fixtures";
import { workspaceContext } from "../../helpers/factors/sign-in";

let h: Harness;
const ws = uniqueWorkspaceId("portal-audit");

beforeAll(async () => {
  h = await createHarness();
  const doc = standardWorkspace(ws);
  doc.users = [];
  await seed(h, doc);
});

async function recorded(type: string) {
  return h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, type)));
}

describe("the portal's audit record", () => {
  it("records the user, the portal session, the application and the address", async () => {
    const ctx = await workspaceContext(h, ws);
    await auditPortal(ctx, { id: "portal-1", userId: "user-1", clientPk: "client-1" }, { ip: "203.0.113.7" }, "account_security.verified", { method: "totp" });
    const [event] = await recorded("account_security.verified");
    expect([event.actor, event.subject, event.ip]).toEqual(["user-1", "user-1", "203.0.113.7"]);
    expect(event.data).toEqual({ method: "totp", portal_session: "portal-1", client: "client-1" });
  });

  it("leaves the application out where it is not known", async () => {
    const ctx = await workspaceContext(h, ws);
    await auditPortal(ctx, { id: "portal-2", userId: "user-2" }, { ip: null }, "account_security.portal_closed");
    const [event] = await recorded("account_security.portal_closed");
    expect(event.data).toEqual({ portal_session: "portal-2" });
    expect(event.ip).toBeNull();
  });
});
