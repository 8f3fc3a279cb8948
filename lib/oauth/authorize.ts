import { and, eq, gt, isNull } from "drizzle-orm";
import { apiGrants, apis, authorizationCodes, authorizationTransactions, users } from "../../db/schema";
import { addMs, MINUTE, SECOND } from "../clock";
import { randomToken, safeEqual, sha256Hex } from "../crypto";
import type { Endpoint, EndpointContext } from "../http/context";
import { serializeCookie } from "../http/cookies";
import { OAuthError } from "../http/errors";
import { unstorableParameter } from "../http/form";
import { isStorableText } from "../http/text";
import { hostedErrorPage } from "../hosted/html";
import { getLiveSession, type HostedSession } from "../authn/hosted-session";
import { findClient, type ClientRow } from "./clients";
import { hasDuplicates, isIdentityScope, MAX_AUTHORIZE_SCOPES, splitScope } from "./scopes";

export const TRANSACTION_TTL_MS = 10 * MINUTE;
export const CODE_TTL_MS = 60 * SECOND;
export const TX_COOKIE_PREFIX = "lk_tx_";

const REQUIRED = ["client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method"];
const KNOWN = new Set([...REQUIRED, "resource"]);
const UNSUPPORTED = new Set(["prompt", "max_age", "login_hint", "organization", "connection", "response_mode", "audience"]);
const BASE64URL_24_128 = /^[A-Za-z0-9_-]{24,128}$/;
/** base64url of a SHA-256 digest, unpadded: exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** An authorization-request error raised after client and redirect URI are verified: it goes to the callback. */
class RedirectableError extends Error {
  constructor(
    readonly error: "invalid_request" | "invalid_scope" | "access_denied" | "server_error",
    readonly description: string,
  ) {
    super(description);
  }
}

export interface ValidatedAuthorization {
  client: ClientRow;
  redirectUri: string;
  scope: string[];
  state: string;
  nonce: string;
  codeChallenge: string;
  apiId: string | null;
}

type Step = (params: URLSearchParams, ctx: EndpointContext, acc: Partial<ValidatedAuthorization>) => Promise<void> | void;

// Each step checks one row of SPEC.md's authorization-request table and throws a typed error.
const steps: Step[] = [
  function noDuplicates(params) {
    const seen = new Set<string>();
    for (const name of params.keys()) {
      if (seen.has(name)) throw new RedirectableError("invalid_request", `Parameter ${name} is duplicated`);
      seen.add(name);
    }
  },
  function noUnsupported(params) {
    for (const name of params.keys()) {
      if (UNSUPPORTED.has(name)) throw new RedirectableError("invalid_request", `Parameter ${name} is not supported`);
      if (!KNOWN.has(name)) throw new RedirectableError("invalid_request", `Parameter ${name} is not recognized`);
    }
    for (const name of REQUIRED) {
      if (!params.get(name)) throw new RedirectableError("invalid_request", `Parameter ${name} is required`);
    }
  },
  function responseType(params) {
    if (params.get("response_type") !== "code") throw new RedirectableError("invalid_request", "response_type must be code");
  },
  function nonce(params, _ctx, acc) {
    const value = params.get("nonce")!;
    if (!BASE64URL_24_128.test(value)) throw new RedirectableError("invalid_request", "nonce must be 24–128 base64url characters");
    if (value === acc.state) throw new RedirectableError("invalid_request", "nonce must be generated independently of state");
    acc.nonce = value;
  },
  function pkce(params, _ctx, acc) {
    if (params.get("code_challenge_method") !== "S256") throw new RedirectableError("invalid_request", "code_challenge_method must be S256");
    const challenge = params.get("code_challenge")!;
    if (!S256_CHALLENGE.test(challenge)) {
      throw new RedirectableError("invalid_request", "code_challenge must be the unpadded base64url SHA-256 of the verifier");
    }
    acc.codeChallenge = challenge;
  },
  async function resourceAndScope(params, ctx, acc) {
    const client = acc.client!;
    const resource = params.get("resource");
    let grantedPermissions: Set<string> = new Set();
    if (resource !== null) {
      const [row] = await ctx.service.db
        .select({ apiId: apis.id, permissions: apiGrants.permissions })
        .from(apiGrants)
        .innerJoin(apis, eq(apis.id, apiGrants.apiId))
        .where(and(eq(apiGrants.workspaceId, ctx.workspace.id), eq(apiGrants.clientPk, client.id), eq(apis.audience, resource), eq(apis.active, true)))
        .limit(1);
      if (!row) throw new RedirectableError("invalid_scope", "resource is not an active API granted to this client");
      acc.apiId = row.apiId;
      grantedPermissions = new Set(row.permissions);
    } else {
      acc.apiId = null;
    }
    const scope = splitScope(params.get("scope")!);
    if (!scope) throw new RedirectableError("invalid_scope", "scope is malformed");
    if (hasDuplicates(scope)) throw new RedirectableError("invalid_scope", "scope values must be unique");
    if (scope.length > MAX_AUTHORIZE_SCOPES) throw new RedirectableError("invalid_scope", `At most ${MAX_AUTHORIZE_SCOPES} scopes may be requested`);
    if (!scope.includes("openid")) throw new RedirectableError("invalid_scope", "scope must include openid");
    for (const s of scope) {
      if (isIdentityScope(s)) {
        if (!client.identityScopes.includes(s)) throw new RedirectableError("invalid_scope", `Scope ${s} is not registered for this client`);
      } else if (!grantedPermissions.has(s)) {
        throw new RedirectableError("invalid_scope", resource === null ? `Scope ${s} requires a resource` : `Scope ${s} is not permitted for this client and resource`);
      }
    }
    acc.scope = scope;
  },
];

function errorRedirect(redirectUri: string, issuer: string, error: string, description: string, state: string | null): Response {
  const url = new URL(redirectUri);
  url.searchParams.set("error", error);
  url.searchParams.set("error_description", description);
  if (state) url.searchParams.set("state", state);
  url.searchParams.set("iss", issuer);
  return redirect303(url.toString());
}

export function redirect303(location: string, headers: [string, string][] = []): Response {
  const h = new Headers({ Location: location, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" });
  for (const [k, v] of headers) h.append(k, v);
  return new Response(null, { status: 303, headers: h });
}

const unstorableRequest = () => hostedErrorPage(400, "Invalid sign-in request", "The sign-in request contains a character that is not accepted.", "invalid_request");

export const authorizeEndpoint: Endpoint = async (request, ctx) => {
  const params = new URL(request.url).searchParams;
  // Before any lookup, so the hosted page answers (nothing is verified yet to redirect to).
  if (unstorableParameter(params) !== null) return unstorableRequest();
  // Until the client and its exact redirect URI are verified, nothing is sent to any redirect URI.
  const clientIds = params.getAll("client_id");
  const redirectUris = params.getAll("redirect_uri");
  if (clientIds.length !== 1 || !clientIds[0]) {
    return hostedErrorPage(400, "Invalid sign-in request", clientIds.length > 1 ? "client_id is duplicated." : "client_id is missing.", "invalid_request");
  }
  const client = await findClient(ctx, clientIds[0]);
  if (!client || !client.active) {
    return hostedErrorPage(404, "Unknown application", "This application is not known to this workspace, or it is disabled.", "invalid_request");
  }
  if (client.type === "M2M") {
    return hostedErrorPage(400, "Invalid sign-in request", "Machine-to-machine applications cannot sign users in.", "invalid_request");
  }
  if (redirectUris.length !== 1 || !client.redirectUris.includes(redirectUris[0])) {
    return hostedErrorPage(400, "Invalid sign-in request", "The redirect URI is missing, duplicated or not registered for this application.", "invalid_request");
  }
  const redirectUri = redirectUris[0];
  const states = params.getAll("state");
  const state = states.length === 1 ? states[0] : null;
  if (state === null || !BASE64URL_24_128.test(state)) {
    // Without a usable state the client cannot correlate an error response: show it here instead.
    return hostedErrorPage(400, "Invalid sign-in request", "state must be present once, as 24–128 base64url characters.", "invalid_request");
  }
  const acc: Partial<ValidatedAuthorization> = { client, redirectUri, state };
  try {
    for (const step of steps) await step(params, ctx, acc);
  } catch (error) {
    if (error instanceof RedirectableError) return errorRedirect(redirectUri, ctx.issuer, error.error, error.description, state);
    throw error;
  }
  const authz = acc as ValidatedAuthorization;

  const session = await getLiveSession(ctx, request.headers.get("cookie"));
  if (session) return issueCodeRedirect(ctx, { ...authz, clientPk: client.id }, session);

  const now = ctx.service.clock.now();
  const txId = randomToken(16);
  const binding = randomToken(32);
  await ctx.service.db.insert(authorizationTransactions).values({
    id: txId,
    workspaceId: ctx.workspace.id,
    clientPk: client.id,
    redirectUri,
    scope: authz.scope,
    state: authz.state,
    nonce: authz.nonce,
    codeChallenge: authz.codeChallenge,
    apiId: authz.apiId,
    browserBindingHash: sha256Hex(binding),
    createdAt: now,
    expiresAt: addMs(now, TRANSACTION_TTL_MS),
  });
  return redirect303(`${ctx.basePath}/sign-in?tx=${txId}`, [
    ["Set-Cookie", serializeCookie(`${TX_COOKIE_PREFIX}${txId}`, binding, ctx.basePath, TRANSACTION_TTL_MS / 1000)],
  ]);
};

/** Issues a 60-second code for an authenticated session and sends the browser to the callback. */
export async function issueCodeRedirect(
  ctx: EndpointContext,
  authz: Pick<ValidatedAuthorization, "redirectUri" | "scope" | "state" | "nonce" | "codeChallenge" | "apiId"> & { clientPk: string },
  session: HostedSession,
  extraHeaders: [string, string][] = [],
): Promise<Response> {
  const now = ctx.service.clock.now();
  const [user] = await ctx.service.db.select({ status: users.status }).from(users).where(eq(users.id, session.userId)).limit(1);
  if (!user || user.status !== "active") {
    return errorRedirect(authz.redirectUri, ctx.issuer, "access_denied", "The user cannot sign in", authz.state);
  }
  const code = randomToken(32);
  await ctx.service.db.insert(authorizationCodes).values({
    codeHash: sha256Hex(code),
    workspaceId: ctx.workspace.id,
    clientPk: authz.clientPk,
    userId: session.userId,
    sessionId: session.id,
    redirectUri: authz.redirectUri,
    scope: authz.scope,
    nonce: authz.nonce,
    codeChallenge: authz.codeChallenge,
    apiId: authz.apiId,
    createdAt: now,
    expiresAt: addMs(now, CODE_TTL_MS),
  });
  const url = new URL(authz.redirectUri);
  url.searchParams.set("code", code);
  url.searchParams.set("state", authz.state);
  url.searchParams.set("iss", ctx.issuer);
  return redirect303(url.toString(), extraHeaders);
}

export type TransactionRow = typeof authorizationTransactions.$inferSelect;

/** An open (not completed, not expired) transaction bound to this browser, or null. */
export async function loadOpenTransaction(ctx: EndpointContext, txId: string, cookieValue: string | undefined): Promise<TransactionRow | null> {
  // An id the database cannot hold names no transaction.
  if (!txId || !cookieValue || !isStorableText(txId)) return null;
  const now = ctx.service.clock.now();
  const [tx] = await ctx.service.db
    .select()
    .from(authorizationTransactions)
    .where(
      and(
        eq(authorizationTransactions.workspaceId, ctx.workspace.id),
        eq(authorizationTransactions.id, txId),
        isNull(authorizationTransactions.completedAt),
        gt(authorizationTransactions.expiresAt, now),
      ),
    )
    .limit(1);
  if (!tx || !safeEqual(tx.browserBindingHash, sha256Hex(cookieValue))) return null;
  return tx;
}

/** Completes the transaction exactly once, then issues the code. */
export async function completeTransaction(ctx: EndpointContext, tx: TransactionRow, session: HostedSession, extraHeaders: [string, string][] = []): Promise<Response> {
  const now = ctx.service.clock.now();
  const done = await ctx.service.db
    .update(authorizationTransactions)
    .set({ completedAt: now })
    .where(and(eq(authorizationTransactions.id, tx.id), isNull(authorizationTransactions.completedAt), gt(authorizationTransactions.expiresAt, now)))
    .returning({ id: authorizationTransactions.id });
  if (done.length === 0) throw new OAuthError(400, "invalid_request", "This sign-in request has expired or was already used");
  return issueCodeRedirect(
    ctx,
    { clientPk: tx.clientPk, redirectUri: tx.redirectUri, scope: tx.scope, state: tx.state, nonce: tx.nonce, codeChallenge: tx.codeChallenge, apiId: tx.apiId },
    session,
    [...extraHeaders, ["Set-Cookie", serializeCookie(`${TX_COOKIE_PREFIX}${tx.id}`, "", ctx.basePath, 0)]],
  );
}
