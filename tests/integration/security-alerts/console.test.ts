/**
 * The console's side of security alerts: the policy shown and changed (admins only, audited once
 * per change), and an administrator's change to an account alerting that account.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents } from "../../../db/schema";
import { ensureSystemWorkspace } from "../../../lib/console/system";
import { alertPolicyFor } from "../../../lib/security-alerts/console";
import { dispatchSecurityAlerts } from "../../../lib/security-alerts/dispatch";
import { ALL_OFF } from "../../../lib/security-alerts/policy";
import { ADA, standardWorkspace } from "../../helpers/fixtures";
import { seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { OUTBOX, outboxFor } from "../../helpers/factors/email";
import { userIdOf } from "../../helpers/factors/sign-in";
import { adminAndViewer, createConsoleHarness, runRegistered } from "../console-helpers";

let h: Harness;
const ws = uniqueWorkspaceId("alerts-console");
let admin: string;
let viewer: string;

beforeAll(async () => {
  // A database of its own: it signs operators in (tests/integration/console-helpers.ts).
  const base = await createConsoleHarness();
  h = { ...base, service: { ...base.service, config: { ...base.service.config, mail: OUTBOX } } };
  await seed(h, standardWorkspace(ws));
  await ensureSystemWorkspace(h.service);
  ({ admin, viewer } = await adminAndViewer(h, ws, "alerts.test"));
});

const changes = () => h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "console.workspace.security_alerts_changed")));

describe("the security alerts page's operation", () => {
  it("is off by default; an admin turns alerts on (audited), a viewer cannot", async () => {
    expect(await alertPolicyFor(h.service.db, ws)).toEqual(ALL_OFF);
    await expect(runRegistered(h, viewer, ws, "setSecurityAlerts", { new_password: "on" })).rejects.toThrow();
    expect(await alertPolicyFor(h.service.db, ws)).toEqual(ALL_OFF);

    expect(await runRegistered(h, admin, ws, "setSecurityAlerts", { new_password: "on", token_reuse: "on" })).toMatchObject({ ok: true });
    expect(await alertPolicyFor(h.service.db, ws)).toEqual({ ...ALL_OFF, new_password: true, token_reuse: true });
    const [event] = await changes();
    expect(event?.data).toMatchObject({ before: "off", after: { ...ALL_OFF, new_password: true, token_reuse: true } });
    // Saved as it was: no second event.
    await runRegistered(h, admin, ws, "setSecurityAlerts", { new_password: "on", token_reuse: "on" });
    expect(await changes()).toHaveLength(1);
  });

  it("alerts the account an administrator set a new password for, saying an administrator did", async () => {
    h.clock.advance(1000);
    const ada = await userIdOf(h, ws, ADA.email);
    expect(await runRegistered(h, admin, ws, "setUserPassword", { user_id: ada, password: "a brand new password for ada" })).toMatchObject({ ok: true });
    expect(await dispatchSecurityAlerts(h.service, { workspaceId: ws })).toEqual({ sent: 1, skipped: 0, failed: 0 });
    const [alert] = await outboxFor(h, ws, ADA.email);
    expect(alert.subject).toBe(`Your Workspace ${ws} password was changed`);
    expect(alert.text).toContain(`An administrator of Workspace ${ws} set a new password for your account.`);
    expect(alert.text).toContain("contact the administrator");
  });

  it("turned off, sends nothing for the next change", async () => {
    h.clock.advance(1000);
    await runRegistered(h, admin, ws, "setSecurityAlerts", {});
    expect(await changes()).toHaveLength(2);
    const ada = await userIdOf(h, ws, ADA.email);
    await runRegistered(h, admin, ws, "setUserPassword", { user_id: ada, password: "yet another password for ada" });
    expect(await dispatchSecurityAlerts(h.service, { workspaceId: ws })).toEqual({ sent: 0, skipped: 0, failed: 0 });
  });
});
