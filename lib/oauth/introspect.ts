import { and, eq, sql } from "drizzle-orm";
import { reusable } from "../../db/reusable";
import { apis, grants, refreshTokens } from "../../db/schema";
import { nowPlaceholder, selectRefreshTokenChain } from "../authority";
import { epochSeconds } from "../clock";
import { sha256Hex } from "../crypto";
import type { Endpoint, EndpointContext } from "../http/context";
import { json } from "../http/errors";
import { invalidClient } from "./errors";
import { readOAuthForm } from "./form";
import { loadTokenAuthority, loadTokenAuthorityForCaller, type TokenAuthority } from "./authority";
import { authenticateClient, bodySecretRefused, recallClient, type AuthenticatedClient } from "./clients";
import { subjectFor } from "./issue";
import { readTokenParameters, TOKEN_ENDPOINT_PARAMETERS } from "./revoke";

/** RFC 7662 active response: exactly these fields (plus principal_type for workload tokens). */
export interface ActiveIntrospection {
  active: true;
  client_id: string;
  sub: string;
  iss: string;
  aud: string;
  scope: string;
  exp: number;
  /**
   * `Bearer` for access tokens, `DPoP` for those bound to a DPoP key (lib/oauth/dpop); `refresh_token`
   * for refresh tokens, which are never bearer access tokens.
   */
  token_type: "Bearer" | "DPoP" | "refresh_token";
  principal_type?: "workload";
  /** A DPoP-bound token's key (RFC 9449 §6.2): its RFC 7638 thumbprint. */
  cnf?: { jkt: string };
}

const INACTIVE = { active: false } as const;

function accessTokenResponse(ctx: EndpointContext, authority: TokenAuthority): ActiveIntrospection {
  const body: ActiveIntrospection = {
    active: true,
    client_id: authority.clientId,
    sub: authority.subject,
    iss: ctx.issuer,
    aud: authority.audience ?? authority.clientId,
    scope: authority.scope.join(" "),
    exp: epochSeconds(authority.expiresAt),
    token_type: authority.jkt === null ? "Bearer" : "DPoP",
  };
  if (authority.kind === "workload") body.principal_type = "workload";
  if (authority.jkt !== null) body.cnf = { jkt: authority.jkt };
  return body;
}

/** The refresh token with its family's chain, built and prepared once. */
const refreshLookupStatement = reusable("latchkey_refresh_token_authority", (db) =>
  selectRefreshTokenChain(db, nowPlaceholder(), {
    state: refreshTokens.state,
    clientPk: grants.clientPk,
    userId: grants.userId,
    scope: grants.scope,
    audience: apis.audience,
    hostname: grants.hostname,
  })
    .where(and(eq(refreshTokens.workspaceId, sql.placeholder("workspaceId")), eq(refreshTokens.tokenHash, sql.placeholder("tokenHash"))))
    .limit(1),
);

/**
 * A refresh token of this client, active while it is the family's current token and the family's
 * chain (lib/authority: the family, its hosted session, the user, the client, the secret the family
 * was last used with, the API, the session's organization and connection) holds: exactly what
 * refresh rotation requires. One query.
 */
async function introspectRefreshToken(ctx: EndpointContext, client: AuthenticatedClient, hash: string): Promise<ActiveIntrospection | null | undefined> {
  const [row] = await refreshLookupStatement(ctx.service.db, { workspaceId: ctx.workspace.id, tokenHash: hash, now: ctx.service.clock.now().toISOString() });
  // Made under another issuer (another hostname of the workspace, lib/hostnames): unknown here.
  if (!row || (row.hostname ?? null) !== ctx.hostname) return undefined;
  const active = row.clientPk === client.client.id && row.state === "current" && row.refusal === null;
  if (!active) return null;
  // The token dies at the first of the family's idle and absolute bounds and the session's absolute one
  // (all present: the chain is live).
  const exp = Math.min(row.grantIdleExpiresAt!.getTime(), row.grantAbsoluteExpiresAt!.getTime(), row.sessionAbsoluteExpiresAt!.getTime());
  return {
    active: true,
    client_id: client.client.clientId,
    sub: subjectFor(ctx, client.client.clientId, row.userId),
    iss: ctx.issuer,
    aud: row.audience ?? client.client.clientId,
    scope: row.scope.join(" "),
    exp: epochSeconds(new Date(exp)),
    token_type: "refresh_token",
  };
}

/**
 * POST /oauth2/introspect (RFC 7662), own-token introspection for confidential clients.
 * HTTP Basic is required: a public client (body client_id, no secret) is refused with 401.
 * Only the authenticated client's own, currently authorized tokens are active; everything
 * else, including unknown tokens and other clients' tokens, is `{"active": false}`. No user
 * roles or profile data are returned. A database failure is a 503, never an answer.
 */
export const introspectEndpoint: Endpoint = async (request, ctx) => {
  const params = await readOAuthForm(request, TOKEN_ENDPOINT_PARAMETERS);
  if (!request.headers.has("authorization")) {
    // As on the token endpoint, a body secret is a malformed request rather than a failed login.
    if (params.has("client_secret")) throw bodySecretRefused();
    // Public clients stop here, before any lookup.
    throw invalidClient("Introspection requires confidential client authentication with HTTP Basic", true);
  }
  let early: ReturnType<typeof readTokenParameters> | null;
  try {
    early = readTokenParameters(params);
  } catch {
    early = null; // reported below, after authentication
  }
  if (early?.order[0] === "access_token") {
    // Hot path with a memoized credential: one statement reads the token and re-checks the caller.
    const recalled = recallClient(request, params, ctx);
    if (recalled) {
      const { client, credentialId } = recalled;
      const found = await loadTokenAuthorityForCaller(ctx, early.token, {
        clientPk: client.id,
        clientId: client.clientId,
        clientType: client.type,
        credentialId,
      });
      if (found.callerLive) return answer(ctx, params, recalled.unconfirmed.confirm(), found.authority);
      // No longer live: authenticate afresh, answering exactly as without the memo.
      const [confirmed, first] = await Promise.all([recalled.unconfirmed.authenticate(), loadTokenAuthority(ctx, early.token)]);
      return answer(ctx, params, confirmed, first);
    }
  }
  // Client authentication and the one-query access-token lookup are independent reads, so they
  // run together; the token result is used only once the client is authenticated.
  const lookup = early?.order[0] === "access_token" ? loadTokenAuthority(ctx, early.token) : Promise.resolve(undefined);
  const [client, first] = await Promise.all([authenticateClient(request, params, ctx), lookup]);
  return answer(ctx, params, client, first);
};

/** The answer once the client is authenticated; `first` is the access-token lookup when it ran first. */
async function answer(ctx: EndpointContext, params: Map<string, string>, client: AuthenticatedClient, first: TokenAuthority | null | undefined): Promise<Response> {
  const { token, order } = readTokenParameters(params);
  const hash = sha256Hex(token);

  let authority: TokenAuthority | null | undefined = first;
  if (order[0] === "refresh_token") {
    const refresh = await introspectRefreshToken(ctx, client, hash);
    if (refresh !== undefined) return json(refresh ?? INACTIVE);
    authority = await loadTokenAuthority(ctx, token);
  }
  if (authority) {
    const own = authority.clientPk === client.client.id;
    return json(own && authority.active ? accessTokenResponse(ctx, authority) : INACTIVE);
  }
  if (order[0] === "access_token") {
    const refresh = await introspectRefreshToken(ctx, client, hash);
    if (refresh) return json(refresh);
  }
  return json(INACTIVE);
}
