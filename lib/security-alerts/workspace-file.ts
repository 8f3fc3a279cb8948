/**
 * The workspace file's `security_alerts` (docs/workspace-file.md): `"off"` (the default, as
 * SPEC.md describes) or an object naming each alert with a boolean (an alert left out is off).
 */
import { z } from "zod";
import { defineWorkspaceSection } from "../surfaces/workspace-file";
import { ALL_OFF, loadAlertPolicy, policyJson, samePolicy, saveAlertPolicy, type AlertPolicy } from "./policy";

const flag = z.boolean().default(false);

export const securityAlertsSchema = z
  .union([
    z.literal("off"),
    z.strictObject({ new_password: flag, factor_changed: flag, new_recovery_codes: flag, new_browser: flag, token_reuse: flag }),
  ])
  .default("off");

export type SecurityAlertsValue = z.output<typeof securityAlertsSchema>;

export const alertPolicyOf = (value: SecurityAlertsValue): AlertPolicy => (value === "off" ? ALL_OFF : value);

export const SECURITY_ALERTS_SECTION = defineWorkspaceSection({
  name: "security_alerts",
  shape: { security_alerts: securityAlertsSchema },
  after: "password_screening",
  async import(ctx) {
    const wanted = alertPolicyOf(ctx.file.security_alerts);
    if (samePolicy(await loadAlertPolicy(ctx.tx, ctx.wid), wanted)) return;
    await saveAlertPolicy(ctx.tx, ctx.wid, wanted, ctx.now);
    ctx.changes++;
  },
  async export(db, workspaceId) {
    return { security_alerts: policyJson(await loadAlertPolicy(db, workspaceId)) };
  },
});
