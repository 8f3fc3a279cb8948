/**
 * The security-alerts feature: email to an account's address, in its language, when its password
 * changes, a factor is added or removed, recovery codes are generated, it signs in from a new
 * browser, or a refresh token of it is reused. Every surface is declared here and read by the
 * registries (lib/features/registry.ts): the policy's console operation and page (./console.ts,
 * app/console/(app)/w/[workspace]/alerts), its workspace-file section (./workspace-file.ts) and
 * the retention of its rows. The rules: ./policy.ts (which events alert), ./browsers.ts (a new
 * browser), ./dispatch.ts (delivery from the audit log), ./messages.ts (the texts).
 */
import { securityAlerts, knownBrowsers } from "../../db/schema";
import { HOUR } from "../clock";
import { defineFeature } from "../surfaces/feature";
import { defineRetention } from "../surfaces/retention";
import { BROWSER_REMEMBERED_MS } from "./browsers";
import { setSecurityAlerts } from "./console";
import { SECURITY_ALERTS_SECTION } from "./workspace-file";

/** As long as the dispatcher looks back (./dispatch.ts LOOK_BACK_MS, a day) and an hour more: an event is never claimed twice. */
const CLAIMS_KEPT_MS = 24 * HOUR;

export const SECURITY_ALERT_CLAIMS = defineRetention({
  name: "security_alerts",
  table: securityAlerts,
  key: securityAlerts.eventId,
  expiresAt: securityAlerts.claimedAt,
  lifetime: CLAIMS_KEPT_MS,
  grace: HOUR,
  workspaceId: securityAlerts.workspaceId,
});

export const KNOWN_BROWSERS = defineRetention({
  name: "known_browsers",
  table: knownBrowsers,
  key: knownBrowsers.browserHash,
  expiresAt: knownBrowsers.lastSeenAt,
  lifetime: BROWSER_REMEMBERED_MS,
  grace: 0,
  workspaceId: knownBrowsers.workspaceId,
});

export const SECURITY_ALERTS_FEATURE = defineFeature({
  name: "security-alerts",
  operations: { setSecurityAlerts },
  retention: [SECURITY_ALERT_CLAIMS, KNOWN_BROWSERS],
  workspaceFile: SECURITY_ALERTS_SECTION,
  consolePage: { path: "/alerts", label: "Security alerts", after: "/passwords" },
});
