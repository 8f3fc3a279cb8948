import { and, eq, exists, isNull, or, sql, type SQL } from "drizzle-orm";
import { param, reusable } from "../../../db/reusable";
import { accessTokens, grants, hostedSessions, refreshTokens } from "../../../db/schema";
import { selectRefreshTokenVerdict, type Link } from "../../authority";
import { addMs } from "../../clock";
import { sha256Hex } from "../../crypto";
import { clientAddressOf } from "../../http/client-address";
import { atHostname, type EndpointContext } from "../../http/context";
import { invalidGrant, invalidRequest, invalidScope, type OAuthError } from "../errors";
import { recordAudit } from "../../audit/events";
import { ACCESS_TOKEN_TTL_MS, effectiveHumanScopeSql, newAccessToken, newRefreshToken, subjectFor } from "../issue";
import { hasDuplicates, splitScope } from "../scopes";
import { REFRESH_IDLE_MS } from "./authorization-code";
import { inTransaction } from "../../http/transaction";
import { signal } from "../../signals";
import { familyKeyRefusedSql } from "../dpop/binding";
import { tokenTypeFor } from "../dpop/token-request";
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

/** Why a rotated token issued nothing, in the order the rules are checked. */
type Refusal = "expired" | "credential_revoked" | "ended" | "scope";

const refusals: Record<Refusal, () => OAuthError> = {
  expired: () => invalidGrant("The refresh token has expired"),
  // The secret this grant was last used with may have expired (harmless: a newer one is in use
  // now) but not been revoked: explicit revocation or immediate replacement ends the grant.
  credential_revoked: () => invalidGrant("The client credential behind this authorization was revoked"),
  ended: () => invalidGrant("The session or authorization behind this refresh token has ended"),
  scope: () => invalidScope("scope may only narrow the original grant"),
};

/**
 * The family's first dead link (lib/authority, `chains.grant`) as the token endpoint names it: the
 * family's own bounds, the secret it was last used with, and everything else it stands on (hosted
 * session, user, client, API, the session's organization and connection). A chain that holds
 * refuses only a scope beyond the grant.
 */
function rotationRefusal(row: { refusal: Link | null; scopeExceeded: boolean | null }): Refusal | null {
  switch (row.refusal) {
    case null:
      return row.scopeExceeded ? "scope" : null;
    case "grant":
      return "expired";
    case "credential":
      return "credential_revoked";
    default:
      return "ended";
  }
}

const at = (name: string) => sql`${param(name)}::timestamptz`;

/** The one narrowing rule: a requested scope (jsonb array, or null for none) holds only values the grant holds. */
const scopeWithinGrant = (requested: SQL) => sql`(${requested} is null or ${grants.scope} @> ${requested})`;

/**
 * The whole rotation as one statement, built once and run in autocommit:
 * - `chain` reads the presented token, current and of an unrevoked family of the authenticating
 *   client, with the family's chain (lib/authority) and its first dead link (`refusal`), whether
 *   the requested scope exceeds the grant, and the access token's scope.
 * - `rotated` supersedes the presented token only while it is current and its family unrevoked and
 *   the authenticating client's: of many parallel presentations exactly one wins. It is not spent
 *   when the only refusal is a scope beyond the grant: asking too much is a bad field, not a use,
 *   so the client may retry with a narrower scope (SPEC.md: do not broaden automatically).
 * - Only when it was superseded and no rule fails: the access token, the successor and the
 *   family's use are written.
 * Any other rule failure still commits the supersession, as a consumed proof must; a dependency
 * failure commits nothing, so a retry is not taken for reuse.
 * - A family bound to a DPoP key (lib/oauth/dpop/binding.ts) is rotated only by a request proving
 *   that key (`senderJkt`): another key, or none, is `keyRefused` and spends nothing, since the
 *   presenter is not the holder. The access token is bound to `senderJkt` (null: a bearer token).
 *
 * The pairwise subject is keyed by a secret the database must not see: the family records it
 * (`grants.subject`, written at the code exchange). A family created before it was recorded is
 * not rotated unless the caller passes `subject`, computed from the family's user; the rotation
 * then records it.
 */
const rotationStatement = reusable("latchkey_refresh_rotation", (db) => {
  const now = at("now");
  const subjectParam = sql`${param("subject")}::text`;
  const senderJkt = sql`${param("senderJkt")}::text`;
  /** The family may be rotated by this presentation: unrevoked, the caller's, with a subject to issue under. */
  const rotatableFamily = and(
    eq(grants.id, refreshTokens.grantId),
    isNull(grants.revokedAt),
    // Made under this issuer: the hostname the grant was made at (lib/hostnames; null the default host).
    sql`${grants.hostname} is not distinct from ${param("hostname")}::text`,
    eq(grants.clientPk, param("clientPk")),
    or(sql`${grants.subject} is not null`, sql`${subjectParam} is not null`),
  );
  const presentedCurrent = and(eq(refreshTokens.workspaceId, param("workspaceId")), eq(refreshTokens.tokenHash, param("tokenHash")), eq(refreshTokens.state, "current"));
  const narrowed = sql`${param("scope")}::text::jsonb`;
  const chain = db.$with("chain").as(
    // The family's chain judged in `refusal` (lib/authority); the scope rule last, on its own.
    selectRefreshTokenVerdict(
      db,
      now,
      {
        grantId: grants.id,
        userId: grants.userId,
        sessionId: grants.sessionId,
        apiId: grants.apiId,
        absoluteExpiresAt: grants.absoluteExpiresAt,
        scopeExceeded: sql<boolean>`not ${scopeWithinGrant(narrowed)}`.as("scope_exceeded"),
        keyRefused: sql<boolean>`${familyKeyRefusedSql(grants.dpopJkt, senderJkt)}`.as("key_refused"),
        subject: sql<string | null>`coalesce(${grants.subject}, ${subjectParam})`.as("subject"),
        scope: effectiveHumanScopeSql({
          workspaceId: param("workspaceId"),
          requested: sql`coalesce(${narrowed}, ${grants.scope})`,
          clientPk: param("clientPk"),
          userId: grants.userId,
          apiId: grants.apiId,
          organizationId: hostedSessions.organizationId,
        }).as("scope"),
      },
      and(rotatableFamily, eq(grants.workspaceId, param("workspaceId"))),
    ).where(presentedCurrent),
  );
  const rotated = db.$with("rotated").as(
    db
      .update(refreshTokens)
      .set({ state: "superseded", supersededAt: now, replacedByHash: sql`${param("successorHash")}` })
      .where(
        and(
          // Re-checked on the row itself, so a parallel presentation that superseded it first wins alone.
          presentedCurrent,
          exists(db.select({ one: grants.id }).from(grants).where(rotatableFamily)),
          sql`not exists (select 1 from ${chain} where ${chain.refusal} is null and ${chain.scopeExceeded})`,
          sql`not exists (select 1 from ${chain} where ${chain.keyRefused})`,
        ),
      )
      .returning({ grantId: refreshTokens.grantId }),
  );
  const issuable = and(isNull(chain.refusal), sql`not ${chain.scopeExceeded}`, sql`exists (select 1 from ${rotated})`);
  // The columns of insertHumanAccessToken, in table order (drizzle checks it).
  const access = db.$with("issued_access").as(
    db
      .insert(accessTokens)
      .select(
        db
          .select({
            tokenHash: sql`${param("accessHash")}`.as("token_hash"),
            workspaceId: sql`${param("workspaceId")}`.as("workspace_id"),
            clientPk: sql`${param("clientPk")}`.as("client_pk"),
            grantId: chain.grantId,
            userId: chain.userId,
            sessionId: chain.sessionId,
            credentialId: sql`null`.as("credential_id"),
            subject: chain.subject,
            scope: chain.scope,
            apiId: chain.apiId,
            createdAt: now.as("created_at"),
            expiresAt: at("accessExpiresAt").as("expires_at"),
            revokedAt: sql`null`.as("revoked_at"),
            dpopJkt: senderJkt.as("dpop_jkt"),
          })
          .from(chain)
          .where(issuable),
      )
      .returning({ scope: accessTokens.scope, subject: accessTokens.subject }),
  );
  const successor = db.$with("issued_refresh").as(
    db
      .insert(refreshTokens)
      .select(
        db
          .select({
            tokenHash: sql`${param("successorHash")}`.as("token_hash"),
            workspaceId: sql`${param("workspaceId")}`.as("workspace_id"),
            grantId: chain.grantId,
            state: sql`${"current"}`.as("state"),
            createdAt: now.as("created_at"),
            supersededAt: sql`null`.as("superseded_at"),
            replacedByHash: sql`null`.as("replaced_by_hash"),
          })
          .from(chain)
          .where(issuable),
      )
      .returning({ tokenHash: refreshTokens.tokenHash }),
  );
  const used = db.$with("used_grant").as(
    db
      .update(grants)
      .set({
        lastUsedAt: now,
        idleExpiresAt: sql`least(${at("idleExpiresAt")}, ${chain.absoluteExpiresAt})`,
        credentialId: sql`coalesce(${param("credentialId")}::text, ${grants.credentialId})`,
        // Records a subject passed for a family that had none; a recorded one stays.
        subject: sql`coalesce(${grants.subject}, ${subjectParam})`,
      })
      .from(chain)
      .where(and(eq(grants.id, chain.grantId), issuable))
      .returning({ id: grants.id }),
  );
  return db
    .with(chain, rotated, access, successor, used)
    .select({
      refusal: chain.refusal,
      scopeExceeded: chain.scopeExceeded,
      keyRefused: chain.keyRefused,
      grantId: chain.grantId,
      userId: chain.userId,
      scope: access.scope,
      subject: access.subject,
      spent: sql<boolean>`exists (select 1 from ${rotated})`,
      successorIssued: sql<boolean>`exists (select 1 from ${successor})`,
      grantUsed: sql<boolean>`exists (select 1 from ${used})`,
    })
    .from(chain)
    .leftJoin(access, sql`true`);
});

type RotationRow = Awaited<ReturnType<typeof rotationStatement>>[number];

export const refreshTokenGrant: GrantHandler = {
  grantType: "refresh_token",
  parameters: new Set(["grant_type", "refresh_token", "scope", "client_id"]),
  clients: { types: new Set(["PUBLIC", "WEB_CONFIDENTIAL"]), refusal: "This client cannot use the refresh_token grant" },
  async handle(params, { client, credentialId }, ctx, request, sender) {
    const presented = params.get("refresh_token");
    if (!presented) throw invalidRequest("refresh_token is required");
    let narrowed: string[] | null = null;
    if (params.has("scope")) {
      narrowed = splitScope(params.get("scope")!);
      if (!narrowed || hasDuplicates(narrowed)) throw invalidScope("scope is malformed or duplicated");
    }
    const db = ctx.service.db;
    const now = ctx.service.clock.now();
    const hash = sha256Hex(presented);
    const successor = newRefreshToken();
    const accessToken = newAccessToken();
    const accessHash = sha256Hex(accessToken);
    const rotate = (subject: string | null) =>
      rotationStatement(db, {
        workspaceId: ctx.workspace.id,
        tokenHash: hash,
        hostname: ctx.hostname,
        clientPk: client.id,
        credentialId,
        scope: narrowed && JSON.stringify(narrowed),
        subject,
        now: now.toISOString(),
        accessHash,
        accessExpiresAt: addMs(now, ACCESS_TOKEN_TTL_MS).toISOString(),
        successorHash: sha256Hex(successor),
        idleExpiresAt: addMs(now, REFRESH_IDLE_MS).toISOString(),
        senderJkt: sender?.jkt ?? null,
      });

    // A current token that this statement did not spend: refused for scope or the DPoP key alone (left
    // current), or superseded by a parallel presentation between the statement's read and its update (reuse).
    const unspent = (row: RotationRow | undefined) => !row || (!row.spent && !row.keyRefused && rotationRefusal(row) !== "scope");
    let [rotated]: (RotationRow | undefined)[] = await rotate(null);
    if (unspent(rotated)) {
      let presentedToken = await readPresented(ctx, hash);
      if (!rotated && presentedToken && presentedToken.clientPk === client.id && presentedToken.state === "current" && !presentedToken.familyRevoked) {
        // Live and this client's: the family has no recorded subject yet (created before it was recorded).
        [rotated] = await rotate(subjectFor(ctx, client.clientId, presentedToken.userId));
        if (unspent(rotated)) presentedToken = await readPresented(ctx, hash);
      }
      if (unspent(rotated)) return refuseUnrotated(ctx, client, presentedToken, now, request ? clientAddressOf(request.headers, ctx.service.config.trustProxy) : null);
    }
    rotated = rotated!;

    if (rotated.keyRefused) throw invalidGrant("The refresh token is bound to a DPoP key: the request must carry a proof of that key");
    const refusal = rotationRefusal(rotated);
    if (refusal) throw refusals[refusal]();
    if (rotated.userId === null || rotated.scope === null || rotated.subject === null || !rotated.successorIssued || !rotated.grantUsed) {
      throw new Error("Refresh rotation passed every rule but did not issue");
    }
    const subject = subjectFor(ctx, client.clientId, rotated.userId);
    if (rotated.subject !== subject) {
      // The family was created under another issuer host or master key: issue under today's, and record it.
      await Promise.all([
        db.update(accessTokens).set({ subject }).where(and(eq(accessTokens.workspaceId, ctx.workspace.id), eq(accessTokens.tokenHash, accessHash))),
        db.update(grants).set({ subject }).where(and(eq(grants.workspaceId, ctx.workspace.id), eq(grants.id, rotated.grantId!))),
      ]);
    }
    return {
      access_token: accessToken,
      token_type: tokenTypeFor(sender),
      expires_in: ACCESS_TOKEN_TTL_MS / 1000,
      scope: rotated.scope.join(" "),
      refresh_token: successor,
    };
  },
};

async function readPresented(ctx: EndpointContext, hash: string) {
  const [row] = await ctx.service.db
    .select({
      grantId: refreshTokens.grantId,
      state: refreshTokens.state,
      clientPk: grants.clientPk,
      userId: grants.userId,
      familyRevoked: sql<boolean>`${grants.revokedAt} is not null`,
    })
    .from(refreshTokens)
    // A token of a grant made under another issuer (another hostname, lib/hostnames) is no token here: unknown, never reuse.
    .innerJoin(grants, and(eq(grants.id, refreshTokens.grantId), atHostname(grants.hostname, ctx.hostname)))
    .where(and(eq(refreshTokens.workspaceId, ctx.workspace.id), eq(refreshTokens.tokenHash, hash)))
    .limit(1);
  return row;
}

/**
 * The presented token was not rotated: unknown, already superseded, of a revoked family or of
 * another client. A superseded token of this client is reuse: the family may be stolen, so it
 * and everything issued from it end, together with the audit event.
 */
async function refuseUnrotated(
  ctx: EndpointContext,
  client: { id: string; clientId: string },
  presented: Awaited<ReturnType<typeof readPresented>>,
  now: Date,
  ip: string | null,
): Promise<never> {
  const unusable = () => invalidGrant("The refresh token is invalid, expired or revoked");
  if (!presented) throw unusable();
  if (presented.clientPk !== client.id) {
    throw presented.state === "current" && !presented.familyRevoked ? invalidGrant("The refresh token was issued to another client") : unusable();
  }
  const revoked = await inTransaction(ctx, async (tx) => {
    if (!(await revokeGrant(tx, presented.grantId, "refresh_token_reuse"))) return false;
    await recordAudit(tx.service.db, {
      workspaceId: ctx.workspace.id,
      type: "refresh.reuse_detected",
      clientId: client.clientId,
      subject: subjectFor(ctx, client.clientId, presented.userId),
      reason: "refresh_token_reuse",
      flagged: "possible_token_theft",
      data: { grant_id: presented.grantId },
      // Where the reused token came from: the user's security alert (and the console) show it.
      ip,
      at: now,
    });
    return true;
  });
  // Signalled once the family's end is committed, once per family (a concurrent reuse found it revoked).
  if (revoked) signal("refresh_reuse_detected", { workspaceId: ctx.workspace.id, clientId: client.clientId, grantId: presented.grantId, userId: presented.userId, address: ip });
  throw unusable();
}
