/**
 * A DPoP-bound access token at a resource endpoint (RFC 9449 §7): UserInfo, the session check and
 * the permission check read `Authorization: DPoP <token>` with a `DPoP` proof for that endpoint,
 * method and token (`ath`), whose key is the one the token is bound to. A bound token presented
 * as `Bearer` is refused by the caller (the token's `jkt` is read with it, in its one statement),
 * and a bearer token presented as `DPoP` is refused here. A bearer request does no more work than
 * before: only a DPoP request verifies a proof and claims its `jti` (one statement, run beside the
 * token's lookup).
 */
import type { EndpointContext } from "../../http/context";
import { currentNonce, nonceHeader } from "./nonce";
import { claimProof, verifyProof, type ProofExpectation } from "./proof";
import type { Refuse } from "./refusals";

export interface PresentedToken {
  token: string;
  /** Presented with the DPoP scheme (a proof must come with it). */
  dpop: boolean;
}

const AUTHORIZATION = /^(Bearer|DPoP) ([A-Za-z0-9._~+/-]+=*)$/;

/** The access token of `Authorization: Bearer <token>` or `Authorization: DPoP <token>` (token68), or null. */
export function presentedToken(request: Request): PresentedToken | null {
  const header = request.headers.get("authorization");
  const match = header && AUTHORIZATION.exec(header);
  return match ? { token: match[2], dpop: match[1] === "DPoP" } : null;
}

/**
 * The lookup's token, proven by the request's proof: the proof verified for `path`, then the
 * lookup and the proof's claim side by side. Refused through `refuse` when the proof fails, is
 * replayed, the token is unknown (null) or is not bound to the proof's key.
 */
export async function provenToken<T>(
  request: Request,
  ctx: EndpointContext,
  at: { target: ProofExpectation["target"]; token: string },
  refuse: Refuse,
  lookup: () => Promise<T | null>,
  keyOf: (found: T) => string | null,
): Promise<T> {
  const proof = await verifyProof(request, ctx, { target: at.target, accessToken: at.token, nonceRequired: false }, refuse);
  const [found] = await Promise.all([lookup(), claimProof(ctx, proof, refuse)]);
  if (found === null) throw refuse({ code: "invalid_token", description: "The access token is invalid or expired", nonce: currentNonce(ctx) });
  if (keyOf(found) !== proof.jkt) throw refuse({ code: "invalid_token", description: "The access token is not bound to the key of the DPoP proof", nonce: currentNonce(ctx) });
  return found;
}

/** The message to a client that presents a DPoP-bound token as a bearer token. */
export const BOUND_AS_BEARER = "This access token is bound to a DPoP key: present it as Authorization: DPoP with a proof";

const NONE: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** The headers a resource endpoint's answer carries: a fresh nonce for a DPoP request. */
export const resourceResponseHeaders = (ctx: EndpointContext, presented: PresentedToken): Record<string, string> => (presented.dpop ? nonceHeader(ctx) : NONE);
