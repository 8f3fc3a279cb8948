import { and, eq } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { accessTokens, apis, clients, clientSecrets, grants, hostedSessions, users } from "../../db/schema";
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

/**
 * Resolves an opaque access token with its whole authority chain in one SQL round trip:
 * human tokens through grant, hosted session, user and client; workload tokens through the
 * client and the credential that obtained them. Returns null for unknown tokens.
 */
export async function loadTokenAuthority(ctx: EndpointContext, token: string): Promise<TokenAuthority | null> {
  const now = ctx.service.clock.now();
  const [row] = await ctx.service.db
    .select({
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
    })
    .from(accessTokens)
    .innerJoin(clients, eq(clients.id, accessTokens.clientPk))
    .leftJoin(grants, eq(grants.id, accessTokens.grantId))
    .leftJoin(hostedSessions, eq(hostedSessions.id, accessTokens.sessionId))
    .leftJoin(users, eq(users.id, accessTokens.userId))
    .leftJoin(secret, eq(secret.id, accessTokens.credentialId))
    .leftJoin(apis, eq(apis.id, accessTokens.apiId))
    .where(and(eq(accessTokens.workspaceId, ctx.workspace.id), eq(accessTokens.tokenHash, sha256Hex(token))))
    .limit(1);
  if (!row) return null;
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
      row.userStatus === "active";
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
