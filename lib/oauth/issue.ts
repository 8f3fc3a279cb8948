import { eq, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { param, reusable } from "../../db/reusable";
import { accessTokens, refreshTokens, users } from "../../db/schema";
import { addMs, epochSeconds, MINUTE } from "../clock";
import { randomToken, sha256Hex } from "../crypto";
import type { EndpointContext } from "../http/context";
import type { HostedSession } from "../authn/hosted-session";
import { readEvidence, sessionClaims } from "../authn/evidence";
import { signJwt } from "./keys";
import { IDENTITY_SCOPES, isIdentityScope } from "./scopes";
import { pairwiseSubject } from "./subject";

export const ACCESS_TOKEN_TTL_MS = 5 * MINUTE;
export const ID_TOKEN_TTL_MS = 5 * MINUTE;

export const newAccessToken = () => `lka_${randomToken(32)}`;
export const newRefreshToken = () => `lkr_${randomToken(32)}`;

/**
 * The access token's scope: identity scopes of the grant, plus the requested permissions the
 * client may request and the user holds right now (all three must overlap). One rule, in SQL
 * (effectiveHumanScopeSql): the code exchange runs it as its own statement, refresh rotation
 * inside its one statement.
 */
export async function effectiveHumanScope(
  ctx: EndpointContext,
  input: { requested: string[]; clientPk: string; userId: string; apiId: string | null; organizationId: string | null },
): Promise<string[]> {
  const identity = input.requested.filter(isIdentityScope);
  if (!input.apiId || identity.length === input.requested.length) return identity;
  // Built once (it runs inside the code exchange's transaction).
  const [row] = await scopeStatement(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    requested: JSON.stringify(input.requested),
    clientPk: input.clientPk,
    userId: input.userId,
    apiId: input.apiId,
    organizationId: input.organizationId,
  });
  return row.scope;
}

/**
 * The scope rule as one SQL expression (a jsonb array): identity scopes of `requested` first, then
 * the requested permissions the client's API grant lists and the user holds now through roles in
 * `organizationId` (workspace level when null), each group in requested order. Grant permissions
 * compare as JSON values, role permissions as text. Every value must be typed (`::text`, `::jsonb`).
 */
export function effectiveHumanScopeSql(input: {
  workspaceId: SQLWrapper;
  /** jsonb array of scope values. */
  requested: SQLWrapper;
  clientPk: SQLWrapper;
  userId: SQLWrapper;
  apiId: SQLWrapper;
  organizationId: SQLWrapper;
}): SQL<string[]> {
  const identity = sql.join(IDENTITY_SCOPES.map((s) => sql`${s}`), sql`, `);
  // Tables are aliased: the expression is embedded in statements that may name the same tables.
  return sql<string[]>`coalesce((
    select jsonb_agg(r.value order by r.identity desc, r.ordinality)
    from (select e.value, e.ordinality, e.value in (${identity}) as identity from jsonb_array_elements_text(${input.requested}) with ordinality as e) as r
    where r.identity or (
      ${input.apiId} is not null
      and exists (
        select 1 from api_grants ag, jsonb_array_elements(ag.permissions) as allowed
        where ag.workspace_id = ${input.workspaceId} and ag.client_pk = ${input.clientPk} and ag.api_id = ${input.apiId} and allowed.value = to_jsonb(r.value))
      and exists (
        select 1 from user_roles ur
        join role_permissions rp on rp.role_id = ur.role_id and rp.api_id = ${input.apiId},
        jsonb_array_elements_text(rp.permissions) as held
        where ur.workspace_id = ${input.workspaceId} and ur.user_id = ${input.userId}
          and ur.organization_id is not distinct from ${input.organizationId} and held.value = r.value))
  ), '[]'::jsonb)`;
}

const typed = (name: string) => sql`${param(name)}::text`;

const scopeStatement = reusable("latchkey_effective_scope", (db) =>
  db
    .select({
      scope: effectiveHumanScopeSql({
        workspaceId: typed("workspaceId"),
        requested: sql`${typed("requested")}::jsonb`,
        clientPk: typed("clientPk"),
        userId: typed("userId"),
        apiId: typed("apiId"),
        organizationId: typed("organizationId"),
      }),
    })
    .from(sql`(select 1) as one`),
);

export interface HumanIssue {
  clientPk: string;
  clientId: string;
  grantId: string;
  userId: string;
  sessionId: string;
  scope: string[];
  apiId: string | null;
  /** The DPoP key the access token is bound to (lib/oauth/dpop); null or absent: a bearer token. */
  dpopJkt?: string | null;
}

const at = (name: string) => sql`${param(name)}::timestamptz`;

/** The human access token's insert, built once (the code exchange's; refresh rotation inserts inside its own statement). */
const accessTokenInsert = reusable("latchkey_insert_access_token", (db) =>
  db.insert(accessTokens).values({
    tokenHash: typed("tokenHash"),
    workspaceId: typed("workspaceId"),
    clientPk: typed("clientPk"),
    grantId: typed("grantId"),
    userId: typed("userId"),
    sessionId: typed("sessionId"),
    subject: typed("subject"),
    scope: sql`${param("scope")}::jsonb`,
    apiId: typed("apiId"),
    createdAt: at("createdAt"),
    expiresAt: at("expiresAt"),
    dpopJkt: typed("dpopJkt"),
  }),
);

/** Inserts an opaque 5-minute access token; only its hash is stored. */
export async function insertHumanAccessToken(ctx: EndpointContext, input: HumanIssue, subject: string): Promise<{ token: string; expiresIn: number }> {
  const now = ctx.service.clock.now();
  const token = newAccessToken();
  await accessTokenInsert(ctx.service.db, {
    tokenHash: sha256Hex(token),
    workspaceId: ctx.workspace.id,
    clientPk: input.clientPk,
    grantId: input.grantId,
    userId: input.userId,
    sessionId: input.sessionId,
    subject,
    scope: JSON.stringify(input.scope),
    apiId: input.apiId,
    createdAt: now.toISOString(),
    expiresAt: addMs(now, ACCESS_TOKEN_TTL_MS).toISOString(),
    dpopJkt: input.dpopJkt ?? null,
  });
  return { token, expiresIn: ACCESS_TOKEN_TTL_MS / 1000 };
}

const refreshTokenInsert = reusable("latchkey_insert_refresh_token", (db) =>
  db.insert(refreshTokens).values({
    tokenHash: typed("tokenHash"),
    workspaceId: typed("workspaceId"),
    grantId: typed("grantId"),
    state: "current",
    createdAt: at("createdAt"),
  }),
);

export async function insertRefreshToken(ctx: EndpointContext, grantId: string, token = newRefreshToken()): Promise<string> {
  await refreshTokenInsert(ctx.service.db, {
    tokenHash: sha256Hex(token),
    workspaceId: ctx.workspace.id,
    grantId,
    createdAt: ctx.service.clock.now().toISOString(),
  });
  return token;
}

export interface IdTokenInput {
  clientId: string;
  subject: string;
  /** The authorization request's nonce; null when the flow has none (the device flow): the token then carries no `nonce`. */
  nonce: string | null;
  session: HostedSession;
  scope: string[];
  userId: string;
}

export async function signIdToken(ctx: EndpointContext, input: IdTokenInput): Promise<string> {
  return signJwt(ctx.service, ctx.workspace.id, await idTokenClaims(ctx, input));
}

/** The ID token's claims for a session and scope, as of now (the console's tried sign-in shows them unsigned). */
export async function idTokenClaims(ctx: EndpointContext, input: IdTokenInput): Promise<Record<string, unknown>> {
  const now = ctx.service.clock.now();
  // From what the session recorded, not from its stored labels (a session without a primary event gives no token).
  const authn = sessionClaims(readEvidence(input.session.evidence));
  const claims: Record<string, unknown> = {
    iss: ctx.issuer,
    sub: input.subject,
    aud: input.clientId,
    iat: epochSeconds(now),
    exp: epochSeconds(addMs(now, ID_TOKEN_TTL_MS)),
    ...(input.nonce === null ? {} : { nonce: input.nonce }),
    auth_time: epochSeconds(authn.authTime),
    acr: authn.acr,
    amr: authn.amr,
    sid: input.session.id,
  };
  if (input.session.organizationId) claims.organization_id = input.session.organizationId;
  if (input.session.connectionId) claims.connection_id = input.session.connectionId;
  if (input.scope.includes("email") || input.scope.includes("profile")) {
    const [user] = await ctx.service.db.select({ email: users.email, emailVerified: users.emailVerified, name: users.name }).from(users).where(eq(users.id, input.userId)).limit(1);
    if (user && input.scope.includes("email")) {
      claims.email = user.email;
      claims.email_verified = user.emailVerified === true;
    }
    if (user && input.scope.includes("profile") && user.name && user.name.trim() !== "") claims.name = user.name;
  }
  return claims;
}

export function subjectFor(ctx: EndpointContext, clientId: string, userId: string): string {
  return pairwiseSubject(ctx.service, ctx.workspace.id, clientId, userId, ctx.hostname);
}
