/**
 * A new grant for a user's authorization of a client, and its first tokens, written once: the
 * authorization code exchange (./grants/authorization-code.ts) and the device code grant
 * (./device-authorization/grant.ts) call it once they have consumed their one-time proof, inside
 * their transaction. The hosted session behind the authorization must still be live with its
 * whole chain (lib/authority) and belong to this issuer's host; the grant (a new refresh family:
 * rotation, reuse detection, the session check and revocation all read it) is inserted with the id
 * the consumption fixed; then the access token, the refresh token and the ID token.
 */
import { and, eq, sql } from "drizzle-orm";
import { param, reusable } from "../../db/reusable";
import { grants, hostedSessions } from "../../db/schema";
import { nowPlaceholder, selectHostedSessionChain } from "../authority";
import { addMs, DAY } from "../clock";
import type { EndpointContext } from "../http/context";
import { invalidGrant } from "./errors";
import { effectiveHumanScope, insertHumanAccessToken, insertRefreshToken, signIdToken, subjectFor } from "./issue";
import type { SenderKey } from "./dpop/sender";
import { familyKey } from "./dpop/binding";
import { tokenTypeFor } from "./dpop/token-request";
import type { ClientRow } from "./clients";

/** The grant handler's contract, for a grant type declared in a feature folder beside lib/oauth/grants (which lists it). */
export type { GrantHandler } from "./grants/types";

export const REFRESH_IDLE_MS = 7 * DAY;
export const REFRESH_ABSOLUTE_MS = 30 * DAY;

const text = (name: string) => sql`${param(name)}::text`;
const at = (name: string) => sql`${param(name)}::timestamptz`;

/** The grant the issuance creates; nothing when a concurrent replay created it (revoked) first. */
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
      dpopJkt: text("dpopJkt"),
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

export interface HumanGrantInput {
  client: { id: string; clientId: string; type: ClientRow["type"] };
  /** The client secret that authenticated the request (confidential clients), recorded on the grant. */
  credentialId: string | null;
  /** The grant's id, fixed when the one-time proof was consumed. */
  grantId: string;
  userId: string;
  sessionId: string;
  /** The scope the user authorized (the family's ceiling). */
  scope: string[];
  apiId: string | null;
  /** The authorization request's nonce, carried into the ID token; null when the flow has none (the device flow). */
  nonce: string | null;
  /** The key of the token request's DPoP proof (./dpop), or null: the access token is bound to it, and a public client's family too. */
  sender: SenderKey | null;
  /** The invalid_grant descriptions: the authority behind the proof is gone; the proof is not usable here (another host, a replay's grant). */
  refusals: { authority: string; unusable: string };
}

/** The token response of a new grant, or invalid_grant. */
export async function issueHumanGrant(ctx: EndpointContext, input: HumanGrantInput): Promise<Record<string, unknown>> {
  const now = ctx.service.clock.now();
  const db = ctx.service.db;
  const { client } = input;
  const [authority] = await sessionChainStatement(db, { workspaceId: ctx.workspace.id, sessionId: input.sessionId, clientPk: client.id, now: now.toISOString() });
  if (!authority || authority.refusal !== null) throw invalidGrant(input.refusals.authority);
  const session = authority.session;
  // Redeemed under the issuer it was authorized at: the hostname its sign-in's session lives at (lib/hostnames).
  if ((session.hostname ?? null) !== ctx.hostname) throw invalidGrant(input.refusals.unusable);
  const subject = subjectFor(ctx, client.clientId, input.userId);

  const inserted = await grantInsert(db, {
    id: input.grantId,
    workspaceId: ctx.workspace.id,
    clientPk: client.id,
    userId: input.userId,
    sessionId: session.id,
    credentialId: input.credentialId ?? null,
    scope: JSON.stringify(input.scope),
    apiId: input.apiId,
    subject,
    hostname: ctx.hostname,
    now: now.toISOString(),
    idleExpiresAt: addMs(now, REFRESH_IDLE_MS).toISOString(),
    absoluteExpiresAt: addMs(now, REFRESH_ABSOLUTE_MS).toISOString(),
    // A public client's family is bound to the key of the request's DPoP proof (./dpop).
    dpopJkt: familyKey(client, input.sender),
  });
  // A concurrent replay got there first and created the grant revoked.
  if (inserted.length === 0) throw invalidGrant(input.refusals.unusable);

  const scope = await effectiveHumanScope(ctx, {
    requested: input.scope,
    clientPk: client.id,
    userId: input.userId,
    apiId: input.apiId,
    organizationId: session.organizationId,
  });
  const issue = { clientPk: client.id, clientId: client.clientId, grantId: input.grantId, userId: input.userId, sessionId: session.id, scope, apiId: input.apiId, dpopJkt: input.sender?.jkt ?? null };
  const [access, refreshToken, idToken] = await Promise.all([
    insertHumanAccessToken(ctx, issue, subject),
    insertRefreshToken(ctx, input.grantId),
    signIdToken(ctx, { clientId: client.clientId, subject, nonce: input.nonce, session, scope: input.scope, userId: input.userId }),
  ]);
  return {
    access_token: access.token,
    token_type: tokenTypeFor(input.sender),
    expires_in: access.expiresIn,
    scope: scope.join(" "),
    refresh_token: refreshToken,
    id_token: idToken,
  };
}
