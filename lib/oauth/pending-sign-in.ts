import { and, eq, gt, isNotNull, isNull, sql } from "drizzle-orm";
import { param, reusable } from "../../db/reusable";
import { authorizationTransactions } from "../../db/schema";
import { addMs, MINUTE } from "../clock";
import { randomToken, safeEqual, sha256Hex } from "../crypto";
import type { EndpointContext } from "../http/context";
import { serializeCookie } from "../http/cookies";
import { redirect303 } from "../http/response";
import { isStorableText } from "../text";
import type { HostedSession } from "../authn/hosted-session";
import { issueCodeRedirect, type CodeRequest } from "./authorization-response";
import { OAuthError } from "./errors";

/**
 * The pending sign-in: a validated authorization request waiting for the user to authenticate,
 * bound to the browser by an HttpOnly cookie whose hash is stored. Authorize opens it; the hosted
 * sign-in steps load it and complete it exactly once, which issues the code.
 */

export const TRANSACTION_TTL_MS = 10 * MINUTE;
export const TX_COOKIE_PREFIX = "lk_tx_";

/**
 * Stores the request and sends the browser to the hosted sign-in page with the binding cookie.
 * `stepUp` is a live hosted session that does not meet the application's policy: the sign-in
 * starts from what it proved and asks only for what is missing.
 */
export async function openPendingSignIn(ctx: EndpointContext, authz: CodeRequest, stepUp?: HostedSession): Promise<Response> {
  return open(ctx, { ...authz, purpose: "authorize", returnTo: null }, stepUp);
}

/**
 * A sign-in for the account-security portal (the application `clientPk` offers it): the same
 * page, steps and policy, but completing it only establishes the hosted session and sends the
 * browser to `returnTo` (a path under the issuer). No code is issued and no grant is created.
 */
export async function openAccountSignIn(
  ctx: EndpointContext,
  input: { clientPk: string; returnTo: string; purpose?: ReturningPurpose },
  stepUp?: HostedSession,
  extraHeaders: [string, string][] = [],
): Promise<Response> {
  if (!input.returnTo.startsWith(`${ctx.basePath}/`)) throw new Error("returnTo must be a path under the issuer");
  // The OAuth fields have no meaning here; they stay empty and are never read for this purpose.
  const request = { clientPk: input.clientPk, redirectUri: "", scope: [], state: "", nonce: "", codeChallenge: "", apiId: null, purpose: input.purpose ?? "account", returnTo: input.returnTo };
  return open(ctx, request, stepUp, extraHeaders);
}

/**
 * The purposes whose completion only establishes the hosted session and returns to a page under
 * the issuer: `account` (the portal), `device` (the device page, lib/oauth/device-authorization,
 * which then asks the user to approve or deny the device).
 */
export type ReturningPurpose = "account" | "device";
export const returnsUnderIssuer = (purpose: TransactionRow["purpose"]): purpose is ReturningPurpose => purpose === "account" || purpose === "device";

/**
 * A sign-in an operator tries from the console for the application `clientPk` (lib/getting-started):
 * the same page, steps and policy as the application's own sign-ins, but completing it records the
 * user and hosted session on the transaction and sends the browser to `returnTo`, a console page
 * on the installation's origin that shows the claims an ID token would carry. No code is issued,
 * no grant is created, and the application is never contacted. The caller sets both cookies: the
 * transaction's, under the issuer, and its own copy of the binding, under the console, so that
 * only this browser can read the outcome.
 */
export async function openTrySignIn(
  ctx: EndpointContext,
  input: { clientPk: string; scope: string[]; resultPath: (txId: string) => string },
): Promise<{ txId: string; binding: string; location: string; cookie: { name: string; path: string; maxAge: number } }> {
  const txId = randomToken(16);
  const resultPath = input.resultPath(txId);
  if (!resultPath.startsWith("/console/")) throw new Error("a tried sign-in ends on a console page");
  const returnTo = `${ctx.service.config.publicUrl}${resultPath}`;
  // The OAuth fields have no meaning here (nothing is issued); the nonce goes into the claims shown.
  const { binding } = await insertTransaction(ctx, { clientPk: input.clientPk, redirectUri: "", scope: input.scope, state: "", nonce: randomToken(32), codeChallenge: "", apiId: null, purpose: "try", returnTo }, undefined, txId);
  return { txId, binding, location: `${ctx.origin}${ctx.basePath}/sign-in?tx=${txId}`, cookie: { name: `${TX_COOKIE_PREFIX}${txId}`, path: ctx.basePath, maxAge: TRANSACTION_TTL_MS / 1000 } };
}

const transactionCookie = (ctx: EndpointContext, txId: string, binding: string) => serializeCookie(`${TX_COOKIE_PREFIX}${txId}`, binding, ctx.basePath, TRANSACTION_TTL_MS / 1000);

async function open(
  ctx: EndpointContext,
  request: CodeRequest & { purpose: TransactionRow["purpose"]; returnTo: string | null },
  stepUp?: HostedSession,
  extraHeaders: [string, string][] = [],
): Promise<Response> {
  const { txId, binding } = await insertTransaction(ctx, request, stepUp);
  return redirect303(`${ctx.basePath}/sign-in?tx=${txId}`, [...extraHeaders, ["Set-Cookie", transactionCookie(ctx, txId, binding)]]);
}

async function insertTransaction(
  ctx: EndpointContext,
  request: CodeRequest & { purpose: TransactionRow["purpose"]; returnTo: string | null },
  stepUp?: HostedSession,
  txId = randomToken(16),
): Promise<{ txId: string; binding: string }> {
  const now = ctx.service.clock.now();
  const binding = randomToken(32);
  await ctx.service.db.insert(authorizationTransactions).values({
    userId: stepUp?.userId ?? null,
    sessionId: stepUp?.id ?? null,
    id: txId,
    workspaceId: ctx.workspace.id,
    clientPk: request.clientPk,
    redirectUri: request.redirectUri,
    scope: request.scope,
    state: request.state,
    nonce: request.nonce,
    codeChallenge: request.codeChallenge,
    apiId: request.apiId,
    purpose: request.purpose,
    returnTo: request.returnTo,
    browserBindingHash: sha256Hex(binding),
    hostname: ctx.hostname,
    createdAt: now,
    expiresAt: addMs(now, TRANSACTION_TTL_MS),
  });
  return { txId, binding };
}

export type TransactionRow = typeof authorizationTransactions.$inferSelect;

/** The unexpired transaction `txId`, open or completed as asked, only if bound to this browser's cookie. */
async function loadBoundTransaction(ctx: EndpointContext, txId: string, cookieValue: string | undefined, completed: boolean): Promise<TransactionRow | null> {
  // An id the database cannot hold names no transaction.
  if (!txId || !cookieValue || !isStorableText(txId)) return null;
  const values = { workspaceId: ctx.workspace.id, txId, now: ctx.service.clock.now().toISOString() };
  const [tx] = await (completed ? completedTransaction : openTransaction)(ctx.service.db, values);
  if (!tx || !safeEqual(tx.browserBindingHash, sha256Hex(cookieValue))) return null;
  return tx;
}

/** A transaction of the workspace by id, open or completed, not expired: built once (every sign-in page and step reads one). */
const transactionStatement = (name: string, completed: boolean) =>
  reusable(name, (db) =>
    db
      .select()
      .from(authorizationTransactions)
      .where(
        and(
          eq(authorizationTransactions.workspaceId, param("workspaceId")),
          eq(authorizationTransactions.id, param("txId")),
          completed ? isNotNull(authorizationTransactions.completedAt) : isNull(authorizationTransactions.completedAt),
          gt(authorizationTransactions.expiresAt, sql`${param("now")}::timestamptz`),
        ),
      )
      .limit(1),
  );
const openTransaction = transactionStatement("latchkey_open_transaction", false);
const completedTransaction = transactionStatement("latchkey_completed_transaction", true);

/** An open (not completed, not expired) transaction bound to this browser, or null. */
export function loadOpenTransaction(ctx: EndpointContext, txId: string, cookieValue: string | undefined): Promise<TransactionRow | null> {
  return loadBoundTransaction(ctx, txId, cookieValue, false);
}

/**
 * A transaction this browser completed, while it has not expired: the sign-in page says it is
 * done (and links back to the application) rather than "expired" when the user comes back to it.
 * The browser's cookie outlives the completion for this (it expires with the transaction).
 */
export function loadCompletedTransaction(ctx: EndpointContext, txId: string, cookieValue: string | undefined): Promise<TransactionRow | null> {
  return loadBoundTransaction(ctx, txId, cookieValue, true);
}

/**
 * Completes the transaction exactly once, then issues the code (purpose `authorize`) or sends the
 * browser to the transaction's `returnTo` (purposes `account` and `try`), with the session cookie.
 */
export async function completeTransaction(ctx: EndpointContext, tx: TransactionRow, session: HostedSession, extraHeaders: [string, string][] = []): Promise<Response> {
  const now = ctx.service.clock.now();
  const done = await ctx.service.db
    .update(authorizationTransactions)
    // A tried sign-in keeps who signed in, for the console page that shows the outcome.
    .set(tx.purpose === "try" ? { completedAt: now, enteredAddress: null, userId: session.userId, sessionId: session.id } : { completedAt: now, enteredAddress: null })
    .where(and(eq(authorizationTransactions.id, tx.id), isNull(authorizationTransactions.completedAt), gt(authorizationTransactions.expiresAt, now)))
    .returning({ id: authorizationTransactions.id });
  if (done.length === 0) throw new OAuthError(400, "invalid_request", "This sign-in request has expired or was already used");
  // The transaction cookie stays until it expires with the transaction: it lets this browser, and
  // only it, see "already completed" on the way back (loadCompletedTransaction). It opens nothing
  // more: every step requires an open transaction.
  const headers: [string, string][] = [...extraHeaders];
  if (returnsUnderIssuer(tx.purpose)) {
    if (!tx.returnTo?.startsWith(`${ctx.basePath}/`)) throw new Error(`${tx.purpose} sign-in without a return path`);
    return redirect303(tx.returnTo, headers);
  }
  if (tx.purpose === "try") {
    if (!tx.returnTo?.startsWith(`${ctx.service.config.publicUrl}/console/`)) throw new Error("tried sign-in without a console page");
    return redirect303(tx.returnTo, headers);
  }
  return issueCodeRedirect(
    ctx,
    { clientPk: tx.clientPk, redirectUri: tx.redirectUri, scope: tx.scope, state: tx.state, nonce: tx.nonce, codeChallenge: tx.codeChallenge, apiId: tx.apiId },
    session,
    headers,
  );
}
