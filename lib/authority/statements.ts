/**
 * The statements' chains: each builder starts from the row a reader holds (an access token, a
 * refresh token, a console session, a hosted session, a grant), adds the joins to every link of
 * its chain and selects the facts (`ChainFacts`) and the first dead link (`refusal`, SQL). The
 * caller adds its own columns, its WHERE, and may join further; it never joins the chain itself.
 *
 * Joins are by primary key, left joins throughout: a missing row is a dead link, judged by the
 * fragments of ./chain.ts. The session's organization, membership and connection are read by
 * subqueries of the session row instead (./chain.ts), so they cost nothing where there are none.
 * The `...Verdict` builders select the verdict without the facts, for hot paths. The facts are aliased expressions, so a
 * builder can also be a CTE (refresh rotation) without its columns' names colliding.
 */
import { and, eq, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { alias, type AnyPgColumn, type SelectedFields } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { accessTokens, apis, clients, clientSecrets, consoleSessions, grants, hostedSessions, refreshTokens, users } from "../../db/schema";
import {
  accessTokenSource,
  chains,
  credential,
  grantSource,
  refusalSql,
  sealedTokenSource,
  sessionConnectionActiveSql,
  sessionMembershipIdSql,
  sessionOrganizationActiveSql,
  sessionSource,
  tokenRefusalSql,
  type Chain,
  type ChainSource,
  type Link,
  type SealedToken,
} from "./chain";
import { secretActiveSql } from "./client-secret";

/** A column as an aliased, typed expression, decoded as the column is (dates stay dates). */
function fact<T>(column: AnyPgColumn, name: string): SQL.Aliased<T | null> {
  return (sql`${column}`.mapWith(column) as SQL<T | null>).as(name);
}

const sessionFacts = {
  sessionEndedAt: fact<Date>(hostedSessions.endedAt, "session_ended_at"),
  sessionIdleExpiresAt: fact<Date>(hostedSessions.idleExpiresAt, "session_idle_expires_at"),
  sessionAbsoluteExpiresAt: fact<Date>(hostedSessions.absoluteExpiresAt, "session_absolute_expires_at"),
  userStatus: fact<string>(users.status, "user_status"),
  organizationId: fact<string>(hostedSessions.organizationId, "session_organization_id"),
  organizationActive: sessionOrganizationActiveSql.as("session_organization_active"),
  membershipId: sessionMembershipIdSql.as("session_membership_id"),
  connectionId: fact<string>(hostedSessions.connectionId, "session_connection_id"),
  connectionActive: sessionConnectionActiveSql.as("session_connection_active"),
};

const clientFacts = {
  clientActive: fact<boolean>(clients.active, "client_active"),
};

function grantFacts(source: ChainSource) {
  return {
    grantRevokedAt: fact<Date>(grants.revokedAt, "grant_revoked_at"),
    grantIdleExpiresAt: fact<Date>(grants.idleExpiresAt, "grant_idle_expires_at"),
    grantAbsoluteExpiresAt: fact<Date>(grants.absoluteExpiresAt, "grant_absolute_expires_at"),
    credentialRevokedAt: fact<Date>(credential.revokedAt, "credential_revoked_at"),
    credentialExpiresAt: fact<Date>(credential.expiresAt, "credential_expires_at"),
    ...sessionFacts,
    ...clientFacts,
    apiId: (sql`${source.apiId}` as SQL<string | null>).as("chain_api_id"),
    apiActive: fact<boolean>(apis.active, "api_active"),
  };
}

const tokenFacts = {
  tokenGrantId: fact<string>(accessTokens.grantId, "token_grant_id"),
  tokenSessionId: fact<string>(accessTokens.sessionId, "token_session_id"),
  tokenUserId: fact<string>(accessTokens.userId, "token_user_id"),
  tokenCredentialId: fact<string>(accessTokens.credentialId, "token_credential_id"),
  tokenRevokedAt: fact<Date>(accessTokens.revokedAt, "token_revoked_at"),
  tokenExpiresAt: fact<Date>(accessTokens.expiresAt, "token_expires_at"),
};

const refusal = (expression: SQL<Link | null>) => expression.as("refusal");


/**
 * An access token and its chain (human: grant, hosted session, user, client, the secret the grant
 * was last used with, API, organization, connection; workload: client, the credential that
 * obtained it, API). The client is an inner join: a token of a deleted client is no token.
 */
export function selectAccessTokenChain<F extends SelectedFields>(db: Database, now: SQLWrapper, extra: F) {
  return accessTokenChain(db, now, { ...tokenFacts, ...grantFacts(accessTokenSource), ...extra });
}

/**
 * `selectAccessTokenChain` without the facts: the same joins and the same verdict (`refusal`), with
 * only the caller's columns besides. For the hot paths (session check, UserInfo, introspection),
 * which judge in SQL and never need the JS twin: a narrower row is less to send and to decode.
 */
export function selectAccessTokenVerdict<F extends SelectedFields>(db: Database, now: SQLWrapper, extra: F) {
  return accessTokenChain(db, now, extra);
}

/** The access token joined to every link of its chain, selecting the verdict (`refusal`) and `fields`. */
function accessTokenChain<F extends SelectedFields>(db: Database, now: SQLWrapper, fields: F) {
  return db
    .select({ refusal: refusal(tokenRefusalSql(now)), ...fields })
    .from(accessTokens)
    .innerJoin(clients, eq(clients.id, accessTokens.clientPk))
    .leftJoin(grants, eq(grants.id, accessTokens.grantId))
    .leftJoin(hostedSessions, eq(hostedSessions.id, accessTokens.sessionId))
    .leftJoin(users, eq(users.id, accessTokens.userId))
    // A workload token's own credential; for a human token, the secret its grant was last used
    // with (confidential clients): an explicit revocation of that secret ends the grant's tokens.
    .leftJoin(credential, eq(credential.id, sql`coalesce(${accessTokens.credentialId}, ${grants.credentialId})`))
    .leftJoin(apis, eq(apis.id, accessTokens.apiId));
}

/**
 * A refresh token and its family's chain (`chains.grant`). `family` narrows the inner join to the
 * grant (refresh rotation: unrevoked, the caller's); without it every family is read.
 */
export function selectRefreshTokenChain<F extends SelectedFields>(db: Database, now: SQLWrapper, extra: F, family?: SQL) {
  return refreshTokenChain(db, now, { ...grantFacts(grantSource), ...extra }, family);
}

/** `selectRefreshTokenChain` without the facts, the verdict and the caller's columns only: refresh rotation's hot path. */
export function selectRefreshTokenVerdict<F extends SelectedFields>(db: Database, now: SQLWrapper, extra: F, family?: SQL) {
  return refreshTokenChain(db, now, extra, family);
}

function refreshTokenChain<F extends SelectedFields>(db: Database, now: SQLWrapper, fields: F, family?: SQL) {
  return db
    .select({ refusal: refusal(refusalSql(chains.grant, grantSource, now)), ...fields })
    .from(refreshTokens)
    .innerJoin(grants, and(eq(grants.id, refreshTokens.grantId), family))
    .leftJoin(hostedSessions, eq(hostedSessions.id, grants.sessionId))
    .leftJoin(users, eq(users.id, grants.userId))
    .leftJoin(clients, eq(clients.id, grants.clientPk))
    .leftJoin(credential, eq(credential.id, grants.credentialId))
    .leftJoin(apis, eq(apis.id, grants.apiId));
}

/**
 * Grants and their chains, `chain` (default `chains.grant`) judged in `refusal`. The client is an
 * inner join: every grant has one (a foreign key), and listings show its name.
 */
export function selectGrantChain<F extends SelectedFields>(db: Database, now: SQLWrapper, extra: F, chain: Chain = chains.grant) {
  return db
    .select({ ...grantFacts(grantSource), refusal: refusal(refusalSql(chain, grantSource, now)), ...extra })
    .from(grants)
    .innerJoin(clients, eq(clients.id, grants.clientPk))
    .leftJoin(hostedSessions, eq(hostedSessions.id, grants.sessionId))
    .leftJoin(users, eq(users.id, grants.userId))
    .leftJoin(credential, eq(credential.id, grants.credentialId))
    .leftJoin(apis, eq(apis.id, grants.apiId));
}

/**
 * A console session and the chain of the grant it was signed in with (`chains.grant`): the grant,
 * the console client's secret it was obtained with, the hosted session the console session came
 * from, the operator, the console client. The console session's own expiry is the console's.
 */
export function selectConsoleSessionChain<F extends SelectedFields>(db: Database, now: SQLWrapper, extra: F) {
  return db
    .select({ ...grantFacts(grantSource), refusal: refusal(refusalSql(chains.grant, grantSource, now)), ...extra })
    .from(consoleSessions)
    .leftJoin(grants, eq(grants.id, consoleSessions.grantId))
    .leftJoin(hostedSessions, eq(hostedSessions.id, consoleSessions.hostedSessionId))
    .leftJoin(users, eq(users.id, consoleSessions.operatorUserId))
    .leftJoin(clients, eq(clients.id, grants.clientPk))
    .leftJoin(credential, eq(credential.id, grants.credentialId))
    .leftJoin(apis, eq(apis.id, grants.apiId));
}

/**
 * A hosted session and its chain: the user, the session's organization and connection, and, when
 * `clientPk` is given (a value or a prepared statement's placeholder), that client
 * (`chains.codeExchange`; otherwise `chains.hostedSession`).
 */
export function selectHostedSessionChain<F extends SelectedFields>(db: Database, now: SQLWrapper, extra: F, clientPk: string | SQLWrapper | null = null) {
  const chain = clientPk === null ? chains.hostedSession : chains.codeExchange;
  return db
    .select({ ...sessionFacts, ...clientFacts, refusal: refusal(refusalSql(chain, sessionSource, now)), ...extra })
    .from(hostedSessions)
    .leftJoin(users, eq(users.id, hostedSessions.userId))
    .leftJoin(clients, eq(clients.id, sql`${clientPk}::text`));
}

/** The confidential client asking (introspection with a memoized credential) and its secret. */
const callerCredential = alias(clientSecrets, "caller_secret");
const callerClient = alias(clients, "caller");

/**
 * `selectAccessTokenVerdict` (the verdict, no facts: introspection's hot path), driven from the caller's secret (a right join, so the caller's answer
 * comes back even for an unknown token; no row means the secret no longer exists), plus
 * `callerLive`: that secret unrevoked and unexpired (a credential judged as a workload's), its
 * client active and of the type and client_id recalled.
 */
export function selectAccessTokenChainForCaller<F extends SelectedFields>(
  db: Database,
  now: SQLWrapper,
  extra: F,
  match: { workspaceId: SQLWrapper; tokenHash: SQLWrapper; credentialId: SQLWrapper; clientPk: SQLWrapper; clientType: SQLWrapper; clientId: SQLWrapper },
) {
  const callerLive = sql<boolean>`(${secretActiveSql(callerCredential, now)} and ${callerClient.active}
    and ${callerClient.type} = ${match.clientType} and ${callerClient.clientId} = ${match.clientId})`;
  return selectAccessTokenVerdict(db, now, { ...extra, callerLive })
    .rightJoin(callerCredential, and(eq(accessTokens.workspaceId, match.workspaceId), eq(accessTokens.tokenHash, match.tokenHash)))
    .innerJoin(callerClient, and(eq(callerClient.id, callerCredential.clientPk), eq(callerClient.workspaceId, callerCredential.workspaceId)))
    .where(and(eq(callerCredential.workspaceId, match.workspaceId), eq(callerCredential.id, match.credentialId), eq(callerCredential.clientPk, match.clientPk)));
}

/**
 * A sealed workload token (lib/oauth/workload-token.ts) and its chain (`chains.workloadToken`):
 * the token's client, the credential that obtained it and its API, read by primary key, with the
 * deny list; the token's own facts are the statement's values. The client is the FROM item: a
 * token of a deleted client is no token (no row), as for stored tokens. For the hot paths: the
 * verdict (`refusal`) and the caller's columns only.
 */
export function selectSealedTokenVerdict<F extends SelectedFields>(db: Database, now: SQLWrapper, token: SealedToken, extra: F) {
  return db
    .select({ refusal: refusal(refusalSql(chains.workloadToken, sealedTokenSource(token), now)), ...extra })
    .from(clients)
    .leftJoin(credential, and(eq(credential.id, token.credentialId), eq(credential.workspaceId, token.workspaceId), eq(credential.clientPk, clients.id)))
    .leftJoin(apis, and(eq(apis.id, token.apiId), eq(apis.workspaceId, token.workspaceId)));
}

/**
 * `selectSealedTokenVerdict` for introspection with a memoized caller of the token's own client
 * (only a client's own tokens can be active): plus `callerLive`, the caller's secret unrevoked and
 * unexpired and the client active, of the type and client_id recalled.
 */
export function selectSealedTokenVerdictForCaller<F extends SelectedFields>(
  db: Database,
  now: SQLWrapper,
  token: SealedToken,
  extra: F,
  caller: { credentialId: SQLWrapper; clientType: SQLWrapper; clientId: SQLWrapper },
) {
  const callerLive = sql<boolean>`(${secretActiveSql(callerCredential, now)} and ${clients.active}
    and ${clients.type} = ${caller.clientType} and ${clients.clientId} = ${caller.clientId})`;
  return selectSealedTokenVerdict(db, now, token, { ...extra, callerLive }).innerJoin(
    callerCredential,
    and(eq(callerCredential.id, caller.credentialId), eq(callerCredential.clientPk, clients.id), eq(callerCredential.workspaceId, token.workspaceId)),
  );
}
