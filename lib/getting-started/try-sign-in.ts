/**
 * An operator tries an application's sign-in from the console: the hosted sign-in page opens for
 * that application (its policy, branding, social and enterprise options), and instead of sending a
 * code to the application it ends on a console page that shows who signed in and the claims an ID
 * token for the application would carry. Nothing is issued to the application and nothing is sent
 * to it (lib/oauth/pending-sign-in.ts `openTrySignIn`).
 *
 * Only the browser that started it sees the outcome: the console keeps its own copy of the
 * transaction's browser binding in a cookie under /console, and the outcome is read only with it,
 * by an operator of the workspace, while the transaction lives (ten minutes).
 */
import { and, eq, gt, isNotNull } from "drizzle-orm";
import { z } from "zod";
import { authorizationTransactions, clients, hostedSessions, users } from "../../db/schema";
import { safeEqual, sha256Hex } from "../crypto";
import { id } from "../forms/fields";
import { contextFor } from "../http/context";
import { idTokenClaims, subjectFor } from "../oauth/issue";
import { openTrySignIn, TRANSACTION_TTL_MS } from "../oauth/pending-sign-in";
import type { Service } from "../service";
import { defineOperation, formError } from "../surfaces/operation";

/** The console's copy of the tried sign-in's browser binding (Path=/console). */
export const TRY_COOKIE_PREFIX = "lk_console_try_";
export const TRY_COOKIE_MAX_AGE = TRANSACTION_TTL_MS / 1000;

/** The scopes a tried sign-in asks for: the identity scopes the application may request that put claims in the ID token. */
const TRY_SCOPES = ["openid", "email", "profile"];

/** The console page that shows a tried sign-in's outcome. */
export const tryResultPath = (workspaceId: string, clientId: string, txId: string) =>
  `/console/w/${workspaceId}/applications/${encodeURIComponent(clientId)}/try?tx=${encodeURIComponent(txId)}`;

export const trySignIn = defineOperation({
  name: "application.sign_in_tried",
  role: "admin",
  input: z.object({ client_id: id("client id") }),
  async run(ctx, input) {
    const workspace = ctx.access.workspace;
    const [client] = await ctx.db
      .select({ id: clients.id, type: clients.type, active: clients.active, identityScopes: clients.identityScopes })
      .from(clients)
      .where(and(eq(clients.workspaceId, workspace.id), eq(clients.clientId, input.client_id)))
      .limit(1);
    if (!client) throw formError("This application no longer exists");
    if (client.type === "M2M") throw formError("A machine-to-machine application signs no users in");
    if (!client.active) throw formError("This application is disabled: enable it to try its sign-in");
    // Inside the operation's transaction (the embedded database has one connection).
    const endpoint = contextFor({ ...ctx.service, db: ctx.db }, workspace);
    const opened = await openTrySignIn(endpoint, {
      clientPk: client.id,
      scope: TRY_SCOPES.filter((scope) => scope === "openid" || client.identityScopes.includes(scope)),
      resultPath: (txId) => tryResultPath(workspace.id, input.client_id, txId),
    });
    return {
      // Both cookies carry the same binding: the hosted pages read the transaction's, the console its own.
      result: {
        location: opened.location,
        cookies: [
          { ...opened.cookie, value: opened.binding },
          { name: `${TRY_COOKIE_PREFIX}${opened.txId}`, path: "/console", maxAge: TRY_COOKIE_MAX_AGE, value: opened.binding },
        ],
      },
      audit: { target: input.client_id, clientId: input.client_id },
    };
  },
});

export interface TriedSignIn {
  email: string;
  userId: string;
  /** The scopes the tried sign-in asked for (the identity scopes the application may request). */
  scope: string[];
  /** The ID token's claims as the application would receive them now (unsigned: nothing was issued). */
  claims: Record<string, unknown>;
}

/**
 * The outcome of the tried sign-in `txId` of this application, for the browser holding its binding:
 * null while it is not complete, once it has expired, or for anyone else.
 */
export async function triedSignIn(service: Service, workspace: { id: string; name: string }, clientId: string, txId: string, binding: string | undefined): Promise<TriedSignIn | null> {
  if (!binding || !txId || txId.length > 64) return null;
  const now = service.clock.now();
  const [row] = await service.db
    .select({ tx: authorizationTransactions, clientId: clients.clientId, session: hostedSessions, email: users.email })
    .from(authorizationTransactions)
    .innerJoin(clients, eq(clients.id, authorizationTransactions.clientPk))
    .innerJoin(hostedSessions, eq(hostedSessions.id, authorizationTransactions.sessionId))
    .innerJoin(users, eq(users.id, authorizationTransactions.userId))
    .where(
      and(
        eq(authorizationTransactions.workspaceId, workspace.id),
        eq(authorizationTransactions.id, txId),
        eq(authorizationTransactions.purpose, "try"),
        isNotNull(authorizationTransactions.completedAt),
        gt(authorizationTransactions.expiresAt, now),
        eq(clients.clientId, clientId),
      ),
    )
    .limit(1);
  if (!row || !safeEqual(row.tx.browserBindingHash, sha256Hex(binding))) return null;
  const ctx = contextFor(service, workspace);
  const claims = await idTokenClaims(ctx, {
    clientId,
    subject: subjectFor(ctx, clientId, row.session.userId),
    nonce: row.tx.nonce,
    session: row.session,
    scope: row.tx.scope,
    userId: row.session.userId,
  });
  return { email: row.email, userId: row.session.userId, scope: row.tx.scope, claims };
}
