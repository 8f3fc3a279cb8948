import { and, eq } from "drizzle-orm";
import { authorizationCodes, hostedSessions } from "../../db/schema";
import { nowValue, selectHostedSessionChain } from "../authority";
import { addMs, SECOND } from "../clock";
import { randomToken, sha256Hex } from "../crypto";
import type { EndpointContext } from "../http/context";
import { redirect303 } from "../http/response";
import type { HostedSession } from "../authn/hosted-session";

/** The authorization response: the browser's way back to the client's verified redirect URI (RFC 6749 §4.1.2, RFC 9207 `iss`). */

export const CODE_TTL_MS = 60 * SECOND;

/** The validated request a code is issued for. */
export interface CodeRequest {
  clientPk: string;
  redirectUri: string;
  scope: string[];
  state: string;
  nonce: string;
  codeChallenge: string;
  apiId: string | null;
}

export function errorRedirect(redirectUri: string, issuer: string, error: string, description: string, state: string | null): Response {
  const url = new URL(redirectUri);
  url.searchParams.set("error", error);
  url.searchParams.set("error_description", description);
  if (state) url.searchParams.set("state", state);
  url.searchParams.set("iss", issuer);
  return redirect303(url.toString());
}

/** Issues a 60-second code for an authenticated session and sends the browser to the callback. */
export async function issueCodeRedirect(
  ctx: EndpointContext,
  authz: CodeRequest,
  session: HostedSession,
  extraHeaders: [string, string][] = [],
): Promise<Response> {
  const now = ctx.service.clock.now();
  // The session may have lost its authority (user disabled, organization left) since it was read.
  const [current] = await selectHostedSessionChain(ctx.service.db, nowValue(now), {})
    .where(and(eq(hostedSessions.workspaceId, ctx.workspace.id), eq(hostedSessions.id, session.id)))
    .limit(1);
  if (!current || current.refusal !== null) {
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
