import { and, eq, exists, isNull, sql } from "drizzle-orm";
import { reusable } from "../../../db/reusable";
import { clients, clientSecrets, grants, hostedSessions, refreshTokens, users } from "../../../db/schema";
import { sha256Hex } from "../../crypto";
import type { EndpointContext } from "../../http/context";
import { invalidGrant, invalidRequest, invalidScope } from "../../http/errors";
import { sessionIsLive } from "../../authn/hosted-session";
import { recordAudit } from "../../audit/events";
import { effectiveHumanScope, insertHumanAccessToken, insertRefreshToken, newRefreshToken, subjectFor } from "../issue";
import { hasDuplicates, splitScope } from "../scopes";
import { REFRESH_IDLE_MS } from "./authorization-code";
import { inTransaction } from "../../http/transaction";
import type { GrantHandler } from "./types";

/** Revokes a grant (refresh family); its access tokens stop passing every check because they join it. */
export async function revokeGrant(ctx: EndpointContext, grantId: string, reason: string): Promise<boolean> {
  const now = ctx.service.clock.now();
  const revoked = await ctx.service.db
    .update(grants)
    .set({ revokedAt: now, revokeReason: reason })
    .where(and(eq(grants.workspaceId, ctx.workspace.id), eq(grants.id, grantId), isNull(grants.revokedAt)))
    .returning({ id: grants.id });
  return revoked.length > 0;
}

const param = (name: string) => sql.placeholder(name);

/**
 * The superseding update and the read of the family's authority in one statement (the update as a
 * CTE, joined to the family, its session, user, client and last-used credential), built once.
 */
const rotateStatement = reusable("latchkey_refresh_rotation", (db) => {
  const rotation = db.$with("rotated").as(
    db
      .update(refreshTokens)
      .set({ state: "superseded", supersededAt: sql`${param("now")}::timestamptz`, replacedByHash: sql`${param("successorHash")}` })
      .where(
        and(
          eq(refreshTokens.workspaceId, param("workspaceId")),
          eq(refreshTokens.tokenHash, param("tokenHash")),
          eq(refreshTokens.state, "current"),
          exists(db.select({ one: grants.id }).from(grants).where(and(eq(grants.id, refreshTokens.grantId), isNull(grants.revokedAt)))),
        ),
      )
      .returning({ grantId: refreshTokens.grantId }),
  );
  return db
    .with(rotation)
    .select({
      grantId: rotation.grantId,
      grant: grants,
      session: hostedSessions,
      userStatus: users.status,
      clientActive: clients.active,
      credentialRevokedAt: clientSecrets.revokedAt,
    })
    .from(rotation)
    .leftJoin(grants, and(eq(grants.id, rotation.grantId), eq(grants.workspaceId, param("workspaceId"))))
    .leftJoin(hostedSessions, eq(hostedSessions.id, grants.sessionId))
    .leftJoin(users, eq(users.id, grants.userId))
    .leftJoin(clients, eq(clients.id, grants.clientPk))
    .leftJoin(clientSecrets, eq(clientSecrets.id, grants.credentialId));
});

export const refreshTokenGrant: GrantHandler = {
  grantType: "refresh_token",
  parameters: new Set(["grant_type", "refresh_token", "scope", "client_id"]),
  handle(params, { client, credentialId }, outer) {
    return inTransaction(outer, async (ctx) => {
      const presented = params.get("refresh_token");
      if (!presented) throw invalidRequest("refresh_token is required");
      if (client.type === "M2M") throw invalidRequest("This client cannot use the refresh_token grant");
      let narrowed: string[] | null = null;
      if (params.has("scope")) {
        narrowed = splitScope(params.get("scope")!);
        if (!narrowed || hasDuplicates(narrowed)) throw invalidScope("scope is malformed or duplicated");
      }
      const db = ctx.service.db;
      const now = ctx.service.clock.now();
      const hash = sha256Hex(presented);
      const successor = newRefreshToken();
      // Supersede in one conditional update that records the replacement and checks, atomically,
      // that the family is not revoked. Of many parallel presentations exactly one wins; the rest
      // see a superseded token, count as reuse and revoke the family (after the winner's check).
      const [rotated] = await rotateStatement(db, { workspaceId: ctx.workspace.id, tokenHash: hash, now: now.toISOString(), successorHash: sha256Hex(successor) });
      if (!rotated) {
        const [old] = await db
          .select({ grantId: refreshTokens.grantId, clientPk: grants.clientPk, userId: grants.userId })
          .from(refreshTokens)
          .innerJoin(grants, eq(grants.id, refreshTokens.grantId))
          .where(and(eq(refreshTokens.workspaceId, ctx.workspace.id), eq(refreshTokens.tokenHash, hash)))
          .limit(1);
        if (old && old.clientPk === client.id) {
          // Reuse of a superseded token: the family may be stolen. End it and everything issued from it.
          if (await revokeGrant(ctx, old.grantId, "refresh_token_reuse")) {
            await recordAudit(db, {
              workspaceId: ctx.workspace.id,
              type: "refresh.reuse_detected",
              clientId: client.clientId,
              subject: subjectFor(ctx, client.clientId, old.userId),
              reason: "refresh_token_reuse",
              flagged: "possible_token_theft",
              data: { grant_id: old.grantId },
              at: now,
            });
          }
        }
        throw invalidGrant("The refresh token is invalid, expired or revoked");
      }

      // Every link is a foreign key of the family, so all are present; should one not be, refuse as before.
      const { grant: rotatedGrant, session, userStatus, clientActive } = rotated;
      if (!rotatedGrant || !session || userStatus === null || clientActive === null || rotatedGrant.clientPk !== client.id) {
        throw invalidGrant("The refresh token was issued to another client");
      }
      const row = { grant: rotatedGrant, session, userStatus, clientActive, credentialRevokedAt: rotated.credentialRevokedAt };
      const g = row.grant;
      // Revocation was checked atomically above; a revocation racing after it ends the new tokens through their family.
      if (g.idleExpiresAt <= now || g.absoluteExpiresAt <= now) throw invalidGrant("The refresh token has expired");
      // The secret this grant was last used with may have expired (harmless: a newer one is in use
      // now) but not been revoked: explicit revocation or immediate replacement ends the grant.
      if (row.credentialRevokedAt) throw invalidGrant("The client credential behind this authorization was revoked");
      if (!sessionIsLive(row.session, now) || row.userStatus !== "active" || !row.clientActive) {
        throw invalidGrant("The session or authorization behind this refresh token has ended");
      }
      if (narrowed && narrowed.some((s) => !g.scope.includes(s))) throw invalidScope("scope may only narrow the original grant");

      const idle = new Date(Math.min(now.getTime() + REFRESH_IDLE_MS, g.absoluteExpiresAt.getTime()));
      const scope = await effectiveHumanScope(ctx, {
        requested: narrowed ?? g.scope,
        clientPk: client.id,
        userId: g.userId,
        apiId: g.apiId,
        organizationId: row.session.organizationId,
      });
      const subject = subjectFor(ctx, client.clientId, g.userId);
      // The three writes are sent together: pipelined on the transaction's connection, one round trip.
      const [access] = await Promise.all([
        insertHumanAccessToken(ctx, { clientPk: client.id, clientId: client.clientId, grantId: g.id, userId: g.userId, sessionId: g.sessionId, scope, apiId: g.apiId }, subject),
        insertRefreshToken(ctx, g.id, successor),
        db
          .update(grants)
          .set({ lastUsedAt: now, idleExpiresAt: idle, ...(credentialId ? { credentialId } : {}) })
          .where(eq(grants.id, g.id)),
      ]);
      return { access_token: access.token, token_type: "Bearer", expires_in: access.expiresIn, scope: scope.join(" "), refresh_token: successor };
    });
  },
};
