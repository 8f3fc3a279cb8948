/**
 * The authority chain, once: whether a token, grant, hosted session or console session is still
 * backed by live authority. Every link is judged here, in one order, in two forms that must agree:
 *
 * - SQL (`deadLinkSql`, `refusalSql`, `liveSql`): the fragments every statement includes, through
 *   the builders of ./statements.ts that add the joins. Statements judge in SQL, so a check costs
 *   no extra round trip and a write (refresh rotation) can be gated by the same rule.
 * - JS (`refusalOf`, `linkIsLive`): a pure function over a row already loaded with the facts the
 *   builders select (`ChainFacts`).
 *
 * tests/integration/authority-combinations.test.ts holds the two equal over combinations of dead
 * links, and equal to what the endpoints answer.
 */
import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import {
  accessTokens,
  apis,
  clients,
  clientSecrets,
  enterpriseConnections,
  grants,
  hostedSessions,
  organizationMembers,
  organizations,
  revokedWorkloadTokens,
  users,
} from "../../db/schema";

/**
 * The links, in the order they are judged: the first dead one is the refusal. The token endpoint
 * names its refusal from it (grant → expired, credential → revoked, the rest → ended), and the
 * permission check answers a token whose first dead link is the session's organization or
 * connection with a denial rather than a 401; both rely on this order.
 */
export const LINKS = ["token", "grant", "credential", "session", "user", "client", "api", "organization", "connection"] as const;
export type Link = (typeof LINKS)[number];

/** The links one kind of reader judges, and how it treats its client credential. */
export interface Chain {
  readonly links: readonly Link[];
  /**
   * A workload token dies with its credential's expiry or revocation. A human grant dies only with
   * the explicit revocation of the secret it was last used with: after a rotation the old secret
   * merely expires while the new one is in use.
   */
  readonly credentialExpiry: boolean;
}

const chain = (links: Link[], credentialExpiry = false): Chain => ({ links: LINKS.filter((l) => links.includes(l)), credentialExpiry });

export const chains = {
  /** A human access token: the token, its grant and everything the grant stands on. */
  humanToken: chain([...LINKS]),
  /** A workload (M2M) access token: the token, its client, the credential that obtained it, its API. */
  workloadToken: chain(["token", "credential", "client", "api"], true),
  /** A grant (refresh family, console sign-in): refresh rotation, refresh-token introspection, console sessions. */
  grant: chain(["grant", "credential", "session", "user", "client", "api", "organization", "connection"]),
  /** A hosted session about to be bound to a client: the code exchange (the grant does not exist yet). */
  codeExchange: chain(["session", "user", "client", "organization", "connection"]),
  /** A hosted session reused by the browser (authorize, logout). */
  hostedSession: chain(["session", "user", "organization", "connection"]),
  /**
   * What an operator can still end (console listings): the grant's own state and its session's.
   * A disabled user or client is not an ended grant: it may come back, and can still be revoked.
   */
  grantRecord: chain(["grant", "session"]),
  sessionRecord: chain(["session"]),
} as const;

/**
 * What the builders select about each link (null where the row is missing). Presence is read from
 * NOT NULL columns: a missing grant has no idle expiry, a missing user no status, and so on.
 */
export interface ChainFacts {
  /** The token row: its references decide human or workload (`tokenChain`). */
  tokenGrantId: string | null;
  tokenSessionId: string | null;
  tokenUserId: string | null;
  tokenCredentialId: string | null;
  tokenRevokedAt: Date | null;
  tokenExpiresAt: Date | null;
  grantRevokedAt: Date | null;
  grantIdleExpiresAt: Date | null;
  grantAbsoluteExpiresAt: Date | null;
  credentialRevokedAt: Date | null;
  credentialExpiresAt: Date | null;
  sessionEndedAt: Date | null;
  sessionIdleExpiresAt: Date | null;
  sessionAbsoluteExpiresAt: Date | null;
  userStatus: string | null;
  clientActive: boolean | null;
  /** The API the token or grant is for (null: identity only), and that API's row. */
  apiId: string | null;
  apiActive: boolean | null;
  /** The hosted session's organization (enterprise sign-in), that organization, and the user's membership. */
  organizationId: string | null;
  organizationActive: boolean | null;
  membershipId: string | null;
  /** The hosted session's enterprise connection and that connection's row. */
  connectionId: string | null;
  connectionActive: boolean | null;
}

// ---------------------------------------------------------------------------------------------
// JS twin

const passed = (at: Date | null | undefined, now: Date) => at == null || at.getTime() <= now.getTime();

/** Whether one link is dead, over loaded facts. Absent facts (undefined) count as a missing row. */
const deadLink: Record<Link, (f: Partial<ChainFacts>, now: Date, chain: Chain) => boolean> = {
  token: (f, now) => f.tokenRevokedAt != null || passed(f.tokenExpiresAt, now),
  grant: (f, now) => f.grantRevokedAt != null || passed(f.grantIdleExpiresAt, now) || passed(f.grantAbsoluteExpiresAt, now),
  credential: (f, now, c) => f.credentialRevokedAt != null || (c.credentialExpiry && passed(f.credentialExpiresAt, now)),
  session: (f, now) => f.sessionEndedAt != null || passed(f.sessionIdleExpiresAt, now) || passed(f.sessionAbsoluteExpiresAt, now),
  user: (f) => f.userStatus !== "active",
  client: (f) => f.clientActive !== true,
  api: (f) => f.apiId != null && f.apiActive !== true,
  organization: (f) => f.organizationId != null && (f.organizationActive !== true || f.membershipId == null),
  connection: (f) => f.connectionId != null && f.connectionActive !== true,
};

/** The first dead link of `chain` over a loaded row, or null while every link is live. */
export function refusalOf(chain: Chain, facts: Partial<ChainFacts>, now: Date): Link | null {
  for (const link of chain.links) if (deadLink[link](facts, now, chain)) return link;
  return null;
}

/** Whether one link of `chain` is live over a loaded row, whatever the others. */
export function linkIsLive(link: Link, chain: Chain, facts: Partial<ChainFacts>, now: Date): boolean {
  return !deadLink[link](facts, now, chain);
}

/** A token with grant, session and user is human; one with a credential is a workload's; anything else is no token. */
export function tokenChain(facts: Pick<Partial<ChainFacts>, "tokenGrantId" | "tokenSessionId" | "tokenUserId" | "tokenCredentialId">): Chain | null {
  if (facts.tokenGrantId && facts.tokenSessionId && facts.tokenUserId) return chains.humanToken;
  if (facts.tokenCredentialId) return chains.workloadToken;
  return null;
}

/** An access token's first dead link (its kind decided by `tokenChain`); "token" when it is of no kind. */
export function tokenRefusalOf(facts: Partial<ChainFacts>, now: Date): Link | null {
  const chosen = tokenChain(facts);
  return chosen ? refusalOf(chosen, facts, now) : "token";
}

/** The facts of a hosted session row already loaded (its own state; its links are not in it). */
function sessionRowFacts(session: { endedAt: Date | null; idleExpiresAt: Date; absoluteExpiresAt: Date }): Partial<ChainFacts> {
  return { sessionEndedAt: session.endedAt, sessionIdleExpiresAt: session.idleExpiresAt, sessionAbsoluteExpiresAt: session.absoluteExpiresAt };
}

/** A hosted session row's own state: not ended, within its idle and absolute bounds (the session link). */
export function sessionIsLive(session: { endedAt: Date | null; idleExpiresAt: Date; absoluteExpiresAt: Date }, now: Date): boolean {
  return linkIsLive("session", chains.sessionRecord, sessionRowFacts(session), now);
}

// ---------------------------------------------------------------------------------------------
// SQL form

/** The secret the token or grant was obtained or last used with. */
export const credential = alias(clientSecrets, "credential");
/**
 * The hosted session's organization, the user's membership in it, and the session's enterprise
 * connection: not joined but read by subqueries of the session row, so that a session without an
 * organization or connection (nearly all of them) costs the hot paths no lookup at all. The
 * subqueries read their tables under these aliases.
 */
const sessionOrganization = alias(organizations, "session_organization");
const sessionMembership = alias(organizationMembers, "session_membership");
const sessionConnection = alias(enterpriseConnections, "session_connection");
/** FROM items for the subqueries: the table under its alias (an alias alone renders as its name). */
const organizationFrom = sql`${organizations} ${sql.identifier("session_organization")}`;
const membershipFrom = sql`${organizationMembers} ${sql.identifier("session_membership")}`;
const connectionFrom = sql`${enterpriseConnections} ${sql.identifier("session_connection")}`;

/** The user's membership of the session's organization (at most one row: a unique key). */
const membershipOfSession = sql`${sessionMembership.workspaceId} = ${hostedSessions.workspaceId}
  and ${sessionMembership.organizationId} = ${hostedSessions.organizationId} and ${sessionMembership.userId} = ${hostedSessions.userId}`;

/** The facts the JS twin reads about the organization and connection links (null where there is none). */
export const sessionOrganizationActiveSql = sql<boolean | null>`(select ${sessionOrganization.active} from ${organizationFrom} where ${sessionOrganization.id} = ${hostedSessions.organizationId})`;
export const sessionMembershipIdSql = sql<string | null>`(select ${sessionMembership.id} from ${membershipFrom} where ${membershipOfSession})`;
export const sessionConnectionActiveSql = sql<boolean | null>`(select ${sessionConnection.active} from ${connectionFrom} where ${sessionConnection.id} = ${hostedSessions.connectionId})`;

/** Where a statement's chain starts: the API reference is the token's or the grant's. */
export interface ChainSource {
  apiId: SQLWrapper;
  /** Present when the statement reads an access token: whether that token itself is dead. */
  token?: (now: SQLWrapper) => SQL;
}

export const grantSource: ChainSource = { apiId: grants.apiId };
export const accessTokenSource: ChainSource = {
  apiId: accessTokens.apiId,
  token: (now) => sql`(${accessTokens.revokedAt} is not null or ${passedSql(accessTokens.expiresAt, now)})`,
};

/** What a sealed workload token carries (lib/oauth/workload-token.ts), as the statement's values. */
export interface SealedToken {
  workspaceId: SQLWrapper;
  tokenId: SQLWrapper;
  clientPk: SQLWrapper;
  credentialId: SQLWrapper;
  apiId: SQLWrapper;
  expiresAt: SQLWrapper;
}

/**
 * A sealed workload token: no row, its facts are the statement's values. The token link is dead
 * once it expires or its id is on the deny list (revocation); the rest of the chain as for a
 * stored workload token.
 */
export const sealedTokenSource = (token: SealedToken): ChainSource => ({
  apiId: token.apiId,
  token: (now) => sql`(${passedSql(token.expiresAt, now)} or exists (select 1 from ${revokedWorkloadTokens}
    where ${revokedWorkloadTokens.tokenId} = ${token.tokenId} and ${revokedWorkloadTokens.workspaceId} = ${token.workspaceId}))`,
});
/** A hosted session without a grant (code exchange, the browser's session): no API. */
export const sessionSource: ChainSource = { apiId: sql`null::text` };

const passedSql = (at: SQLWrapper, now: SQLWrapper) => sql`(${at} is null or ${at} <= ${now})`;

/**
 * Whether one link is dead, as a boolean expression that is never NULL: each test names the
 * missing row first (`is null`), so a comparison only sees present values. Mirrors `deadLink`.
 */
export function deadLinkSql(link: Link, chain: Chain, source: ChainSource, now: SQLWrapper): SQL {
  switch (link) {
    case "token":
      return source.token ? source.token(now) : sql`true`;
    case "grant":
      return sql`(${grants.revokedAt} is not null or ${passedSql(grants.idleExpiresAt, now)} or ${passedSql(grants.absoluteExpiresAt, now)})`;
    case "credential":
      return chain.credentialExpiry
        ? sql`(${credential.revokedAt} is not null or ${passedSql(credential.expiresAt, now)})`
        : sql`(${credential.revokedAt} is not null)`;
    case "session":
      return sql`(${hostedSessions.endedAt} is not null or ${passedSql(hostedSessions.idleExpiresAt, now)} or ${passedSql(hostedSessions.absoluteExpiresAt, now)})`;
    case "user":
      return sql`(${users.status} is distinct from 'active')`;
    case "client":
      return sql`(${clients.active} is not true)`;
    case "api":
      return sql`(${source.apiId} is not null and ${apis.active} is not true)`;
    case "organization":
      // CASE: the subquery runs only for a session that has an organization.
      return sql`(case when ${hostedSessions.organizationId} is null then false else not exists (select 1 from ${organizationFrom}
        join ${membershipFrom} on ${membershipOfSession}
        where ${sessionOrganization.id} = ${hostedSessions.organizationId} and ${sessionOrganization.active}) end)`;
    case "connection":
      return sql`(case when ${hostedSessions.connectionId} is null then false else not exists (select 1 from ${connectionFrom}
        where ${sessionConnection.id} = ${hostedSessions.connectionId} and ${sessionConnection.active}) end)`;
  }
}

/** The first dead link of `chain` as a SQL expression (text, null while every link is live). Mirrors `refusalOf`. */
export function refusalSql(chain: Chain, source: ChainSource, now: SQLWrapper): SQL<Link | null> {
  const cases = chain.links.map((link) => sql`when ${deadLinkSql(link, chain, source, now)} then ${sql.raw(`'${link}'`)}`);
  return sql<Link | null>`(case ${sql.join(cases, sql` `)} end)`;
}

/** Whether every link of `chain` is live, as a condition (for a WHERE or a join). */
export function liveSql(chain: Chain, source: ChainSource, now: SQLWrapper): SQL {
  return sql`not (${sql.join(chain.links.map((link) => deadLinkSql(link, chain, source, now)), sql` or `)})`;
}

/** The token-kind rule of `tokenChain` and then `refusalSql`, for statements that read an access token. */
export function tokenRefusalSql(now: SQLWrapper): SQL<Link | null> {
  const t = accessTokens;
  return sql<Link | null>`(case
    when ${t.grantId} is not null and ${t.sessionId} is not null and ${t.userId} is not null then ${refusalSql(chains.humanToken, accessTokenSource, now)}
    when ${t.credentialId} is not null then ${refusalSql(chains.workloadToken, accessTokenSource, now)}
    else 'token' end)`;
}

/** A point in time for the fragments: a prepared statement's placeholder, or a value. */
export const nowPlaceholder = (name = "now"): SQL => sql`${sql.placeholder(name)}::timestamptz`;
export const nowValue = (at: Date): SQL => sql`${at.toISOString()}::timestamptz`;
