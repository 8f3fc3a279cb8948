/**
 * A workspace's security-alert policy (the `security_alert_policies` row; none: every alert off,
 * as SPEC.md describes) and the alerts there are, each made from the audit events that record the
 * change it tells the user about.
 */
import { eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { securityAlertPolicies } from "../../db/schema";
import type { AuditEventType } from "../audit/catalogue";

/** The alerts, in the order the console and the workspace file list them. */
export const ALERTS = ["new_password", "factor_changed", "new_recovery_codes", "new_browser", "token_reuse"] as const;
export type Alert = (typeof ALERTS)[number];

/** Which alerts a workspace's users get. */
export type AlertPolicy = Readonly<Record<Alert, boolean>>;

export const ALL_OFF: AlertPolicy = { new_password: false, factor_changed: false, new_recovery_codes: false, new_browser: false, token_reuse: false };
export const ALL_ON: AlertPolicy = { new_password: true, factor_changed: true, new_recovery_codes: true, new_browser: true, token_reuse: true };

/** The audit events each alert is made from (lib/audit/catalogue.ts). */
export const ALERT_EVENTS = {
  "password.changed": "new_password",
  "console.user.password_set": "new_password",
  "account_security.credential_added": "factor_changed",
  "account_security.credential_removed": "factor_changed",
  "console.user.factor_removed": "factor_changed",
  "account_security.recovery_codes_generated": "new_recovery_codes",
  // Only those whose data says `new_browser` (./browsers.ts).
  "sign_in.succeeded": "new_browser",
  "refresh.reuse_detected": "token_reuse",
} as const satisfies Partial<Record<AuditEventType, Alert>>;
export type AlertEventType = keyof typeof ALERT_EVENTS;
export const ALERT_EVENT_TYPES = Object.keys(ALERT_EVENTS) as AlertEventType[];

export const anyOn = (p: AlertPolicy) => ALERTS.some((a) => p[a]);

export async function loadAlertPolicy(db: Database, workspaceId: string): Promise<AlertPolicy> {
  const t = securityAlertPolicies;
  const [row] = await db
    .select({ new_password: t.newPassword, factor_changed: t.factorChanged, new_recovery_codes: t.newRecoveryCodes, new_browser: t.newBrowser, token_reuse: t.tokenReuse })
    .from(t)
    .where(eq(t.workspaceId, workspaceId))
    .limit(1);
  return row ?? ALL_OFF;
}

export async function saveAlertPolicy(db: Database, workspaceId: string, policy: AlertPolicy, now: Date): Promise<void> {
  const values = {
    newPassword: policy.new_password,
    factorChanged: policy.factor_changed,
    newRecoveryCodes: policy.new_recovery_codes,
    newBrowser: policy.new_browser,
    tokenReuse: policy.token_reuse,
    updatedAt: now,
  };
  await db.insert(securityAlertPolicies).values({ workspaceId, ...values }).onConflictDoUpdate({ target: securityAlertPolicies.workspaceId, set: values });
}

export const samePolicy = (a: AlertPolicy, b: AlertPolicy) => ALERTS.every((k) => a[k] === b[k]);

/** The policy as the workspace file and the audit event write it: `"off"`, or each alert by name. */
export const policyJson = (p: AlertPolicy): "off" | Record<Alert, boolean> => (anyOn(p) ? { ...p } : "off");
