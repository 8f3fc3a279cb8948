/**
 * SCIM 2.0 inbound provisioning (RFC 7643, RFC 7644), one feature: each organization's directory
 * (./directory.ts: its settings and bearer tokens), the SCIM API below
 * `/t/{workspace}/scim/v2/o/{organization}` (./endpoint.ts, its routes ./routes.ts: `/Users`,
 * `/Groups` and the discovery documents), what a provisioned user is in Latchkey (./accounts.ts),
 * the directory's request log (./request-log.ts), its console operations (./console.ts), its part
 * of an organization in the workspace file (./workspace-file.ts) and the retention of its log.
 * docs/scim.md is the guide.
 */
import { scimRequests } from "../../../db/schema";
import { DAY } from "../../clock";
import { defineFeature } from "../../surfaces/feature";
import { defineRetention } from "../../surfaces/retention";
import { issueScimToken, revokeScimToken, saveDirectorySettings } from "./console";
import { SCIM_ROUTES } from "./routes";
import { SCIM_SECTION } from "./workspace-file";

/** A directory's request log keeps its last 100 requests (./request-log.ts), and nothing older than 30 days. */
export const SCIM_REQUESTS = defineRetention({
  name: "scim_requests",
  table: scimRequests,
  key: scimRequests.id,
  expiresAt: scimRequests.at,
  lifetime: 30 * DAY,
  grace: 0,
  workspaceId: scimRequests.workspaceId,
});

export const SCIM_FEATURE = defineFeature({
  name: "scim",
  routes: SCIM_ROUTES,
  operations: { saveDirectorySettings, issueScimToken, revokeScimToken },
  retention: [SCIM_REQUESTS],
  workspaceFile: SCIM_SECTION,
});
