import { and, eq, isNull, sql } from "drizzle-orm";
import { param, reusable } from "../../../db/reusable";
import { authorizationCodes, grants, hostedSessions } from "../../../db/schema";
import { nowPlaceholder, selectHostedSessionChain } from "../../authority";
import { addMs, DAY } from "../../clock";
import { newId, sha256Base64Url, sha256Hex } from "../../crypto";
import type { EndpointContext } from "../../http/context";
import { invalidGrant, invalidRequest } from "../errors";
import { recordAudit } from "../../audit/events";
import { effectiveHumanScope, insertHumanAccessToken, insertRefreshToken, signIdToken, subjectFor } from "../issue";
import { inTransaction } from "../../http/transaction";
import type { GrantHandler } from "./types";

export const REFRESH_IDLE_MS = 7 * DAY;
export const REFRESH_ABSOLUTE_MS = 30 * DAY;
/** RFC 7636 §4.1: 43–128 characters from the unreserved set. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

type CodeRow = typeof authorizationCodes.$inferSelect;

// The exchange's statements, built once (drizzle builds a statement's SQL on every execution, and
// for these it cost a fifth of the server's CPU per exchange); they run in its transaction.

/** Consumes an unconsumed code in one conditional update, fixing the grant id a replay can revoke. */
const consumeStatement = reusable("latchkey_consume_code", (db) =>
  db
    .update(authorizationCodes)
    .set({ consumedAt: sql`${param("now")}::timestamptz`, grantId: sql`${param("grantId")}::text` })
    .where(and(eq(authorizationCodes.workspaceId, param("workspaceId")), eq(authorizationCodes.codeHash, param("codeHash")), isNull(authorizationCodes.consumedAt)))
    .returning(),
);

const text = (name: string) => sql`${param(name)}::text`;
const at = (name: string) => sql`${param(name)}::timestamptz`;

/** The grant the exchange creates; nothing when a concurrent replay created it (revoked) first. */
const grantInsert = reusable("latchkey_insert_grant", (db) =>
  db
    .insert(grants)
    .values({
      id: text("id"),
      workspaceId: text("workspaceId"),
      clientPk: text("clientPk"),
      userId: text("userId"),
      sessionId: text("sessionId"),
      credentialId: text("credentialId"),
      scope: sql`${param("scope")}::jsonb`,
      apiId: text("apiId"),
      subject: text("subject"),
      hostname: text("hostname"),
      createdAt: at("now"),
      lastUsedAt: at("now"),
      idleExpiresAt: at("idleExpiresAt"),
      absoluteExpiresAt: at("absoluteExpiresAt"),
    })
    .onConflictDoNothing()
    .returning({ id: grants.id }),
);

/** The hosted session's chain (lib/authority): the session, its user, the client, the session's organization and connection. */
const sessionChainStatement = reusable("latchkey_code_session_chain", (db) =>
  selectHostedSessionChain(db, nowPlaceholder(), { session: hostedSessions }, param("clientPk"))
    .where(and(eq(hostedSessions.workspaceId, param("workspaceId")), eq(hostedSessions.id, param("sessionId"))))
    .limit(1),
);

/** A code presented twice: revoke what the first redemption issued (creating the revoked grant if it is still in flight). */
async function revokeReplayed(ctx: EndpointContext, code: CodeRow): Promise<void> {
  if (!code.grantId) return;
  const now = ctx.service.clock.now();
  await ctx.service.db
    .insert(grants)
    .values({
      id: code.grantId,
      workspaceId: code.workspaceId,
      clientPk: code.clientPk,
      userId: code.userId,
      sessionId: code.sessionId,
      scope: code.scope,
      apiId: code.apiId,
      createdAt: now,
      lastUsedAt: now,
      idleExpiresAt: now,
      absoluteExpiresAt: now,
      revokedAt: now,
      revokeReason: "code_replay",
    })
    .onConflictDoUpdate({ target: grants.id, set: { revokedAt: now, revokeReason: "code_replay" }, setWhere: isNull(grants.revokedAt) });
  await recordAudit(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    type: "grant.revoked",
    clientId: null,
    reason: "authorization_code_replay",
    flagged: "possible_code_theft",
    data: { grant_id: code.grantId },
    at: now,
  });
}

export const authorizationCodeGrant: GrantHandler = {
  grantType: "authorization_code",
  parameters: new Set(["grant_type", "code", "redirect_uri", "code_verifier", "client_id"]),
  clients: { types: new Set(["PUBLIC", "WEB_CONFIDENTIAL"]), refusal: "This client cannot use the authorization_code grant" },
  handle(params, { client, credentialId }, outer) {
    return inTransaction(outer, async (ctx) => {
      const code = params.get("code");
      const redirectUri = params.get("redirect_uri");
      const verifier = params.get("code_verifier");
      if (!code) throw invalidRequest("code is required");
      if (!redirectUri) throw invalidRequest("redirect_uri is required");
      if (!verifier) throw invalidRequest("code_verifier is required");
      if (!VERIFIER.test(verifier)) throw invalidRequest("code_verifier must be 43–128 unreserved characters");

      const now = ctx.service.clock.now();
      const db = ctx.service.db;
      const codeHash = sha256Hex(code);
      const grantId = newId();
      // One conditional update consumes the code; the grant id is fixed now so a replay can revoke it.
      const [consumed] = await consumeStatement(db, { now: now.toISOString(), grantId, workspaceId: ctx.workspace.id, codeHash });
      if (!consumed) {
        const [previous] = await db
          .select()
          .from(authorizationCodes)
          .where(and(eq(authorizationCodes.workspaceId, ctx.workspace.id), eq(authorizationCodes.codeHash, codeHash)))
          .limit(1);
        if (previous && previous.clientPk === client.id) await revokeReplayed(ctx, previous);
        throw invalidGrant("The authorization code is invalid, expired or already used");
      }
      if (consumed.clientPk !== client.id) throw invalidGrant("The authorization code was issued to another client");
      if (consumed.expiresAt <= now) throw invalidGrant("The authorization code has expired");
      if (consumed.redirectUri !== redirectUri) throw invalidGrant("redirect_uri does not match the authorization request");
      if (sha256Base64Url(verifier) !== consumed.codeChallenge) throw invalidGrant("code_verifier does not match the code challenge");

      const [authority] = await sessionChainStatement(db, { workspaceId: ctx.workspace.id, sessionId: consumed.sessionId, clientPk: consumed.clientPk, now: now.toISOString() });
      if (!authority || authority.refusal !== null) {
        throw invalidGrant("The authorization behind this code is no longer valid");
      }
      const session = authority.session;
      // The code is redeemed under the issuer it was issued by: the hostname its sign-in's session lives at (lib/hostnames).
      if ((session.hostname ?? null) !== ctx.hostname) throw invalidGrant("The authorization code is invalid, expired or already used");
      const subject = subjectFor(ctx, client.clientId, consumed.userId);

      const inserted = await grantInsert(db, {
        id: grantId,
        workspaceId: ctx.workspace.id,
        clientPk: client.id,
        userId: consumed.userId,
        sessionId: session.id,
        credentialId: credentialId ?? null,
        scope: JSON.stringify(consumed.scope),
        apiId: consumed.apiId,
        subject,
        hostname: ctx.hostname,
        now: now.toISOString(),
        idleExpiresAt: addMs(now, REFRESH_IDLE_MS).toISOString(),
        absoluteExpiresAt: addMs(now, REFRESH_ABSOLUTE_MS).toISOString(),
      });
      // A concurrent replay got there first and created the grant revoked.
      if (inserted.length === 0) throw invalidGrant("The authorization code is invalid, expired or already used");

      const scope = await effectiveHumanScope(ctx, {
        requested: consumed.scope,
        clientPk: client.id,
        userId: consumed.userId,
        apiId: consumed.apiId,
        organizationId: session.organizationId,
      });
      const issue = { clientPk: client.id, clientId: client.clientId, grantId, userId: consumed.userId, sessionId: session.id, scope, apiId: consumed.apiId };
      const [access, refreshToken, idToken] = await Promise.all([
        insertHumanAccessToken(ctx, issue, subject),
        insertRefreshToken(ctx, grantId),
        signIdToken(ctx, { clientId: client.clientId, subject, nonce: consumed.nonce, session, scope: consumed.scope, userId: consumed.userId }),
      ]);
      return {
        access_token: access.token,
        token_type: "Bearer",
        expires_in: access.expiresIn,
        scope: scope.join(" "),
        refresh_token: refreshToken,
        id_token: idToken,
      };
    });
  },
};
