/**
 * The console signs operators in as any customer application signs its users in (SPEC.md
 * "Customer application routes"): a start route with a fresh browser-bound transaction (state,
 * nonce, PKCE verifier, all server-side), the system workspace's authorize endpoint and hosted
 * sign-in, and a callback that consumes the transaction once, checks `code`/`state`/`iss`,
 * exchanges the code at the token endpoint (through the route table, HTTP Basic as the console
 * client), verifies the ID token against the workspace JWKS and starts a console session bound to
 * the grant and hosted session that the exchange produced.
 */
import { and, eq, gt, isNull, lt } from "drizzle-orm";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";
import { accessTokens, consoleLoginTransactions, consoleSessions, grants, hostedSessions } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { nowValue, selectAccessTokenVerdict } from "../authority";
import { addMs, HOUR, MINUTE } from "../clock";
import { decryptSecret, encryptSecret, randomToken, safeEqual, sha256Base64Url, sha256Hex } from "../crypto";
import { idleExpiryFrom, newSessionToken, parseSessionToken, sessionSecretHash } from "../authn/session-token";
import { serializeCookie } from "../http/cookies";
import { dispatch } from "../server/router";
import { pairwiseSubject } from "../oauth/subject";
import type { Service } from "../service";
import { ACCOUNT_PAGE_AFTER_PROOF, checkConsoleSignIn, UNPROVEN_PASSWORD_MESSAGE } from "./operator-accounts";
import { CONSOLE_ABSOLUTE_MS, CONSOLE_COOKIE_PATH, CONSOLE_IDLE_MS, CONSOLE_SESSION_COOKIE } from "./authz";
import {
  CONSOLE_CLIENT_ID,
  CONSOLE_SCOPES,
  consoleClientSecret,
  consoleRedirectUri,
  consoleSignedOutUri,
  SYSTEM_WORKSPACE_ID,
  systemIssuer,
  systemWorkspaceReady,
} from "./system";

export const CONSOLE_TX_COOKIE = "lk_console_tx";
export const CONSOLE_TX_PATH = "/console/auth";
export const LOGIN_TTL_MS = 10 * MINUTE;
const VERIFIER_PURPOSE = "console-login-verifier";

/** Only console pages are return destinations: never another origin, never the sign-in pages themselves. */
export function safeReturnTo(value: string | null | undefined): string {
  if (!value || !/^\/console(\/[A-Za-z0-9._~%/-]*)?(\?[A-Za-z0-9._~%&=+*-]*)?$/.test(value) || value.includes("//")) return "/console";
  if (/^\/console\/(auth|sign-in|setup|signed-out)(\/|\?|$)/.test(value)) return "/console";
  return value;
}

export class ConsoleLoginError extends Error {
  constructor(
    readonly code: "expired" | "invalid_callback" | "denied" | "exchange_failed" | "invalid_id_token" | "mailbox_unproven",
    message: string,
  ) {
    super(message);
    this.name = "ConsoleLoginError";
  }
}

/** Starts a console sign-in: returns the authorize URL and the browser-binding cookie. */
export async function startConsoleLogin(service: Service, returnTo?: string | null): Promise<{ location: string; cookie: string }> {
  await systemWorkspaceReady(service);
  const now = service.clock.now();
  // Abandoned sign-ins are useless after ten minutes; sweep them as new ones start.
  await service.db.delete(consoleLoginTransactions).where(lt(consoleLoginTransactions.expiresAt, addMs(now, -HOUR)));
  const id = randomToken(16);
  const binding = randomToken(32);
  const state = randomToken(32);
  const nonce = randomToken(32);
  const verifier = randomToken(32);
  await service.db.insert(consoleLoginTransactions).values({
    id,
    bindingHash: sha256Hex(binding),
    state,
    nonce,
    codeVerifierEncrypted: encryptSecret(service.config.masterKey, verifier, `${VERIFIER_PURPOSE}:${id}`),
    returnTo: safeReturnTo(returnTo),
    createdAt: now,
    expiresAt: addMs(now, LOGIN_TTL_MS),
  });
  const url = new URL(`${systemIssuer(service.config.publicUrl)}/oauth2/authorize`);
  url.search = new URLSearchParams({
    client_id: CONSOLE_CLIENT_ID,
    redirect_uri: consoleRedirectUri(service.config.publicUrl),
    response_type: "code",
    scope: CONSOLE_SCOPES.join(" "),
    state,
    nonce,
    code_challenge: sha256Base64Url(verifier),
    code_challenge_method: "S256",
  }).toString();
  return { location: url.toString(), cookie: serializeCookie(CONSOLE_TX_COOKIE, `${id}.${binding}`, CONSOLE_TX_PATH, LOGIN_TTL_MS / 1000) };
}

export const clearLoginCookie = () => serializeCookie(CONSOLE_TX_COOKIE, "", CONSOLE_TX_PATH, 0);
export const clearSessionCookie = () => serializeCookie(CONSOLE_SESSION_COOKIE, "", CONSOLE_COOKIE_PATH, 0);

function basic(clientId: string, secret: string): string {
  const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, "+");
  return "Basic " + Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString("base64");
}

function single(params: URLSearchParams, name: string): string | null {
  const values = params.getAll(name);
  return values.length === 1 && values[0] ? values[0] : null;
}

export interface FinishInput {
  /** The callback URL as the browser requested it. */
  url: URL;
  /** The `lk_console_tx` cookie value. */
  txCookie: string | undefined;
  ip?: string | null;
  userAgent?: string | null;
}

/** The login transaction this browser started, consumed by the callback; the console session starts from it. */
type LoginTransaction = typeof consoleLoginTransactions.$inferSelect;

/** The grant, user and hosted session behind the access token the code exchange issued, all live. */
interface IssuedAuthorization {
  grantId: string;
  userId: string;
  sessionId: string;
  grantAbsolute: Date;
  sessionAbsolute: Date;
}

/** Completes a console sign-in; returns the console session cookie and where to go. */
export async function finishConsoleLogin(service: Service, input: FinishInput): Promise<{ cookie: string; returnTo: string; operatorUserId: string }> {
  const issuer = systemIssuer(service.config.publicUrl);
  const now = service.clock.now();
  // The transaction is consumed first, whatever follows: a callback is usable once.
  const tx = await consumeLoginTransaction(service, input.txCookie, now);
  const code = checkCallback(input.url.searchParams, tx, issuer);
  const tokens = await exchangeCode(service, issuer, tx, code);
  const claims = await verifyIdToken(service, issuer, tokens.idToken, tx.nonce, now);
  const issued = await issuedAuthorization(service, tokens.accessToken, now);
  if (claims.sub !== pairwiseSubject(service, SYSTEM_WORKSPACE_ID, CONSOLE_CLIENT_ID, issued.userId) || claims.sid !== issued.sessionId) {
    throw new ConsoleLoginError("invalid_id_token", "The ID token does not match the authorization.");
  }
  // A password set before the mailbox was proven signs nobody in; an email code proves the mailbox and discards it.
  const proof = await checkConsoleSignIn(service.db, { userId: issued.userId, hostedSessionId: issued.sessionId, grantId: issued.grantId }, now);
  if (proof === "refused") throw new ConsoleLoginError("mailbox_unproven", UNPROVEN_PASSWORD_MESSAGE);
  const cookie = await startConsoleSession(service, issued, { email: claims.email ?? null, ip: input.ip ?? null, userAgent: input.userAgent ?? null }, now);
  return {
    cookie,
    // The password the account had was not its owner's: ask for their own (or none).
    returnTo: proof.passwordDiscarded ? ACCOUNT_PAGE_AFTER_PROOF : tx.returnTo,
    operatorUserId: issued.userId,
  };
}

/**
 * Marks the transaction named by the browser's cookie consumed and returns it: only an unconsumed,
 * unexpired one whose binding secret matches the cookie. Throws `expired` otherwise.
 */
async function consumeLoginTransaction(service: Service, txCookie: string | undefined, now: Date): Promise<LoginTransaction> {
  const [txId, binding] = (txCookie ?? "").split(".");
  if (!txId || !binding) throw new ConsoleLoginError("expired", "This sign-in has expired or was started in another browser.");
  const [tx] = await service.db
    .update(consoleLoginTransactions)
    .set({ consumedAt: now })
    .where(
      and(
        eq(consoleLoginTransactions.id, txId),
        eq(consoleLoginTransactions.bindingHash, sha256Hex(binding)),
        isNull(consoleLoginTransactions.consumedAt),
        gt(consoleLoginTransactions.expiresAt, now),
      ),
    )
    .returning();
  if (!tx) throw new ConsoleLoginError("expired", "This sign-in has expired or was already used.");
  return tx;
}

/**
 * Checks the callback's query against the transaction and returns the authorization code: an error
 * answer is `denied` (when its state is this browser's), otherwise `code`, `state` and `iss` each
 * exactly once, the state the transaction's and the issuer the configured one (`invalid_callback`).
 */
function checkCallback(params: URLSearchParams, tx: LoginTransaction, issuer: string): string {
  const error = params.get("error");
  const state = single(params, "state");
  const iss = single(params, "iss");
  if (error !== null) {
    if (state === null || !safeEqual(state, tx.state)) throw new ConsoleLoginError("invalid_callback", "The sign-in response does not belong to this browser.");
    throw new ConsoleLoginError("denied", params.get("error_description") ?? error);
  }
  const code = single(params, "code");
  if (code === null || state === null || iss === null) {
    throw new ConsoleLoginError("invalid_callback", "The sign-in response must carry code, state and iss exactly once.");
  }
  if (!safeEqual(state, tx.state)) throw new ConsoleLoginError("invalid_callback", "The sign-in response does not belong to this browser.");
  // The issuer is pinned by configuration, never taken from the query.
  if (iss !== issuer) throw new ConsoleLoginError("invalid_callback", "The sign-in response came from an unexpected issuer.");
  return code;
}

/**
 * Exchanges the code with the transaction's PKCE verifier at the token endpoint, by the exact
 * protocol path (the route table, HTTP Basic as the console client). Returns the ID token and the
 * access token, or throws `exchange_failed`.
 */
async function exchangeCode(service: Service, issuer: string, tx: LoginTransaction, code: string): Promise<{ idToken: string; accessToken: string }> {
  const verifier = decryptSecret(service.config.masterKey, tx.codeVerifierEncrypted, `${VERIFIER_PURPOSE}:${tx.id}`);
  const secret = await consoleClientSecret(service);
  const tokenResponse = await dispatch(
    new Request(`${issuer}/oauth2/token`, {
      method: "POST",
      headers: { authorization: basic(CONSOLE_CLIENT_ID, secret), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: consoleRedirectUri(service.config.publicUrl), code_verifier: verifier }).toString(),
    }),
    service,
  );
  const tokens = (await tokenResponse?.json().catch(() => null)) as Record<string, unknown> | null;
  if (!tokenResponse || tokenResponse.status !== 200 || !tokens || typeof tokens.id_token !== "string" || typeof tokens.access_token !== "string") {
    const reason = tokens && typeof tokens.error === "string" ? `${tokens.error}: ${String(tokens.error_description ?? "")}` : `status ${tokenResponse?.status}`;
    throw new ConsoleLoginError("exchange_failed", `The sign-in could not be completed (${reason}).`);
  }
  return { idToken: tokens.id_token, accessToken: tokens.access_token };
}

/**
 * Verifies the ID token against the system workspace's JWKS (issuer, the console as audience, ES256,
 * the required claims) and its nonce against the transaction's. Returns its claims, or throws
 * `invalid_id_token`.
 */
async function verifyIdToken(service: Service, issuer: string, idToken: string, nonce: string, now: Date): Promise<Record<string, unknown>> {
  const jwksResponse = await dispatch(new Request(`${issuer}/.well-known/jwks.json`), service);
  const jwks = (await jwksResponse?.json()) as JSONWebKeySet;
  let claims: Record<string, unknown>;
  try {
    ({ payload: claims } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
      issuer,
      audience: CONSOLE_CLIENT_ID,
      algorithms: ["ES256"],
      currentDate: now,
      requiredClaims: ["iat", "exp", "sub", "nonce", "sid"],
    }));
  } catch (e) {
    throw new ConsoleLoginError("invalid_id_token", `The ID token did not verify (${(e as Error).message}).`);
  }
  if (typeof claims.nonce !== "string" || !safeEqual(claims.nonce, nonce)) throw new ConsoleLoginError("invalid_id_token", "The ID token's nonce does not match.");
  return claims;
}

/**
 * The grant, user and hosted session behind the access token the exchange just issued, live by the
 * one authority rule; throws `exchange_failed` when any is missing or refused.
 */
async function issuedAuthorization(service: Service, accessToken: string, now: Date): Promise<IssuedAuthorization> {
  const [issued] = await selectAccessTokenVerdict(service.db, nowValue(now), {
    grantId: accessTokens.grantId,
    userId: accessTokens.userId,
    sessionId: accessTokens.sessionId,
    grantAbsolute: grants.absoluteExpiresAt,
    sessionAbsolute: hostedSessions.absoluteExpiresAt,
  })
    .where(and(eq(accessTokens.workspaceId, SYSTEM_WORKSPACE_ID), eq(accessTokens.tokenHash, sha256Hex(accessToken))))
    .limit(1);
  if (!issued || issued.refusal !== null || !issued.grantId || !issued.userId || !issued.sessionId || !issued.grantAbsolute || !issued.sessionAbsolute) {
    throw new ConsoleLoginError("exchange_failed", "The sign-in produced no usable authorization.");
  }
  return { grantId: issued.grantId, userId: issued.userId, sessionId: issued.sessionId, grantAbsolute: issued.grantAbsolute, sessionAbsolute: issued.sessionAbsolute };
}

/**
 * Starts the operator's console session, bound to the grant and hosted session and ending no later
 * than either (nor than the console's absolute lifetime); records `console.signed_in`. Returns the
 * session cookie.
 */
async function startConsoleSession(
  service: Service,
  issued: IssuedAuthorization,
  seen: { email: unknown; ip: string | null; userAgent: string | null },
  now: Date,
): Promise<string> {
  const token = newSessionToken();
  const id = token.id;
  const expiresAt = new Date(Math.min(now.getTime() + CONSOLE_ABSOLUTE_MS, issued.grantAbsolute.getTime(), issued.sessionAbsolute.getTime()));
  await service.db.insert(consoleSessions).values({
    id,
    secretHash: token.secretHash,
    operatorUserId: issued.userId,
    grantId: issued.grantId,
    hostedSessionId: issued.sessionId,
    createdAt: now,
    lastSeenAt: now,
    idleExpiresAt: idleExpiryFrom(now, CONSOLE_IDLE_MS, expiresAt),
    expiresAt,
    ip: seen.ip,
    userAgent: seen.userAgent?.slice(0, 512) ?? null,
  });
  await recordAudit(service.db, {
    workspaceId: SYSTEM_WORKSPACE_ID,
    type: "console.signed_in",
    actor: issued.userId,
    clientId: CONSOLE_CLIENT_ID,
    data: { console_session: id, email: seen.email },
    ip: seen.ip,
    at: now,
  });
  const maxAge = Math.floor((expiresAt.getTime() - now.getTime()) / 1000);
  return serializeCookie(CONSOLE_SESSION_COOKIE, token.token, CONSOLE_COOKIE_PATH, maxAge);
}

/**
 * Ends the console session and returns the hosted logout URL that ends the operator's hosted
 * session too (it needs the grant, so the grant is left for logout to end).
 */
export async function endConsoleSession(service: Service, token: string | null | undefined, reason = "signed_out"): Promise<{ logoutUrl: string }> {
  const now = service.clock.now();
  const parts = parseSessionToken(token);
  if (parts) {
    const { id, secret } = parts;
    const [ended] = await service.db
      .update(consoleSessions)
      .set({ endedAt: now, endReason: reason })
      .where(and(eq(consoleSessions.id, id), eq(consoleSessions.secretHash, sessionSecretHash(secret)), isNull(consoleSessions.endedAt)))
      .returning({ operatorUserId: consoleSessions.operatorUserId });
    if (ended) {
      await recordAudit(service.db, { workspaceId: SYSTEM_WORKSPACE_ID, type: "console.signed_out", actor: ended.operatorUserId, data: { console_session: id }, at: now });
    }
  }
  const url = new URL(`${systemIssuer(service.config.publicUrl)}/oidc/logout`);
  url.searchParams.set("client_id", CONSOLE_CLIENT_ID);
  url.searchParams.set("post_logout_redirect_uri", consoleSignedOutUri(service.config.publicUrl));
  return { logoutUrl: url.toString() };
}
