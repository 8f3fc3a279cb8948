import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { clientSecrets, clients } from "../../db/schema";
import { safeEqual, sha256Hex } from "../crypto";
import { invalidClient, invalidRequest, OAuthError } from "../http/errors";
import { clientAddress } from "../http/rate-limit";
import { verifyBrowserOrigin } from "../http/cors";
import type { EndpointContext } from "../http/context";

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
 * Client authentication as SPEC.md says: public clients send `client_id` in the body and no
 * secret; confidential clients use HTTP Basic only, with an optional matching body `client_id`.
 * Body secrets, mixed methods and an `Origin` header on confidential authentication are refused.
 */
const FAILURE_WINDOW_MS = 5 * 60_000;

function limitClient(ctx: EndpointContext, clientId: string): void {
  const decision = ctx.service.limiter.hit(`client:${ctx.workspace.id}:${clientId}`, ctx.service.config.rateLimits.requestsPerMinute, 60_000);
  if (!decision.allowed) {
    throw new OAuthError(429, "rate_limited", "Too many requests for this client; retry after the time in Retry-After", {
      headers: { "Retry-After": String(decision.retryAfterSeconds) },
    });
  }
}

export async function authenticateClient(
  request: Request,
  params: Map<string, string>,
  ctx: EndpointContext,
): Promise<AuthenticatedClient> {
  const authorization = request.headers.get("authorization");
  const { limiter, config } = ctx.service;
  if (params.has("client_secret")) {
    throw invalidRequest("client_secret in the body is not supported; confidential clients use HTTP Basic");
  }
  if (params.has("client_assertion") || params.has("client_assertion_type")) {
    throw invalidRequest("Private-key JWT client authentication is not supported");
  }
  if (authorization !== null) {
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
    const failureKey = `authfail:${ctx.workspace.id}:${clientId}:${clientAddress(request, config.trustProxy)}`;
    const failureLimit = config.rateLimits.failuresPer5Minutes;
    if (!limiter.blocked(failureKey, failureLimit, FAILURE_WINDOW_MS).allowed) throw invalidClient("Client authentication failed", true);
    const { client, secrets } = await findClientWithSecrets(ctx, clientId);
    const credentialId = client && client.active && client.type !== "PUBLIC" ? matchSecret(ctx, secrets, secret) : null;
    if (!client || !credentialId) {
      await limiter.recordFailure(failureKey, failureLimit, FAILURE_WINDOW_MS);
      throw invalidClient("Client authentication failed", true);
    }
    limitClient(ctx, client.clientId);
    return { client, credentialId, method: "client_secret_basic", corsOrigin: null };
  }
  const clientId = params.get("client_id");
  if (!clientId) throw invalidClient("Client authentication is required", false);
  const client = await findClient(ctx, clientId);
  if (!client || !client.active) throw invalidClient("Client authentication failed", false);
  if (client.type !== "PUBLIC") throw invalidClient("This client must authenticate with HTTP Basic", true);
  const corsOrigin = verifyBrowserOrigin(request, client);
  limitClient(ctx, client.clientId);
  return { client, credentialId: null, method: "none", corsOrigin };
}

interface ActiveSecret {
  id: string;
  secretHash: string;
  lastUsedAt: Date | null;
}

/**
 * The client and its active secrets in one round trip, prepared once per database handle:
 * confidential authentication on the token and introspection hot paths.
 */
function prepareClientWithSecrets(db: Database) {
  return db
    .select({ client: clients, secretId: clientSecrets.id, secretHash: clientSecrets.secretHash, lastUsedAt: clientSecrets.lastUsedAt })
    .from(clients)
    .leftJoin(
      clientSecrets,
      and(
        eq(clientSecrets.workspaceId, clients.workspaceId),
        eq(clientSecrets.clientPk, clients.id),
        isNull(clientSecrets.revokedAt),
        gt(clientSecrets.expiresAt, sql`${sql.placeholder("now")}::timestamptz`),
      ),
    )
    .where(and(eq(clients.workspaceId, sql.placeholder("workspaceId")), eq(clients.clientId, sql.placeholder("clientId"))))
    .prepare("latchkey_client_with_secrets");
}

const clientLookups = new WeakMap<Database, ReturnType<typeof prepareClientWithSecrets>>();

async function findClientWithSecrets(ctx: EndpointContext, clientId: string): Promise<{ client: ClientRow | undefined; secrets: ActiveSecret[] }> {
  const db = ctx.service.db;
  let prepared = clientLookups.get(db);
  if (!prepared) {
    prepared = prepareClientWithSecrets(db);
    clientLookups.set(db, prepared);
  }
  const rows = await prepared.execute({ workspaceId: ctx.workspace.id, clientId, now: ctx.service.clock.now().toISOString() });
  const secrets: ActiveSecret[] = [];
  for (const row of rows) if (row.secretId !== null && row.secretHash !== null) secrets.push({ id: row.secretId, secretHash: row.secretHash, lastUsedAt: row.lastUsedAt });
  return { client: rows[0]?.client, secrets };
}

/** Returns the id of the active secret that matches, comparing hashes in constant time. */
export async function verifyClientSecret(ctx: EndpointContext, clientPk: string, secret: string): Promise<string | null> {
  const now = ctx.service.clock.now();
  const rows = await ctx.service.db
    .select({ id: clientSecrets.id, secretHash: clientSecrets.secretHash, lastUsedAt: clientSecrets.lastUsedAt })
    .from(clientSecrets)
    .where(
      and(
        eq(clientSecrets.workspaceId, ctx.workspace.id),
        eq(clientSecrets.clientPk, clientPk),
        isNull(clientSecrets.revokedAt),
        gt(clientSecrets.expiresAt, now),
      ),
    );
  return matchSecret(ctx, rows, secret);
}

/** The id of the active secret whose hash matches, compared in constant time; records its use at most once a minute. */
function matchSecret(ctx: EndpointContext, rows: ActiveSecret[], secret: string): string | null {
  const now = ctx.service.clock.now();
  const presented = sha256Hex(secret);
  let match: (typeof rows)[number] | undefined;
  for (const row of rows) if (safeEqual(row.secretHash, presented)) match = row;
  if (!match) return null;
  // Last-used is informational; record it at most once a minute and never fail the request on it.
  // The in-process mark keeps concurrent requests (which all read the old value) from each writing.
  const mark = `secret-used:${match.id}`;
  const marked = ctx.service.cache.get(mark) as number | undefined;
  if ((!match.lastUsedAt || now.getTime() - match.lastUsedAt.getTime() > 60_000) && (marked === undefined || now.getTime() - marked > 60_000)) {
    ctx.service.cache.set(mark, now.getTime());
    ctx.service.db
      .update(clientSecrets)
      .set({ lastUsedAt: now })
      .where(eq(clientSecrets.id, match.id))
      .catch(() => {});
  }
  return match.id;
}
