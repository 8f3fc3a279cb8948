import { and, eq } from "drizzle-orm";
import { accessTokens, clients, grants, hostedSessions, users } from "../../db/schema";
import { sha256Hex } from "../crypto";
import type { EndpointContext } from "../http/context";
import { OAuthError } from "../http/errors";
import { sessionIsLive } from "../authn/hosted-session";

export function invalidToken(description = "The access token is invalid or expired"): OAuthError {
  return new OAuthError(401, "invalid_token", description, {
    headers: { "WWW-Authenticate": `Bearer error="invalid_token", error_description="${description}"` },
  });
}

/** The bearer token of `Authorization: Bearer <token>`; a missing or malformed header is a 401. */
export function readBearer(request: Request): string {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(header) : null;
  if (!match) {
    throw new OAuthError(401, "invalid_request", "A bearer access token is required", { headers: { "WWW-Authenticate": 'Bearer realm="latchkey"' } });
  }
  return match[1];
}

export interface HumanAuthority {
  clientId: string;
  subject: string;
  scope: string[];
  expiresAt: Date;
  userId: string;
  organizationId: string | null;
  connectionId: string | null;
  email: string;
  emailVerified: boolean;
  name: string | null;
}

/**
 * One SQL round trip: the token joined with its grant, hosted session, user and client. Every
 * link must be current: a revoked grant, ended session, disabled user or client denies.
 */
export async function loadHumanAuthority(ctx: EndpointContext, token: string): Promise<HumanAuthority | null> {
  const now = ctx.service.clock.now();
  const [row] = await ctx.service.db
    .select({
      tokenExpiresAt: accessTokens.expiresAt,
      tokenRevokedAt: accessTokens.revokedAt,
      subject: accessTokens.subject,
      scope: accessTokens.scope,
      grantRevokedAt: grants.revokedAt,
      grantAbsoluteExpiresAt: grants.absoluteExpiresAt,
      sessionEndedAt: hostedSessions.endedAt,
      sessionIdleExpiresAt: hostedSessions.idleExpiresAt,
      sessionAbsoluteExpiresAt: hostedSessions.absoluteExpiresAt,
      organizationId: hostedSessions.organizationId,
      connectionId: hostedSessions.connectionId,
      userId: users.id,
      userStatus: users.status,
      email: users.email,
      emailVerified: users.emailVerified,
      name: users.name,
      clientId: clients.clientId,
      clientActive: clients.active,
    })
    .from(accessTokens)
    .innerJoin(grants, eq(grants.id, accessTokens.grantId))
    .innerJoin(hostedSessions, eq(hostedSessions.id, accessTokens.sessionId))
    .innerJoin(users, eq(users.id, accessTokens.userId))
    .innerJoin(clients, eq(clients.id, accessTokens.clientPk))
    .where(and(eq(accessTokens.workspaceId, ctx.workspace.id), eq(accessTokens.tokenHash, sha256Hex(token))))
    .limit(1);
  if (!row) return null;
  const live =
    !row.tokenRevokedAt &&
    row.tokenExpiresAt > now &&
    !row.grantRevokedAt &&
    row.grantAbsoluteExpiresAt > now &&
    sessionIsLive({ endedAt: row.sessionEndedAt, idleExpiresAt: row.sessionIdleExpiresAt, absoluteExpiresAt: row.sessionAbsoluteExpiresAt }, now) &&
    row.userStatus === "active" &&
    row.clientActive;
  if (!live || !row.scope.includes("openid")) return null;
  return {
    clientId: row.clientId,
    subject: row.subject,
    scope: row.scope,
    expiresAt: row.tokenExpiresAt,
    userId: row.userId,
    organizationId: row.organizationId,
    connectionId: row.connectionId,
    email: row.email,
    emailVerified: row.emailVerified,
    name: row.name,
  };
}
