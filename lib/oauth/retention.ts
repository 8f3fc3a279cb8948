/**
 * The protocol's short-lived rows and how long each is kept (run by the one purger,
 * lib/features/purge.ts). An access token lives 5 minutes, and one that has expired answers exactly
 * like an unknown one everywhere (introspection `active: false`, 401 from UserInfo, the session
 * check and the permission check, 200 from revocation), so its row only costs: without the purge
 * the hottest table and its indexes grow by every token ever issued.
 */
import { accessTokens, authorizationCodes, authorizationTransactions, grants, revokedWorkloadTokens } from "../../db/schema";
import { defineFeature } from "../surfaces/feature";
import { defineRetention, ENDED_RETENTION_MS, PURGE_GRACE_MS } from "../surfaces/retention";

export const ACCESS_TOKENS = defineRetention({
  name: "access_tokens",
  table: accessTokens,
  key: accessTokens.tokenHash,
  expiresAt: accessTokens.expiresAt,
  grace: PURGE_GRACE_MS,
  workspaceId: accessTokens.workspaceId,
});

/** The deny list of sealed workload tokens: an entry is needed only until its token expires. */
export const REVOKED_WORKLOAD_TOKENS = defineRetention({
  name: "revoked_workload_tokens",
  table: revokedWorkloadTokens,
  key: revokedWorkloadTokens.tokenId,
  expiresAt: revokedWorkloadTokens.expiresAt,
  grace: PURGE_GRACE_MS,
  workspaceId: revokedWorkloadTokens.workspaceId,
});

/** Authorization codes live 60 seconds; a code presented again within the grace still revokes what it issued. */
export const AUTHORIZATION_CODES = defineRetention({
  name: "authorization_codes",
  table: authorizationCodes,
  key: authorizationCodes.codeHash,
  expiresAt: authorizationCodes.expiresAt,
  grace: PURGE_GRACE_MS,
  workspaceId: authorizationCodes.workspaceId,
});

/** Pending sign-ins (10 minutes), with their upstream round trips. */
export const AUTHORIZATION_TRANSACTIONS = defineRetention({
  name: "authorization_transactions",
  table: authorizationTransactions,
  key: authorizationTransactions.id,
  expiresAt: authorizationTransactions.expiresAt,
  grace: PURGE_GRACE_MS,
  workspaceId: authorizationTransactions.workspaceId,
});

/**
 * Grants (refresh families) over for ENDED_RETENTION_MS: revoked, or past their idle or absolute
 * bound. Their refresh tokens (every superseded one is kept while the family lives, for reuse
 * detection), codes and console sessions go with them. Listed before the hosted sessions
 * (lib/authn/retention.ts), so a grant over is counted as such rather than deleted with its session.
 */
export const GRANTS = defineRetention({
  name: "grants",
  table: grants,
  key: grants.id,
  expiresAt: [grants.revokedAt, grants.idleExpiresAt, grants.absoluteExpiresAt],
  grace: ENDED_RETENTION_MS,
  workspaceId: grants.workspaceId,
});

export const OAUTH_FEATURE = defineFeature({
  name: "oauth",
  retention: [ACCESS_TOKENS, REVOKED_WORKLOAD_TOKENS, AUTHORIZATION_CODES, AUTHORIZATION_TRANSACTIONS, GRANTS],
});
