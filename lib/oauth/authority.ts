import { and, eq, exists, sql } from "drizzle-orm";
import { reusable } from "../../db/reusable";
import { accessTokens, apiGrants, apis, clients, grants, hostedSessions, rolePermissions, userRoles, users } from "../../db/schema";
import { sha256Hex } from "../crypto";
import type { EndpointContext } from "../http/context";
import {
  chains,
  nowPlaceholder,
  selectAccessTokenChainForCaller,
  selectAccessTokenVerdict,
  selectSealedTokenVerdict,
  selectSealedTokenVerdictForCaller,
  tokenChain,
  type Link,
  type SealedToken,
} from "../authority";
import { isWorkloadTokenFormat, openWorkloadToken, type WorkloadTokenClaims } from "./workload-token";

interface Common {
  clientPk: string;
  clientId: string;
  subject: string;
  scope: string[];
  /** The token's audience (API audience), null for identity-only human tokens. */
  audience: string | null;
  apiId: string | null;
  issuedAt: Date;
  expiresAt: Date;
  /** True only while the token and every link of its authority chain are current (lib/authority). */
  active: boolean;
  /** The DPoP key the token is bound to (lib/oauth/dpop, `cnf.jkt`); null: a bearer token. */
  jkt: string | null;
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

/** The token's own columns and what the answers show; the chain's facts and `refusal` come with the builder. */
const tokenFields = {
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
  clientId: clients.clientId,
  email: users.email,
  emailVerified: users.emailVerified,
  name: users.name,
  audience: apis.audience,
  organizationId: hostedSessions.organizationId,
  connectionId: hostedSessions.connectionId,
  /** The hostname the token's grant was made under (lib/hostnames): a human token is answered under that issuer only. */
  hostname: grants.hostname,
  dpopJkt: accessTokens.dpopJkt,
};

type TokenRow = Awaited<ReturnType<typeof lookupStatement>>[number];

const at = (ctx: EndpointContext) => ctx.service.clock.now();
const workspaceId = sql.placeholder("workspaceId");
const tokenHash = sql.placeholder("tokenHash");

/**
 * Resolves an opaque access token with its whole authority chain in one SQL round trip:
 * human tokens through grant, hosted session, user, client, credential, API, the session's
 * organization and connection; workload tokens through the client, the credential that obtained
 * them and the API. Returns null for unknown tokens.
 */
export async function loadTokenAuthority(ctx: EndpointContext, token: string): Promise<TokenAuthority | null> {
  if (isWorkloadTokenFormat(token)) {
    const claims = openSealed(ctx, token);
    if (!claims) return null;
    const [sealed] = await sealedLookupStatement(ctx.service.db, sealedValues(ctx, claims));
    return sealed ? sealedAuthority(claims, sealed) : null;
  }
  const [row] = await lookupStatement(ctx.service.db, { workspaceId: ctx.workspace.id, tokenHash: sha256Hex(token), now: at(ctx).toISOString() });
  if (!row || !issuedHere(ctx, row)) return null;
  return toAuthority(row);
}

/** The lookup above, built and prepared once: the session check's, UserInfo's and introspection's hot path. */
const lookupStatement = reusable("latchkey_token_authority", (db) =>
  selectAccessTokenVerdict(db, nowPlaceholder(), tokenFields)
    .where(and(eq(accessTokens.workspaceId, workspaceId), eq(accessTokens.tokenHash, tokenHash)))
    .limit(1),
);

/** The confidential client asking about a token, as recalled from memory: the statement re-checks it. */
export interface RecalledCaller {
  clientPk: string;
  clientId: string;
  clientType: string;
  credentialId: string;
}

/**
 * loadTokenAuthority's lookup, plus whether the caller's secret is unrevoked and unexpired and its
 * client still active, of the type and client_id recalled. Built and prepared once: introspection's
 * hot path.
 */
const callerLookupStatement = reusable("latchkey_token_authority_for_caller", (db) =>
  selectAccessTokenChainForCaller(db, nowPlaceholder(), tokenFields, {
    workspaceId,
    tokenHash,
    credentialId: sql.placeholder("credentialId"),
    clientPk: sql.placeholder("clientPk"),
    clientType: sql.placeholder("clientType"),
    clientId: sql.placeholder("clientId"),
  }).limit(1),
);

/**
 * One SQL round trip for introspection with a memoized caller: the token with its authority chain
 * (exactly as loadTokenAuthority resolves it) and whether the caller's credential is still live.
 */
export async function loadTokenAuthorityForCaller(
  ctx: EndpointContext,
  token: string,
  recalled: RecalledCaller,
): Promise<{ callerLive: boolean; authority: TokenAuthority | null }> {
  // A sealed token that does not open, or is another client's, is inactive whatever its chain: the
  // stored-token statement below then confirms the caller alone (no row has a sealed token's hash).
  const claims = isWorkloadTokenFormat(token) ? openSealed(ctx, token) : null;
  if (claims && claims.clientPk === recalled.clientPk) {
    const [sealed] = await sealedCallerStatement(ctx.service.db, {
      ...sealedValues(ctx, claims),
      callerCredentialId: recalled.credentialId,
      clientType: recalled.clientType,
      clientId: recalled.clientId,
    });
    if (!sealed) return { callerLive: false, authority: null };
    return { callerLive: sealed.callerLive === true, authority: sealedAuthority(claims, sealed) };
  }
  const [row] = await callerLookupStatement(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    tokenHash: sha256Hex(token),
    credentialId: recalled.credentialId,
    clientPk: recalled.clientPk,
    clientId: recalled.clientId,
    clientType: recalled.clientType,
    now: at(ctx).toISOString(),
  });
  if (!row) return { callerLive: false, authority: null };
  // Without a token row the right join leaves every token column null.
  const authority = row.tokenHash === null || !issuedHere(ctx, row as TokenRow) ? null : toAuthority(row as TokenRow);
  return { callerLive: row.callerLive === true, authority };
}

// ---------------------------------------------------------------------------------------------
// Sealed workload tokens (lib/oauth/workload-token.ts): the claims come from the token, the
// current authority from one statement by primary keys (lib/authority, selectSealedTokenVerdict).

const sealedToken: SealedToken = {
  workspaceId,
  tokenId: sql.placeholder("tokenId"),
  clientPk: sql.placeholder("clientPk"),
  credentialId: sql.placeholder("credentialId"),
  apiId: sql`${sql.placeholder("apiId")}::text`,
  expiresAt: sql`${sql.placeholder("expiresAt")}::timestamptz`,
};
const sealedFields = { clientId: clients.clientId, audience: apis.audience };
const sealedWhere = () => and(eq(clients.workspaceId, workspaceId), eq(clients.id, sql.placeholder("clientPk")));

const sealedLookupStatement = reusable("latchkey_sealed_token_authority", (db) =>
  selectSealedTokenVerdict(db, nowPlaceholder(), sealedToken, sealedFields).where(sealedWhere()).limit(1),
);

const sealedCallerStatement = reusable("latchkey_sealed_token_authority_for_caller", (db) =>
  selectSealedTokenVerdictForCaller(db, nowPlaceholder(), sealedToken, sealedFields, {
    credentialId: sql.placeholder("callerCredentialId"),
    clientType: sql.placeholder("clientType"),
    clientId: sql.placeholder("clientId"),
  })
    .where(sealedWhere())
    .limit(1),
);

function openSealed(ctx: EndpointContext, token: string): WorkloadTokenClaims | null {
  return openWorkloadToken(ctx.service.config.masterKey, ctx.workspace.id, ctx.hostname, token, at(ctx));
}

function sealedValues(ctx: EndpointContext, claims: WorkloadTokenClaims) {
  return {
    workspaceId: ctx.workspace.id,
    tokenId: claims.id,
    clientPk: claims.clientPk,
    credentialId: claims.credentialId,
    apiId: claims.apiId,
    expiresAt: claims.expiresAt.toISOString(),
    now: at(ctx).toISOString(),
  };
}

function sealedAuthority(claims: WorkloadTokenClaims, row: { refusal: Link | null; clientId: string; audience: string | null }): WorkloadToken {
  return {
    kind: "workload",
    clientPk: claims.clientPk,
    clientId: row.clientId,
    subject: row.clientId,
    scope: claims.scope,
    audience: row.audience,
    apiId: claims.apiId,
    issuedAt: claims.issuedAt,
    expiresAt: claims.expiresAt,
    credentialId: claims.credentialId,
    active: row.refusal === null,
    jkt: null,
  };
}

/**
 * Whether a stored token was issued under the issuer asked: a human token's grant remembers the
 * hostname it was made under (lib/hostnames), and the client pinned that exact issuer, so under
 * another hostname of the same workspace the token is unknown. A sealed workload token is bound
 * to its host by its seal (lib/oauth/workload-token.ts); a stored one, from before tokens were
 * sealed, has no grant and lives out its five minutes wherever it is shown.
 */
function issuedHere(ctx: EndpointContext, row: Pick<TokenRow, "grantId" | "hostname">): boolean {
  return row.grantId === null || (row.hostname ?? null) === ctx.hostname;
}

/** The token as the endpoints see it; `active` is the statement's judgment of the chain (`refusal`). */
function toAuthority(row: TokenRow): TokenAuthority | null {
  const kind = tokenChain({ tokenGrantId: row.grantId, tokenSessionId: row.sessionId, tokenUserId: row.userId, tokenCredentialId: row.credentialId });
  const common = {
    clientPk: row.clientPk,
    clientId: row.clientId,
    subject: row.subject,
    scope: row.scope,
    audience: row.audience ?? null,
    apiId: row.apiId,
    issuedAt: row.issuedAt,
    expiresAt: row.expiresAt,
    active: row.refusal === null,
    jkt: row.dpopJkt,
  };
  if (kind === chains.humanToken) {
    return {
      ...common,
      kind: "human",
      grantId: row.grantId!,
      sessionId: row.sessionId!,
      userId: row.userId!,
      organizationId: row.organizationId,
      connectionId: row.connectionId,
      email: row.email ?? "",
      emailVerified: row.emailVerified === true,
      name: row.name,
    };
  }
  if (kind === chains.workloadToken) return { ...common, kind: "workload", credentialId: row.credentialId! };
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
  /**
   * Human: the session has no organization, or that organization is active and the user is still
   * its member; and no enterprise connection, or that connection is active (the chain's
   * organization and connection links).
   */
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
  return selectAccessTokenVerdict(db, nowPlaceholder(), {
    ...tokenFields,
    apiDefines: sql<boolean>`coalesce(${apis.permissions} @> ${asJsonbArray}, false)`,
    clientGrantIncludes: sql<boolean>`${clientGrantIncludes}`,
    userHolds: sql<boolean>`(${accessTokens.userId} is not null and ${userHolds})`,
  })
    .where(and(eq(accessTokens.workspaceId, workspaceId), eq(accessTokens.tokenHash, tokenHash)))
    .limit(1);
});

/**
 * loadTokenAuthority plus the facts about one permission, in one SQL round trip. Nothing is
 * cached between calls: a role or grant change is seen by the next call. `refusal` is the token's
 * first dead link (lib/authority), null while it is active.
 */
export async function loadTokenAuthorityWithPermission(
  ctx: EndpointContext,
  token: string,
  probe: PermissionProbe,
): Promise<{ authority: TokenAuthority; facts: PermissionFacts; refusal: Link | null } | null> {
  if (isWorkloadTokenFormat(token)) {
    const claims = openSealed(ctx, token);
    if (!claims) return null;
    const [sealed] = await sealedProbeStatement(ctx.service.db, { ...sealedValues(ctx, claims), permission: probe.permission });
    if (!sealed) return null;
    return {
      authority: sealedAuthority(claims, sealed),
      refusal: sealed.refusal,
      facts: { apiDefines: sealed.apiDefines === true, clientGrantIncludes: sealed.clientGrantIncludes === true, userHolds: false, sessionOrganizationCurrent: true },
    };
  }
  const now = at(ctx);
  const [row] = await probeStatement(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    tokenHash: sha256Hex(token),
    permission: probe.permission,
    organizationId: probe.organizationId,
    now: now.toISOString(),
  });
  if (!row || !issuedHere(ctx, row)) return null;
  const authority = toAuthority(row);
  if (!authority) return null;
  // The organization and connection are the chain's last links: a refusal naming either means every
  // other link holds (lib/authority/chain.ts, LINKS).
  const sessionOrganizationCurrent = row.refusal !== "organization" && row.refusal !== "connection";
  return {
    authority,
    refusal: row.refusal,
    facts: {
      apiDefines: row.apiDefines === true,
      clientGrantIncludes: row.clientGrantIncludes === true,
      userHolds: row.userHolds === true,
      sessionOrganizationCurrent,
    },
  };
}

/** The permission facts of a sealed workload token: its API still defines the permission, and its client's grant still includes it. */
const sealedProbeStatement = reusable("latchkey_sealed_token_permission_probe", (db) => {
  const clientGrantIncludes = exists(
    db
      .select({ one: sql`1` })
      .from(apiGrants)
      .where(
        and(
          eq(apiGrants.workspaceId, workspaceId),
          eq(apiGrants.clientPk, clients.id),
          eq(apiGrants.apiId, sealedToken.apiId),
          sql`${apiGrants.permissions} @> ${asJsonbArray}`,
        ),
      ),
  );
  return selectSealedTokenVerdict(db, nowPlaceholder(), sealedToken, {
    ...sealedFields,
    apiDefines: sql<boolean>`coalesce(${apis.permissions} @> ${asJsonbArray}, false)`,
    clientGrantIncludes: sql<boolean>`${clientGrantIncludes}`,
  })
    .where(sealedWhere())
    .limit(1);
});
