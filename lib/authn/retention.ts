/**
 * The hosted sessions' retention (run by the one purger, lib/features/purge.ts), and that of the
 * account-security rows that hang on a hosted session.
 *
 * A hosted session is over when it ended or is past its bounds; it is kept ENDED_RETENTION_MS more.
 * A session is over only when its grants are (the authority chain), so nothing live goes. The
 * guessing limits read an ended session as this browser's proof for the cookie's lifetime
 * (./factors/limits.ts), which is shorter than the retention (a test holds it). Deleting one
 * deletes what hangs on it: its grants, codes, portal sessions, console sessions and handoff launches.
 */
import { accountSecurityLaunches, accountSecurityPortalSessions, hostedSessions } from "../../db/schema";
import { defineFeature } from "../surfaces/feature";
import { defineRetention, ENDED_RETENTION_MS, PURGE_GRACE_MS } from "../surfaces/retention";

export const HOSTED_SESSIONS = defineRetention({
  name: "hosted_sessions",
  table: hostedSessions,
  key: hostedSessions.id,
  expiresAt: [hostedSessions.endedAt, hostedSessions.idleExpiresAt, hostedSessions.absoluteExpiresAt],
  grace: ENDED_RETENTION_MS,
  workspaceId: hostedSessions.workspaceId,
});

export const SESSIONS_FEATURE = defineFeature({ name: "hosted-sessions", retention: [HOSTED_SESSIONS] });

/*
 * The account-security portal's rows. lib/account-security sits above the registry of features
 * (it reads the workspace file, lib/workspaces, which reads the registry), so the registry cannot
 * import a declaration from there; both rows hang on a hosted session (deleted with it), so their
 * rule is declared here, the lowest folder that holds what they hang on and that the registry reads.
 */

/** Portal sessions last at most 30 minutes. */
export const PORTAL_SESSIONS = defineRetention({
  name: "account_security_portal_sessions",
  table: accountSecurityPortalSessions,
  key: accountSecurityPortalSessions.id,
  expiresAt: accountSecurityPortalSessions.expiresAt,
  grace: PURGE_GRACE_MS,
  workspaceId: accountSecurityPortalSessions.workspaceId,
});

/** A handoff launch lives 120 seconds; its row (which keeps its `state` one per launch) is kept as long as an ended session. */
export const HANDOFF_LAUNCHES = defineRetention({
  name: "account_security_launches",
  table: accountSecurityLaunches,
  key: accountSecurityLaunches.id,
  expiresAt: accountSecurityLaunches.expiresAt,
  grace: ENDED_RETENTION_MS,
  workspaceId: accountSecurityLaunches.workspaceId,
});

export const ACCOUNT_SECURITY_FEATURE = defineFeature({ name: "account-security", retention: [PORTAL_SESSIONS, HANDOFF_LAUNCHES] });
