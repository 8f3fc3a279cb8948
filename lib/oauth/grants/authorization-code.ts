import { and, eq, isNull, sql } from "drizzle-orm";
import { param, reusable } from "../../../db/reusable";
import { authorizationCodes, grants } from "../../../db/schema";
import { newId, sha256Base64Url, sha256Hex } from "../../crypto";
import type { EndpointContext } from "../../http/context";
import { invalidGrant, invalidRequest } from "../errors";
import { recordAudit } from "../../audit/events";
import { issueHumanGrant } from "../human-grant";
import { inTransaction } from "../../http/transaction";
import type { GrantHandler } from "./types";

export { REFRESH_ABSOLUTE_MS, REFRESH_IDLE_MS } from "../human-grant";
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
  handle(params, { client, credentialId }, outer, _request, sender) {
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

      return issueHumanGrant(ctx, {
        client,
        credentialId: credentialId ?? null,
        grantId,
        userId: consumed.userId,
        sessionId: consumed.sessionId,
        scope: consumed.scope,
        apiId: consumed.apiId,
        nonce: consumed.nonce,
        sender: sender ?? null,
        refusals: { authority: "The authorization behind this code is no longer valid", unusable: "The authorization code is invalid, expired or already used" },
      });
    });
  },
};
