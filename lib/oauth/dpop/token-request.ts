/**
 * The token endpoint's DPoP step (RFC 9449 §5), run after client authentication and before the
 * grant: a request with a proof gets its verified key as the grant's `sender` (the grant binds
 * what it issues to it); a request without one is refused for an application that requires DPoP
 * (`dpop_bound_access_tokens`). A proof here must carry a server nonce (§8): the first attempt of
 * a client without one is answered `use_dpop_nonce` with the nonce, and client libraries retry.
 * Nothing the grant would consume (a code, a refresh token) is touched before the proof holds.
 */
import { applicationOptionOn } from "../../surfaces/application-options";
import type { EndpointContext } from "../../http/context";
import { OAuthError } from "../errors";
import type { ClientRow } from "../clients";
import type { SenderKey } from "./sender";
import { currentNonce, nonceHeader } from "./nonce";
import { DPOP_BOUND_ACCESS_TOKENS } from "./option";
import { claimProof, hasProof, verifyProof } from "./proof";
import { refuseAtTokenEndpoint } from "./refusals";

export const TOKEN_PATH = "/oauth2/token";

/**
 * The token request's sender key; null (not a promise: nothing to wait for) when the request has
 * no proof and needs none. Refusals are thrown (or rejected) as the token endpoint answers them.
 */
export function tokenRequestSender(request: Request, ctx: EndpointContext, client: Pick<ClientRow, "type" | "options">): Promise<SenderKey> | null {
  // M2M tokens are sealed, never stored, and never bound: a proof is ignored and the token is a
  // bearer token (RFC 9449 §5 lets a server say so with token_type Bearer). The client_credentials
  // hot path, and its memoized credential's every answer, stay as they are.
  if (client.type === "M2M") return null;
  if (!hasProof(request)) {
    if (!applicationOptionOn(client, DPOP_BOUND_ACCESS_TOKENS)) return null;
    throw new OAuthError(400, "invalid_request", "This application requires a DPoP proof (the DPoP header) on every token request", {
      headers: { "DPoP-Nonce": currentNonce(ctx) },
    });
  }
  return provenSender(request, ctx);
}

async function provenSender(request: Request, ctx: EndpointContext): Promise<SenderKey> {
  const proof = await verifyProof(request, ctx, { target: { path: TOKEN_PATH }, accessToken: null, nonceRequired: true }, refuseAtTokenEndpoint);
  await claimProof(ctx, proof, refuseAtTokenEndpoint);
  return { jkt: proof.jkt };
}

/** The headers every answer to the request carries: a fresh nonce when it came with a proof; none without. */
export function tokenResponseHeaders(request: Request, ctx: EndpointContext): Record<string, string> | undefined {
  return hasProof(request) ? nonceHeader(ctx) : undefined;
}

/** The `token_type` of what a grant issues for `sender` (RFC 9449 §5). */
export const tokenTypeFor = (sender: SenderKey | null | undefined): "DPoP" | "Bearer" => (sender ? "DPoP" : "Bearer");
