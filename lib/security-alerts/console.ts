/**
 * The console's side of security alerts: the Security alerts page shows the policy
 * (`alertPolicyFor`) and `setSecurityAlerts` changes it (admins), audited as
 * `console.workspace.security_alerts_changed`.
 */
import { z } from "zod";
import type { Database } from "../../db/client";
import { checkbox } from "../forms/fields";
import { defineOperation } from "../surfaces/operation";
import { loadAlertPolicy, policyJson, samePolicy, saveAlertPolicy, type AlertPolicy } from "./policy";

export function alertPolicyFor(db: Database, workspaceId: string): Promise<AlertPolicy> {
  return loadAlertPolicy(db, workspaceId);
}

export const setSecurityAlerts = defineOperation({
  name: "workspace.security_alerts_changed",
  role: "admin",
  input: z.object({ new_password: checkbox(), factor_changed: checkbox(), new_recovery_codes: checkbox(), new_browser: checkbox(), token_reuse: checkbox() }),
  async run(ctx, input) {
    const workspaceId = ctx.access.workspace.id;
    const before = await loadAlertPolicy(ctx.db, workspaceId);
    const after: AlertPolicy = { ...input };
    if (samePolicy(before, after)) return { result: after, audit: null };
    await saveAlertPolicy(ctx.db, workspaceId, after, ctx.now);
    return { result: after, audit: { target: workspaceId, data: { before: policyJson(before), after: policyJson(after) } } };
  },
});
