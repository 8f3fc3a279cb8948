/**
 * `POST /oauth2/par` (RFC 9126 §2): an application pushes its authorization request on the back
 * channel, authenticated as at the token endpoint (public clients by client_id), and gets a
 * `request_uri` to send the browser with. The parameters are held to exactly the rules the
 * authorization endpoint applies (lib/oauth/authorize.ts `validateAuthorizationRequest`), answered
 * here as JSON instead of on a page or at the callback; the browser's request runs them again.
 */
import { pushedAuthorizationRequests } from "../../../db/schema";
import { addMs, SECOND } from "../../clock";
import { randomToken, sha256Hex } from "../../crypto";
import type { Endpoint } from "../../http/context";
import { json } from "../../http/errors";
import { validateAuthorizationRequest } from "../authorize";
import { authenticateClient, type AuthenticatedClient } from "../clients";
import { answerUnknownClientError, withCors } from "../cors";
import { errorToResponse, invalidRequest, OAuthError } from "../errors";
import { readOAuthForm } from "../form";

/** How long a pushed request waits for the browser (RFC 9126 §2.2 suggests 5 to 600 seconds; the issue bounds it at 60). */
export const PUSHED_REQUEST_TTL_MS = 60 * SECOND;
const REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:";

export const pushedAuthorizationEndpoint: Endpoint = async (request, ctx) => {
  let client: AuthenticatedClient;
  let params: Map<string, string>;
  try {
    params = await readOAuthForm(request);
    client = await authenticateClient(request, params, ctx);
  } catch (error) {
    return answerUnknownClientError(error, request, ctx);
  }
  try {
    const { clientId, type } = client.client;
    if (type === "M2M") throw new OAuthError(400, "unauthorized_client", "Machine-to-machine clients cannot use the authorization endpoint");
    // RFC 9126 §2.1: a pushed request cannot itself refer to another.
    if (params.has("request_uri")) throw invalidRequest("request_uri cannot be pushed");
    if (params.has("request")) throw invalidRequest("Request objects (request) are not supported");
    // The authenticated client is the request's client, whether or not the body named it.
    const pushed = new URLSearchParams([["client_id", clientId], ...[...params].filter(([name]) => name !== "client_id")]);
    const verdict = await validateAuthorizationRequest(pushed, ctx, { pushed: true });
    if (verdict.kind === "unverified") throw invalidRequest(verdict.refusal.description);
    if (verdict.kind === "redirect") throw new OAuthError(400, verdict.error, verdict.description);
    const now = ctx.service.clock.now();
    const requestUri = `${REQUEST_URI_PREFIX}${randomToken(32)}`;
    await ctx.service.db.insert(pushedAuthorizationRequests).values({
      workspaceId: ctx.workspace.id,
      uriHash: sha256Hex(requestUri),
      clientPk: client.client.id,
      clientId,
      parameters: [...pushed],
      createdAt: now,
      expiresAt: addMs(now, PUSHED_REQUEST_TTL_MS),
    });
    return withCors(json({ request_uri: requestUri, expires_in: PUSHED_REQUEST_TTL_MS / 1000 }, 201), client.corsOrigin);
  } catch (error) {
    return withCors(errorToResponse(error), client.corsOrigin);
  }
};
