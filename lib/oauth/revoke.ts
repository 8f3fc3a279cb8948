import { and, eq, isNull } from "drizzle-orm";
import { accessTokens, grants, refreshTokens, revokedWorkloadTokens } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { sha256Hex } from "../crypto";
import type { Endpoint, EndpointContext } from "../http/context";
import { answerUnknownClientError, withCors } from "./cors";
import { errorToResponse, invalidRequest } from "./errors";
import { readOAuthForm } from "./form";
import { inTransaction } from "../http/transaction";
import { authenticateClient, type AuthenticatedClient } from "./clients";
import { revokeGrant } from "./grants/refresh-token";
import { subjectFor } from "./issue";
import { lightResponse } from "../http/response";
import { isWorkloadTokenFormat, openWorkloadToken } from "./workload-token";

/**
 * Body parameters of revocation and introspection. The client-authentication names are let
 * through the form reader so authenticateClient refuses them with its own, clearer message.
 */
export const TOKEN_ENDPOINT_PARAMETERS: ReadonlySet<string> = new Set([
  "token",
  "token_type_hint",
  "client_id",
  "client_secret",
  "client_assertion",
  "client_assertion_type",
]);

export type TokenKind = "access_token" | "refresh_token";

/**
 * The token and the order to look for it in. RFC 7009/7662: the hint only orders the search; a
 * token not found under the hinted type is still looked for under the other. A hint outside the
 * registry's two values is a bad field (400), not silently ignored.
 */
export function readTokenParameters(params: Map<string, string>): { token: string; order: [TokenKind, TokenKind] } {
  const token = params.get("token");
  if (!token) throw invalidRequest("token is required");
  const hint = params.get("token_type_hint");
  if (hint !== undefined && hint !== "access_token" && hint !== "refresh_token") {
    throw invalidRequest("token_type_hint must be access_token or refresh_token");
  }
  // Without a hint, our own prefixes say which table to try first.
  const refreshFirst = hint === "refresh_token" || (hint === undefined && token.startsWith("lkr_"));
  return { token, order: refreshFirst ? ["refresh_token", "access_token"] : ["access_token", "refresh_token"] };
}

const REASON = "revocation_endpoint";

/**
 * Ends a grant (refresh family) and every access token issued from it: the revocation of
 * POST /oauth2/revoke and of the account-security portal's "sign out of this application". True
 * when this call ended the grant (false: it was already revoked, or is not this workspace's).
 */
export async function revokeGrantAndTokens(ctx: EndpointContext, grantId: string, reason: string): Promise<boolean> {
  const now = ctx.service.clock.now();
  const effective = await revokeGrant(ctx, grantId, reason);
  // Access tokens already die with their family (every check joins it); marking them as well keeps
  // each row honest on its own.
  await ctx.service.db
    .update(accessTokens)
    .set({ revokedAt: now })
    .where(and(eq(accessTokens.workspaceId, ctx.workspace.id), eq(accessTokens.grantId, grantId), isNull(accessTokens.revokedAt)));
  return effective;
}

/** Ends a grant (refresh family) and marks its access tokens revoked; records the audit event once. */
async function revokeFamily(ctx: EndpointContext, client: AuthenticatedClient, grantId: string, userId: string, presented: TokenKind): Promise<void> {
  const now = ctx.service.clock.now();
  if (!(await revokeGrantAndTokens(ctx, grantId, REASON))) return;
  await recordAudit(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    type: "grant.revoked",
    clientId: client.client.clientId,
    subject: subjectFor(ctx, client.client.clientId, userId),
    reason: REASON,
    data: { grant_id: grantId, token_type: presented },
    at: now,
  });
}

/** The audit event of a workload token's revocation (stored or sealed). */
async function workloadTokenRevoked(ctx: EndpointContext, client: AuthenticatedClient, subject: string, now: Date): Promise<void> {
  await recordAudit(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    type: "token.revoked",
    clientId: client.client.clientId,
    subject,
    reason: REASON,
    data: { token_type: "access_token", principal_type: "workload" },
    at: now,
  });
}

/**
 * A sealed workload token (lib/oauth/workload-token.ts) revokes only itself: its id goes on the
 * deny list until the token's expiry. True when the token opened (whether or not it was this
 * client's); an expired one is already dead and needs no entry.
 */
async function revokeSealedToken(ctx: EndpointContext, client: AuthenticatedClient, token: string): Promise<boolean> {
  const now = ctx.service.clock.now();
  const claims = openWorkloadToken(ctx.service.config.masterKey, ctx.workspace.id, ctx.hostname, token, now);
  if (!claims) return false;
  if (claims.clientPk !== client.client.id || claims.expiresAt.getTime() <= now.getTime()) return true;
  const denied = await ctx.service.db
    .insert(revokedWorkloadTokens)
    .values({ tokenId: claims.id, workspaceId: ctx.workspace.id, clientPk: claims.clientPk, expiresAt: claims.expiresAt, revokedAt: now })
    .onConflictDoNothing()
    .returning({ tokenId: revokedWorkloadTokens.tokenId });
  if (denied.length > 0) await workloadTokenRevoked(ctx, client, client.client.clientId, now);
  return true;
}

/** Returns true when the token was found in that table (whether or not it belonged to this client). */
async function revokeAccessToken(ctx: EndpointContext, client: AuthenticatedClient, token: string, hash: string): Promise<boolean> {
  if (isWorkloadTokenFormat(token)) return revokeSealedToken(ctx, client, token);
  const [row] = await ctx.service.db
    .select({ clientPk: accessTokens.clientPk, grantId: accessTokens.grantId, userId: accessTokens.userId, subject: accessTokens.subject })
    .from(accessTokens)
    .where(and(eq(accessTokens.workspaceId, ctx.workspace.id), eq(accessTokens.tokenHash, hash)))
    .limit(1);
  if (!row) return false;
  // Another client's token: no effect, and the answer is the same 200.
  if (row.clientPk !== client.client.id) return true;
  if (row.grantId && row.userId) {
    await revokeFamily(ctx, client, row.grantId, row.userId, "access_token");
    return true;
  }
  // A workload (M2M) token revokes only itself.
  const now = ctx.service.clock.now();
  const revoked = await ctx.service.db
    .update(accessTokens)
    .set({ revokedAt: now })
    .where(and(eq(accessTokens.workspaceId, ctx.workspace.id), eq(accessTokens.tokenHash, hash), isNull(accessTokens.revokedAt)))
    .returning({ hash: accessTokens.tokenHash });
  if (revoked.length > 0) await workloadTokenRevoked(ctx, client, row.subject, now);
  return true;
}

async function revokeRefreshToken(ctx: EndpointContext, client: AuthenticatedClient, hash: string): Promise<boolean> {
  const [row] = await ctx.service.db
    .select({ grantId: refreshTokens.grantId, clientPk: grants.clientPk, userId: grants.userId })
    .from(refreshTokens)
    .innerJoin(grants, eq(grants.id, refreshTokens.grantId))
    .where(and(eq(refreshTokens.workspaceId, ctx.workspace.id), eq(refreshTokens.tokenHash, hash)))
    .limit(1);
  if (!row) return false;
  if (row.clientPk === client.client.id) await revokeFamily(ctx, client, row.grantId, row.userId, "refresh_token");
  return true;
}

/**
 * POST /oauth2/revoke (RFC 7009). The client authenticates as on the token endpoint. A human
 * token, access or refresh, ends its whole grant (refresh family) and every access token issued
 * from it; a workload token ends only itself (a sealed one through the deny list). The answer is 200 with no body whether the token
 * was revoked, unknown, already dead or another client's, so nothing about it is disclosed.
 * Database failures surface as 503: never a partial "success" by guess.
 */
export const revokeEndpoint: Endpoint = async (request, ctx) => {
  let params: Map<string, string>;
  let client: AuthenticatedClient;
  try {
    params = await readOAuthForm(request, TOKEN_ENDPOINT_PARAMETERS);
    client = await authenticateClient(request, params, ctx);
  } catch (error) {
    return answerUnknownClientError(error, request, ctx);
  }
  // From here on a browser client may read the answer, errors included.
  try {
    const { token, order } = readTokenParameters(params);
    const hash = sha256Hex(token);
    // One transaction: the family, its access tokens and the audit event change together or not at all.
    await inTransaction(ctx, async (tx) => {
      for (const kind of order) {
        const found = kind === "access_token" ? await revokeAccessToken(tx, client, token, hash) : await revokeRefreshToken(tx, client, hash);
        if (found) return;
      }
    });
    return withCors(lightResponse(null, 200, { "Cache-Control": "no-store", Pragma: "no-cache" }), client.corsOrigin);
  } catch (error) {
    return withCors(errorToResponse(error), client.corsOrigin);
  }
};
