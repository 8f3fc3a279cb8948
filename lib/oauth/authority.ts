import { and, eq, exists, sql } from "drizzle-orm";
import { alias, type SelectedFields } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { reusable } from "../../db/reusable";
import {
  accessTokens,
  apiGrants,
  apis,
  clients,
  clientSecrets,
  grants,
  hostedSessions,
  organizationMembers,
  organizations,
  rolePermissions,
  userRoles,
  users,
} from "../../db/schema";
import { sha256Hex } from "../crypto";
import type { EndpointContext } from "../http/context";
import { sessionIsLive } from "../authn/hosted-session";

interface Common {
  tokenHash: string;
  clientPk: string;
  clientId: string;
  subject: string;
  scope: string[];
  /** The token's audience (API audience), null for identity-only human tokens. */
  audience: string | null;
  apiId: string | null;
  issuedAt: Date;
  expiresAt: Date;
  /** True only while the token and every link of its authority chain are current. */
  active: boolean;
}

export interface HumanToken extends Common {
  kind: "human";
  grantId: string;
  sessionId: string;
  userId: string;
  organizationId: string | null;
  connectionId: string | null;
  email: string;
  emailVerified: boolean;
  name: string | null;
}

export interface WorkloadToken extends Common {
  kind: "workload";
  credentialId: string;
}

export type TokenAuthority = HumanToken | WorkloadToken;

const secret = alias(clientSecrets, "credential");

/** A token and its authority chain: the columns every one-query authority lookup selects. */
const authorityFields = {
  tokenHash: accessTokens.tokenHash,
  clientPk: accessTokens.clientPk,
  grantId: accessTokens.grantId,
  sessionId: accessTokens.sessionId,
  userId: accessTokens.userId,
  credentialId: accessTokens.credentialId,
  subject: accessTokens.subject,
  scope: accessTokens.scope,
  apiId: accessTokens.apiId,
  issuedAt: accessTokens.createdAt,
  expiresAt: accessTokens.expiresAt,
  revokedAt: accessTokens.revokedAt,
  clientId: clients.clientId,
  clientActive: clients.active,
  grantRevokedAt: grants.revokedAt,
  grantAbsoluteExpiresAt: grants.absoluteExpiresAt,
  sessionEndedAt: hostedSessions.endedAt,
  sessionIdleExpiresAt: hostedSessions.idleExpiresAt,
  sessionAbsoluteExpiresAt: hostedSessions.absoluteExpiresAt,
  organizationId: hostedSessions.organizationId,
  connectionId: hostedSessions.connectionId,
  userStatus: users.status,
  email: users.email,
  emailVerified: users.emailVerified,
  name: users.name,
  credentialRevokedAt: secret.revokedAt,
  credentialExpiresAt: secret.expiresAt,
  audience: apis.audience,
  apiActive: apis.active,
};


/** The token row joined to every link of its chain; callers add their columns and the WHERE. */
function selectAuthority<F extends SelectedFields>(db: Database, extra: F) {
  return db
    .select({ ...authorityFields, ...extra })
    .from(accessTokens)
    .innerJoin(clients, eq(clients.id, accessTokens.clientPk))
    .leftJoin(grants, eq(grants.id, accessTokens.grantId))
    .leftJoin(hostedSessions, eq(hostedSessions.id, accessTokens.sessionId))
    .leftJoin(users, eq(users.id, accessTokens.userId))
    // A workload token's own credential; for a human token, the secret its grant was last used
    // with (confidential clients): an explicit revocation of that secret ends the grant's tokens.
    .leftJoin(secret, eq(secret.id, sql`coalesce(${accessTokens.credentialId}, ${grants.credentialId})`))
    .leftJoin(apis, eq(apis.id, accessTokens.apiId));
}

type AuthorityRow = Awaited<ReturnType<typeof selectAuthority<Record<never, never>>>>[number];

/**
 * Resolves an opaque access token with its whole authority chain in one SQL round trip:
 * human tokens through grant, hosted session, user and client; workload tokens through the
 * client and the credential that obtained them. Returns null for unknown tokens.
 */
export async function loadTokenAuthority(ctx: EndpointContext, token: string): Promise<TokenAuthority | null> {
  const now = ctx.service.clock.now();
  const [row] = await lookupStatement(ctx.service.db, { workspaceId: ctx.workspace.id, tokenHash: sha256Hex(token) });
  if (!row) return null;
  return toAuthority(row, now);
}

/** The lookup above, built and prepared once: the session check's, UserInfo's and introspection's hot path. */
const lookupStatement = reusable("latchkey_token_authority", (db) => {
  return selectAuthority(db, {})
    .where(and(eq(accessTokens.workspaceId, sql.placeholder("workspaceId")), eq(accessTokens.tokenHash, sql.placeholder("tokenHash"))))
    .limit(1)
});


/** The confidential client asking about a token, as recalled from memory: the statement re-checks it. */
export interface RecalledCaller {
  clientPk: string;
  clientId: string;
  clientType: string;
  credentialId: string;
}

const caller = alias(clients, "caller");
const callerSecret = alias(clientSecrets, "caller_secret");
const nowParam = sql`${sql.placeholder("now")}::timestamptz`;

/**
 * loadTokenAuthority's lookup, plus whether the caller's secret is unrevoked and unexpired and its
 * client still active, of the type and client_id recalled. Driven from the caller's secret row
 * (the right join), so that answer comes back even for an unknown token; no row means the secret
 * no longer exists. Built and prepared once: introspection's hot path.
 */
const callerLookupStatement = reusable("latchkey_token_authority_for_caller", (db) => {
  return selectAuthority(db, {
    callerLive: sql<boolean>`(${callerSecret.revokedAt} is null and ${callerSecret.expiresAt} > ${nowParam} and ${caller.active} and ${caller.type} = ${sql.placeholder("clientType")} and ${caller.clientId} = ${sql.placeholder("clientId")})`,
  })
    .rightJoin(callerSecret, and(eq(accessTokens.workspaceId, sql.placeholder("workspaceId")), eq(accessTokens.tokenHash, sql.placeholder("tokenHash"))))
    .innerJoin(caller, and(eq(caller.id, callerSecret.clientPk), eq(caller.workspaceId, callerSecret.workspaceId)))
    .where(and(eq(callerSecret.workspaceId, sql.placeholder("workspaceId")), eq(callerSecret.id, sql.placeholder("credentialId")), eq(callerSecret.clientPk, sql.placeholder("clientPk"))))
    .limit(1)
});


/**
 * One SQL round trip for introspection with a memoized caller: the token with its authority chain
 * (exactly as loadTokenAuthority resolves it) and whether the caller's credential is still live.
 */
export async function loadTokenAuthorityForCaller(
  ctx: EndpointContext,
  token: string,
  recalled: RecalledCaller,
): Promise<{ callerLive: boolean; authority: TokenAuthority | null }> {
  const at = ctx.service.clock.now();
  const [row] = await callerLookupStatement(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    tokenHash: sha256Hex(token),
    credentialId: recalled.credentialId,
    clientPk: recalled.clientPk,
    clientId: recalled.clientId,
    clientType: recalled.clientType,
    now: at.toISOString(),
  });
  if (!row) return { callerLive: false, authority: null };
  // Without a token row the right join leaves every token column null.
  const authority = row.tokenHash === null ? null : toAuthority(row as AuthorityRow, at);
  return { callerLive: row.callerLive === true, authority };
}

function toAuthority(row: AuthorityRow, now: Date): TokenAuthority | null {
  const tokenLive = !row.revokedAt && row.expiresAt > now && row.clientActive && (row.apiId === null || row.apiActive === true);
  const common = {
    tokenHash: row.tokenHash,
    clientPk: row.clientPk,
    clientId: row.clientId,
    subject: row.subject,
    scope: row.scope,
    audience: row.audience ?? null,
    apiId: row.apiId,
    issuedAt: row.issuedAt,
    expiresAt: row.expiresAt,
  };
  if (row.grantId && row.sessionId && row.userId) {
    const active =
      tokenLive &&
      row.grantRevokedAt === null &&
      row.grantAbsoluteExpiresAt !== null &&
      row.grantAbsoluteExpiresAt > now &&
      row.sessionIdleExpiresAt !== null &&
      row.sessionAbsoluteExpiresAt !== null &&
      sessionIsLive({ endedAt: row.sessionEndedAt, idleExpiresAt: row.sessionIdleExpiresAt, absoluteExpiresAt: row.sessionAbsoluteExpiresAt }, now) &&
      row.userStatus === "active" &&
      // Mere expiry of the grant's secret is harmless (a rotation's new secret is in use); revocation is not.
      row.credentialRevokedAt === null;
    return {
      ...common,
      kind: "human",
      active,
      grantId: row.grantId,
      sessionId: row.sessionId,
      userId: row.userId,
      organizationId: row.organizationId,
      connectionId: row.connectionId,
      email: row.email ?? "",
      emailVerified: row.emailVerified === true,
      name: row.name,
    };
  }
  if (row.credentialId) {
    const active = tokenLive && row.credentialRevokedAt === null && row.credentialExpiresAt !== null && row.credentialExpiresAt > now;
    return { ...common, kind: "workload", active, credentialId: row.credentialId };
  }
  return null;
}

/** What `/authorization/check` asks about one permission, answered in the same round trip as the token. */
export interface PermissionProbe {
  permission: string;
  /** An organization id, or null for the workspace level. */
  organizationId: string | null;
}

export interface PermissionFacts {
  /** The token's API still defines the permission. */
  apiDefines: boolean;
  /** The client's grant of the token's API still includes the permission (workload: obtainable; human: requestable). */
  clientGrantIncludes: boolean;
  /**
   * Human: a role the user holds now grants the permission on the token's API, at workspace level
   * (probe organization null) or in the probe's organization.
   */
  userHolds: boolean;
  /** Human: the session has no organization, or that organization is active and the user is still its member. */
  sessionOrganizationCurrent: boolean;
}

const permission = sql.placeholder("permission");
const organization = sql.placeholder("organizationId");
const asJsonbArray = sql`jsonb_build_array(${permission}::text)`;

/**
 * The token, its chain and the permission facts in one statement (EXISTS subqueries correlated
 * with the token row), built and prepared once: the permission check's hot path.
 */
const probeStatement = reusable("latchkey_token_permission_probe", (db) => {
  const userHolds = exists(
    db
      .select({ one: sql`1` })
      .from(userRoles)
      .innerJoin(
        rolePermissions,
        and(eq(rolePermissions.workspaceId, userRoles.workspaceId), eq(rolePermissions.roleId, userRoles.roleId), eq(rolePermissions.apiId, accessTokens.apiId)),
      )
      .where(
        and(
          eq(userRoles.workspaceId, accessTokens.workspaceId),
          eq(userRoles.userId, accessTokens.userId),
          sql`${userRoles.organizationId} is not distinct from ${organization}::text`,
          sql`${rolePermissions.permissions} @> ${asJsonbArray}`,
        ),
      ),
  );
  const clientGrantIncludes = exists(
    db
      .select({ one: sql`1` })
      .from(apiGrants)
      .where(
        and(
          eq(apiGrants.workspaceId, accessTokens.workspaceId),
          eq(apiGrants.clientPk, accessTokens.clientPk),
          eq(apiGrants.apiId, accessTokens.apiId),
          sql`${apiGrants.permissions} @> ${asJsonbArray}`,
        ),
      ),
  );
  const sessionOrganizationMember = exists(
    db
      .select({ one: sql`1` })
      .from(organizationMembers)
      .innerJoin(organizations, eq(organizations.id, organizationMembers.organizationId))
      .where(
        and(
          eq(organizationMembers.workspaceId, accessTokens.workspaceId),
          eq(organizationMembers.organizationId, hostedSessions.organizationId),
          eq(organizationMembers.userId, accessTokens.userId),
          eq(organizations.active, true),
        ),
      ),
  );
  return selectAuthority(db, {
    apiDefines: sql<boolean>`coalesce(${apis.permissions} @> ${asJsonbArray}, false)`,
    clientGrantIncludes: sql<boolean>`${clientGrantIncludes}`,
    userHolds: sql<boolean>`(${accessTokens.userId} is not null and ${userHolds})`,
    sessionOrganizationCurrent: sql<boolean>`(${hostedSessions.organizationId} is null or ${sessionOrganizationMember})`,
  })
    .where(and(eq(accessTokens.workspaceId, sql.placeholder("workspaceId")), eq(accessTokens.tokenHash, sql.placeholder("tokenHash"))))
    .limit(1)
});


/**
 * loadTokenAuthority plus the facts about one permission, in one SQL round trip. Nothing is
 * cached between calls: a role or grant change is seen by the next call.
 */
export async function loadTokenAuthorityWithPermission(
  ctx: EndpointContext,
  token: string,
  probe: PermissionProbe,
): Promise<{ authority: TokenAuthority; facts: PermissionFacts } | null> {
  const now = ctx.service.clock.now();
  const [row] = await probeStatement(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    tokenHash: sha256Hex(token),
    permission: probe.permission,
    organizationId: probe.organizationId,
  });
  if (!row) return null;
  const authority = toAuthority(row, now);
  if (!authority) return null;
  return {
    authority,
    facts: {
      apiDefines: row.apiDefines === true,
      clientGrantIncludes: row.clientGrantIncludes === true,
      userHolds: row.userHolds === true,
      sessionOrganizationCurrent: row.sessionOrganizationCurrent === true,
    },
  };
}
