/**
 * How a DPoP refusal is answered (RFC 9449 §5, §7.1, §8, §9). The rules (./proof.ts) say what is
 * wrong; each boundary words it: the token endpoint with a 400 OAuth error, a resource endpoint
 * with a 401 and a `DPoP` challenge. Every refusal offers a fresh `DPoP-Nonce`, so a client that
 * retries (openid-client, oauth4webapi) signs its next proof with it.
 */
import { OAuthError } from "../errors";
import { DPOP_ALGORITHMS } from "./algorithms";

export type DpopRefusalCode = "invalid_dpop_proof" | "use_dpop_nonce" | "invalid_token";

export interface DpopRefusal {
  code: DpopRefusalCode;
  /** Plain text without quotes or backslashes: it goes into a challenge's quoted string. */
  description: string;
  /** A nonce the client may use in its next proof. */
  nonce: string;
}

/** Makes the error a boundary throws for a refusal. */
export type Refuse = (refusal: DpopRefusal) => Error;

/** The token endpoint's answer: 400 with the OAuth error body (RFC 9449 §5, §8). */
export const refuseAtTokenEndpoint: Refuse = ({ code, description, nonce }) => new OAuthError(400, code, description, { headers: { "DPoP-Nonce": nonce } });

const ALGS = DPOP_ALGORITHMS.join(" ");

/** A resource endpoint's headers for a refusal: the `DPoP` challenge (RFC 9449 §7.1) and a fresh nonce. */
export function resourceChallenge({ code, description, nonce }: DpopRefusal): Record<string, string> {
  return { "WWW-Authenticate": `DPoP error="${code}", error_description="${description}", algs="${ALGS}"`, "DPoP-Nonce": nonce };
}

/** UserInfo's and the session check's answer: 401 with the challenge (and the OAuth error body they answer with). */
export const refuseAtResource: Refuse = (refusal) => new OAuthError(401, refusal.code, refusal.description, { headers: resourceChallenge(refusal) });
