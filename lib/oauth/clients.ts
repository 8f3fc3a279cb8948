import { and, eq, gt, isNull } from "drizzle-orm";
import { clientSecrets, clients } from "../../db/schema";
import { safeEqual, sha256Hex } from "../crypto";
import { invalidClient, invalidRequest, OAuthError } from "../http/errors";
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
export async function authenticateClient(
  request: Request,
  params: Map<string, string>,
  ctx: EndpointContext,
): Promise<AuthenticatedClient> {
  const authorization = request.headers.get("authorization");
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
    const client = await findClient(ctx, clientId);
    if (!client || !client.active || client.type === "PUBLIC") throw invalidClient("Client authentication failed", true);
    const credentialId = await verifyClientSecret(ctx, client.id, secret);
    if (!credentialId) throw invalidClient("Client authentication failed", true);
    return { client, credentialId, method: "client_secret_basic" };
  }
  const clientId = params.get("client_id");
  if (!clientId) throw invalidClient("Client authentication is required", false);
  const client = await findClient(ctx, clientId);
  if (!client || !client.active) throw invalidClient("Client authentication failed", false);
  if (client.type !== "PUBLIC") throw invalidClient("This client must authenticate with HTTP Basic", true);
  return { client, credentialId: null, method: "none" };
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
  const presented = sha256Hex(secret);
  let match: (typeof rows)[number] | undefined;
  for (const row of rows) if (safeEqual(row.secretHash, presented)) match = row;
  if (!match) return null;
  // Last-used is informational; record it at most once a minute and never fail the request on it.
  if (!match.lastUsedAt || now.getTime() - match.lastUsedAt.getTime() > 60_000) {
    ctx.service.db
      .update(clientSecrets)
      .set({ lastUsedAt: now })
      .where(eq(clientSecrets.id, match.id))
      .catch(() => {});
  }
  return match.id;
}
