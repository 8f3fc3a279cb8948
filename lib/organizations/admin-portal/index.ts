/**
 * An organization's admin portal, every surface of it (`ADMIN_PORTAL_FEATURE`): the customer's IT
 * sets up the organization's single sign-on, domains and directory themselves, on a hosted page
 * under the workspace's issuer, reaching nothing else of the workspace.
 *
 * - ./links.ts: setup links (made for one address, used once to start, expiring, revocable) and
 *   the portal sessions they start.
 * - ./entry.ts: the setup link's page and its posts (a code proves the link's mailbox).
 * - ./access.ts: who is in the portal for a request: a setup link's session, or an organization
 *   administrator's hosted session.
 * - ./operations.ts: the console operations the portal runs, scoped to its organization and
 *   recorded under the person.
 * - ./console.ts: the console's operations (make and revoke links); ./routes.ts: the routes.
 * - ./limits.ts: lifetimes and declared limits.
 * - the tables: db/schema/organization-admin-portal.ts. The page: app/t/[tenant]/organization-admin.
 */
import { organizationPortalLinks, organizationPortalSessions } from "../../../db/schema";
import { defineFeature } from "../../surfaces/feature";
import { defineRetention, ENDED_RETENTION_MS, PURGE_GRACE_MS } from "../../surfaces/retention";
import { createPortalLink, revokePortalLink } from "./console";
import { PORTAL_LINKS_MADE } from "./limits";
import { ADMIN_PORTAL_ROUTES } from "./routes";

export { portalEntry, type PortalAccess, type PortalEntry, type PortalPerson } from "./access";
export { entryView, ENTRY_ERRORS, PORTAL_SIGN_OUT_POST, type EntryView } from "./entry";
export { listLinks, PORTAL_PATH, type LinkInfo } from "./links";
export { isPortalOperationName, mayRun, PORTAL_OPERATIONS, runPortalOperation, type PortalOperationName } from "./operations";
export { LINK_TTL_DEFAULT_HOURS, LINK_TTL_MAX_HOURS, PORTAL_LINKS_MADE } from "./limits";

/** A link used, revoked or past its expiry is kept ENDED_RETENTION_MS more (support questions), then purged; the audit log keeps the record. */
export const PORTAL_LINKS = defineRetention({
  name: "organization_portal_links",
  table: organizationPortalLinks,
  key: organizationPortalLinks.id,
  expiresAt: [organizationPortalLinks.revokedAt, organizationPortalLinks.expiresAt],
  grace: ENDED_RETENTION_MS,
  workspaceId: organizationPortalLinks.workspaceId,
});

/** A portal session is deleted shortly after it expired or ended. */
export const PORTAL_SESSIONS = defineRetention({
  name: "organization_portal_sessions",
  table: organizationPortalSessions,
  key: organizationPortalSessions.id,
  expiresAt: [organizationPortalSessions.endedAt, organizationPortalSessions.expiresAt],
  grace: PURGE_GRACE_MS,
  workspaceId: organizationPortalSessions.workspaceId,
});

export const ADMIN_PORTAL_FEATURE = defineFeature({
  name: "organization-admin-portal",
  operations: { createPortalLink, revokePortalLink },
  retention: [PORTAL_SESSIONS, PORTAL_LINKS],
  routes: ADMIN_PORTAL_ROUTES,
  guessingLimits: [PORTAL_LINKS_MADE],
});
