import { and, eq, sql } from "drizzle-orm";
import { secretActiveSql } from "../authority";
import { reusable } from "../../db/reusable";
import { clientSecrets, clients } from "../../db/schema";
import { safeEqual, sha256Hex } from "../crypto";
import { invalidClient, invalidRequest, OAuthError } from "./errors";
import { clientAddress } from "../http/client-address";
import { verifyBrowserOrigin } from "./cors";
import type { EndpointContext } from "../http/context";
import { countRequests, FAILURES_PER_5_MINUTES, guardNow, requestsBlocked, type GuessingLimits, type RequestLimits } from "../limits/declarations";
import { credentialKey, credentialMemo } from "./client-memo";

export type ClientRow = typeof clients.$inferSelect;

export async function findClient(ctx: EndpointContext, clientId: string): Promise<ClientRow | undefined> {
  const [row] = await ctx.service.db
    .select()
    .from(clients)
    .where(and(eq(clients.workspaceId, ctx.workspace.id), eq(clients.clientId, clientId)))
    .limit(1);
  return row;
}

export interface AuthenticatedClient {
  client: ClientRow;
  /** The client secret used (confidential clients); tokens of workloads are bound to it. */
  credentialId: string | null;
  method: "client_secret_basic" | "none";
  /** The verified browser origin of a public client's cross-origin call, for the CORS answer. */
  corsOrigin: string | null;
  /**
   * Present only when the credential was recognised from the in-process memo, without a lookup.
   * The handler's own statement must then confirm that the secret and the client are still live;
   * see `UnconfirmedClient`. Only handlers declared with `checksCredentialLiveness` receive one.
   */
  unconfirmed?: UnconfirmedClient;
}

/** A client authenticated from the memo, pending its caller's liveness check. */
export type RecalledClient = AuthenticatedClient & { credentialId: string; unconfirmed: UnconfirmedClient };

/** A memoized credential whose liveness the caller's statement checks. */
export interface UnconfirmedClient {
  /**
   * The caller's statement found the secret unrevoked and unexpired and the client active, of the
   * type and client_id recalled: finish authentication (last-used mark, per-client limit).
   */
  confirm(): AuthenticatedClient;
  /** The statement found it dead (or was not run): forget it and authenticate with a full lookup. */
  authenticate(): Promise<AuthenticatedClient>;
}

const formDecode = (value: string) => decodeURIComponent(value.replace(/\+/g, " "));

export function parseBasic(header: string): { clientId: string; secret: string } {
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/.exec(header.trim());
  if (!match) throw invalidClient("Malformed Basic authorization header", true);
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) throw invalidClient("Malformed Basic credentials", true);
  try {
    return { clientId: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    throw invalidClient("Malformed Basic credentials encoding", true);
  }
}

/**
 * Failed client authentications, per client_id (as sent, known or not) and address: once reached,
 * that client is refused from that address as `invalid_client` without checking the secret.
 */
export const CLIENT_SECRET_LIMITS: GuessingLimits = {
  name: "authfail",
  label: "Client secret (HTTP Basic), the account being the client_id",
  perChallenge: null,
  perAccountAndAddress: FAILURES_PER_5_MINUTES,
};

/**
 * Requests per client, across addresses: declared by the routes whose endpoint authenticates
 * clients (token, revocation, introspection, the account-security handoff's calls) and counted
 * at each successful client authentication of those routes.
 */
export const CLIENT_REQUESTS: RequestLimits = {
  name: "client",
  label: "Authenticated client requests",
  per: "client",
  rate: { times: 1, scale: "requestsPerMinute", windowMs: 60_000 },
};

/** Counts the request on the route's declared limits per client (EndpointContext `requestLimits`). */
function limitClient(ctx: EndpointContext, clientId: string): void {
  const { limiter, config } = ctx.service;
  const decision = countRequests(limiter, config.rateLimits, ctx.requestLimits ?? [], "client", ctx.workspace.id, clientId);
  if (!decision.allowed) {
    throw new OAuthError(429, "rate_limited", "Too many requests for this client; retry after the time in Retry-After", {
      headers: { "Retry-After": String(decision.retryAfterSeconds) },
    });
  }
}

/** HTTP Basic credentials that passed every check made before a lookup. */
interface BasicCredentials {
  clientId: string;
  secret: string;
  secretHash: string;
  /** Counts a failed authentication on CLIENT_SECRET_LIMITS. */
  recordFailure(): Promise<void>;
}

/**
 * The refusal of a body `client_secret` (client_secret_post), on every endpoint that
 * authenticates clients: it says which header to send instead, and never echoes the secret.
 */
export const bodySecretRefused = () =>
  invalidRequest(
    "client_secret in the body is not supported; confidential clients use HTTP Basic: send the header Authorization: Basic base64(urlencode(client_id):urlencode(client_secret)) and leave client_secret out of the body",
  );

/**
 * The refusals made before any lookup, in SPEC.md's order: body secrets, private-key JWT, a
 * non-Basic scheme, an `Origin` header, a mismatched body `client_id`, and the per-address
 * failure block. Null when the request carries no Authorization header (a public client).
 */
function readBasic(request: Request, params: Map<string, string>, ctx: EndpointContext): BasicCredentials | null {
  const authorization = request.headers.get("authorization");
  const { config } = ctx.service;
  if (params.has("client_secret")) throw bodySecretRefused();
  if (params.has("client_assertion") || params.has("client_assertion_type")) {
    throw invalidRequest("Private-key JWT client authentication is not supported");
  }
  if (authorization === null) return null;
  if (!/^Basic /i.test(authorization)) throw invalidClient("Only HTTP Basic client authentication is supported", true);
  if (request.headers.has("origin")) {
    throw new OAuthError(403, "invalid_request", "Confidential client authentication is not accepted from a browser origin");
  }
  const { clientId, secret } = parseBasic(authorization);
  const bodyClientId = params.get("client_id");
  if (bodyClientId !== undefined && bodyClientId !== clientId) {
    throw invalidRequest("client_id in the body does not match the authenticated client");
  }
  // Repeated failures from one address lock that client out there for a while; as SPEC.md says,
  // the limit surfaces as an authentication failure, and the secret is not even checked.
  const gate = guardNow(ctx.service.limiter, config.rateLimits, CLIENT_SECRET_LIMITS, {
    workspaceId: ctx.workspace.id,
    address: clientAddress(request, config.trustProxy),
    account: clientId,
  });
  if (!gate.allowed) throw invalidClient("Client authentication failed", true);
  return { clientId, secret, secretHash: sha256Hex(secret), recordFailure: gate.record };
}

/** The full lookup: the client and its active secrets in one query; the memo is filled on success only. */
async function lookupBasic(ctx: EndpointContext, basic: BasicCredentials): Promise<AuthenticatedClient> {
  const { client, secrets } = await findClientWithSecrets(ctx, basic.clientId);
  const match = client && client.active && client.type !== "PUBLIC" ? matchSecret(ctx, secrets, basic.secretHash) : null;
  if (!client || !match) {
    await basic.recordFailure();
    throw invalidClient("Client authentication failed", true);
  }
  limitClient(ctx, client.clientId);
  const now = ctx.service.clock.now();
  credentialMemo(ctx.service).set(
    credentialKey(ctx.workspace.id, basic.clientId, basic.secretHash),
    { client, secretId: match.id, lastUsedAt: match.lastUsedAt },
    now,
  );
  return { client, credentialId: match.id, method: "client_secret_basic", corsOrigin: null };
}

/**
 * The memoized credential for these Basic credentials, unconfirmed; null when there is none or
 * when the per-client limit is already reached (the full path then answers exactly as before:
 * invalid_client for a dead credential, 429 for a live one).
 */
function recall(ctx: EndpointContext, basic: BasicCredentials): RecalledClient | null {
  const memo = credentialMemo(ctx.service);
  const key = credentialKey(ctx.workspace.id, basic.clientId, basic.secretHash);
  const recalled = memo.get(key, ctx.service.clock.now());
  if (!recalled || recalled.client.workspaceId !== ctx.workspace.id || recalled.client.clientId !== basic.clientId) return null;
  const { limiter, config } = ctx.service;
  if (requestsBlocked(limiter, config.rateLimits, ctx.requestLimits ?? [], "client", ctx.workspace.id, recalled.client.clientId)) return null;
  const authenticated = { client: recalled.client, credentialId: recalled.secretId, method: "client_secret_basic" as const, corsOrigin: null };
  return {
    ...authenticated,
    unconfirmed: {
      confirm() {
        // The same effects, in the same order, as a successful lookup.
        if (recordSecretUse(ctx, recalled.secretId, recalled.lastUsedAt)) recalled.lastUsedAt = ctx.service.clock.now();
        limitClient(ctx, recalled.client.clientId);
        return authenticated;
      },
      authenticate() {
        memo.delete(key);
        return lookupBasic(ctx, basic);
      },
    },
  };
}

/** Token-endpoint grants whose handler confirms a memoized credential in its own statement, with the parameters it accepts. */
const livenessCheckingGrants = new Map<string, ReadonlySet<string>>();

/**
 * Declares that the token endpoint's `grantType` handler checks an `unconfirmed` client in its own
 * statement and falls back to `authenticate()` before any other answer. Requests carrying another
 * parameter are left to a full lookup, since the endpoint refuses those before the handler runs.
 */
export function checksCredentialLiveness(grantType: string, parameters: ReadonlySet<string>): void {
  livenessCheckingGrants.set(grantType, parameters);
}

function mayDefer(params: Map<string, string>): boolean {
  const grantType = params.get("grant_type");
  const accepted = grantType === undefined ? undefined : livenessCheckingGrants.get(grantType);
  if (!accepted) return false;
  for (const name of params.keys()) if (!accepted.has(name)) return false;
  return true;
}

/**
 * Client authentication as SPEC.md says: public clients send `client_id` in the body and no
 * secret; confidential clients use HTTP Basic only, with an optional matching body `client_id`.
 * Body secrets, mixed methods and an `Origin` header on confidential authentication are refused.
 * A memoized credential comes back `unconfirmed`, without a query, only for the grants declared
 * with `checksCredentialLiveness`; every other caller gets a client confirmed by a lookup.
 */
export async function authenticateClient(
  request: Request,
  params: Map<string, string>,
  ctx: EndpointContext,
): Promise<AuthenticatedClient> {
  const basic = readBasic(request, params, ctx);
  if (basic) return (mayDefer(params) && recall(ctx, basic)) || lookupBasic(ctx, basic);
  const clientId = params.get("client_id");
  if (!clientId) throw invalidClient("Client authentication is required", false);
  const client = await findClient(ctx, clientId);
  if (!client || !client.active) throw invalidClient("Client authentication failed", false);
  if (client.type !== "PUBLIC") throw invalidClient("This client must authenticate with HTTP Basic", true);
  const corsOrigin = verifyBrowserOrigin(request, client);
  limitClient(ctx, client.clientId);
  return { client, credentialId: null, method: "none", corsOrigin };
}

/**
 * For an endpoint that checks liveness in its own statement (introspection): the same refusals
 * as authenticateClient, then the memoized credential, unconfirmed, or null (no memo entry, no
 * Basic header): the caller then authenticates with authenticateClient.
 */
export function recallClient(request: Request, params: Map<string, string>, ctx: EndpointContext): RecalledClient | null {
  const basic = readBasic(request, params, ctx);
  return basic && recall(ctx, basic);
}

interface ActiveSecret {
  id: string;
  secretHash: string;
  lastUsedAt: Date | null;
}

/**
 * The client and its active secrets in one round trip, built and prepared once:
 * confidential authentication on the token and introspection hot paths.
 */
const clientWithSecretsStatement = reusable("latchkey_client_with_secrets", (db) =>
  db
    .select({ client: clients, secretId: clientSecrets.id, secretHash: clientSecrets.secretHash, lastUsedAt: clientSecrets.lastUsedAt })
    .from(clients)
    .leftJoin(
      clientSecrets,
      and(
        eq(clientSecrets.workspaceId, clients.workspaceId),
        eq(clientSecrets.clientPk, clients.id),
        secretActiveSql(clientSecrets, sql`${sql.placeholder("now")}::timestamptz`),
      ),
    )
    .where(and(eq(clients.workspaceId, sql.placeholder("workspaceId")), eq(clients.clientId, sql.placeholder("clientId")))),
);

async function findClientWithSecrets(ctx: EndpointContext, clientId: string): Promise<{ client: ClientRow | undefined; secrets: ActiveSecret[] }> {
  const rows = await clientWithSecretsStatement(ctx.service.db, { workspaceId: ctx.workspace.id, clientId, now: ctx.service.clock.now().toISOString() });
  const secrets: ActiveSecret[] = [];
  for (const row of rows) if (row.secretId !== null && row.secretHash !== null) secrets.push({ id: row.secretId, secretHash: row.secretHash, lastUsedAt: row.lastUsedAt });
  return { client: rows[0]?.client, secrets };
}

/** The active secret whose hash matches, compared in constant time; records its use at most once a minute. */
function matchSecret(ctx: EndpointContext, rows: ActiveSecret[], presented: string): ActiveSecret | null {
  let match: ActiveSecret | undefined;
  for (const row of rows) if (safeEqual(row.secretHash, presented)) match = row;
  if (!match) return null;
  if (recordSecretUse(ctx, match.id, match.lastUsedAt)) return { ...match, lastUsedAt: ctx.service.clock.now() };
  return match;
}

/**
 * Last-used is informational; it is recorded at most once a minute and never fails the request.
 * The in-process mark keeps concurrent requests (which all read the old value) from each writing.
 * Returns whether it wrote.
 */
function recordSecretUse(ctx: EndpointContext, secretId: string, lastUsedAt: Date | null): boolean {
  const now = ctx.service.clock.now();
  const mark = `secret-used:${secretId}`;
  const marked = ctx.service.cache.get(mark) as number | undefined;
  if ((lastUsedAt && now.getTime() - lastUsedAt.getTime() <= 60_000) || (marked !== undefined && now.getTime() - marked <= 60_000)) return false;
  ctx.service.cache.set(mark, now.getTime());
  ctx.service.db
    .update(clientSecrets)
    .set({ lastUsedAt: now })
    .where(eq(clientSecrets.id, secretId))
    .catch(() => {});
  return true;
}
