/**
 * A DPoP proof (RFC 9449 §4.3), checked in full before anything it guards runs: exactly one
 * `DPoP` header holding a JWT with `typ` dpop+jwt, an accepted algorithm (./algorithms.ts), an
 * embedded public JWK that verifies its signature; `htm` the request's method, `htu` this
 * issuer's URL of the endpoint (compared without query or fragment, against `ctx.issuer`, never
 * the request's Host), `iat` within ±60 s of the injected clock, `ath` the access token's hash at
 * a resource endpoint, and a server nonce where one is required or given (./nonce.ts). Then its
 * `jti` is claimed in the replay cache every instance shares (`claimProof`).
 */
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK, type JWTPayload } from "jose";
import { sql } from "drizzle-orm";
import { param, reusable } from "../../../db/reusable";
import { dpopProofs } from "../../../db/schema";
import { SECOND } from "../../clock";
import { sha256Base64Url, sha256Hex } from "../../crypto";
import type { EndpointContext } from "../../http/context";
import { DPOP_ALGORITHMS } from "./algorithms";
import { currentNonce, nonceAccepted } from "./nonce";
import type { DpopRefusalCode, Refuse } from "./refusals";

/** How far a proof's `iat` may be from now, either way; its `jti` is kept as long as it could be accepted. */
export const DPOP_IAT_WINDOW_MS = 60 * SECOND;
/** A proof is a few hundred bytes (a 4096-bit RSA key about 1.5 KiB); anything longer is not one. */
const PROOF_LIMIT = 8 * 1024;
const JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const JTI_LIMIT = 256;

export interface VerifiedProof {
  /** The key's RFC 7638 thumbprint (SHA-256, base64url): what tokens are bound to. */
  jkt: string;
  jti: string;
  /** When the proof stops being acceptable (its `iat` plus the window). */
  expiresAt: Date;
}

export interface ProofExpectation {
  /**
   * Where the proof was made for: this issuer's endpoint (its path below the issuer, `/oauth2/token`,
   * `/oidc/userinfo`; `htm` is this request's method), or, for a proof an API server forwards with
   * the token it received (the permission check), the API's audience: `htu` must then lie at that
   * API (the audience itself or below it), and `htm` and `nonce` are the API's own business.
   */
  target: { path: string } | { forwardedFor: string };
  /** At a resource endpoint, the access token the proof must name (`ath`); null at the token endpoint. */
  accessToken: string | null;
  /** Whether the proof must carry a nonce this server issued (a given nonce is always checked). */
  nonceRequired: boolean;
}

/** Whether the request carries a DPoP proof at all. */
export const hasProof = (request: Request): boolean => request.headers.has("dpop");

/** The URL as `htu` is compared: scheme, host, port and path (RFC 9449 §4.3: no query, no fragment), normalized by the URL parser. */
function comparableUrl(value: string): string | null {
  try {
    const url = new URL(value);
    return `${url.origin}${url.pathname}`;
  } catch {
    return null;
  }
}

/**
 * The request's proof, verified (everything but its replay, `claimProof`'s), or a refusal thrown
 * through `refuse`. Requires the `DPoP` header (`hasProof`).
 */
export async function verifyProof(request: Request, ctx: EndpointContext, expected: ProofExpectation, refuse: Refuse): Promise<VerifiedProof> {
  const fail = (description: string, code: DpopRefusalCode = "invalid_dpop_proof") => refuse({ code, description, nonce: currentNonce(ctx) });
  const header = request.headers.get("dpop") ?? "";
  // Two DPoP headers arrive joined by a comma, which no JWS holds.
  if (header.length > PROOF_LIMIT || !JWS.test(header)) throw fail("The DPoP header must hold exactly one proof JWT");
  const now = ctx.service.clock.now();
  let payload: JWTPayload;
  let jwk: JWK;
  try {
    // EmbeddedJWK refuses a jwk header that imports as a private key; the algorithms exclude symmetric ones.
    const verified = await jwtVerify(header, EmbeddedJWK, { typ: "dpop+jwt", algorithms: [...DPOP_ALGORITHMS], currentDate: now });
    payload = verified.payload;
    jwk = verified.protectedHeader.jwk!;
  } catch {
    throw fail(`The DPoP proof must be a JWT of typ dpop+jwt signed with ${DPOP_ALGORITHMS.join(", ")} by the public key in its jwk header`);
  }
  const { jti, htm, htu, iat, ath, nonce } = payload as JWTPayload & Record<string, unknown>;
  if (typeof jti !== "string" || jti.length === 0 || jti.length > JTI_LIMIT) throw fail(`The DPoP proof needs a jti of 1 to ${JTI_LIMIT} characters`);
  const forwarded = "forwardedFor" in expected.target;
  if ("forwardedFor" in expected.target) {
    const audience = comparableUrl(expected.target.forwardedFor);
    const at = typeof htu === "string" ? comparableUrl(htu) : null;
    if (typeof htm !== "string" || htm === "") throw fail("The DPoP proof needs an htm");
    if (audience === null || at === null || !(at === audience || at.startsWith(audience.endsWith("/") ? audience : `${audience}/`))) {
      throw fail(`The forwarded DPoP proof's htu must be a URL of the API ${expected.target.forwardedFor}`);
    }
  } else {
    if (htm !== request.method) throw fail(`The DPoP proof's htm must be ${request.method}`);
    const target = `${ctx.issuer}${expected.target.path}`;
    if (typeof htu !== "string" || comparableUrl(htu) !== comparableUrl(target)) throw fail(`The DPoP proof's htu must be ${target}`);
  }
  if (typeof iat !== "number" || !Number.isFinite(iat)) throw fail("The DPoP proof needs an iat");
  const issuedAt = iat * 1000;
  if (Math.abs(now.getTime() - issuedAt) > DPOP_IAT_WINDOW_MS) throw fail(`The DPoP proof's iat must be within ${DPOP_IAT_WINDOW_MS / SECOND} seconds of the server's time`);
  if (expected.accessToken !== null && (typeof ath !== "string" || ath !== sha256Base64Url(expected.accessToken))) {
    throw fail("The DPoP proof's ath must be the SHA-256 hash of the access token");
  }
  if (!forwarded && (nonce !== undefined ? typeof nonce !== "string" || !nonceAccepted(ctx, nonce) : expected.nonceRequired)) {
    throw fail("The DPoP proof must carry the nonce of the DPoP-Nonce header", "use_dpop_nonce");
  }
  const jkt = await calculateJwkThumbprint(jwk, "sha256");
  return { jkt, jti, expiresAt: new Date(issuedAt + DPOP_IAT_WINDOW_MS) };
}

/**
 * Claims the proof's `jti` for its key, one statement: a proof already claimed, and still within
 * its window, is not claimed again (one winner however many requests race, on every instance).
 * A row left from an expired claim is taken over.
 */
const claimStatement = reusable("latchkey_dpop_claim_proof", (db) =>
  db
    .insert(dpopProofs)
    .values({ workspaceId: sql`${param("workspaceId")}::text`, proofHash: sql`${param("proofHash")}::text`, expiresAt: sql`${param("expiresAt")}::timestamptz` })
    .onConflictDoUpdate({
      target: [dpopProofs.workspaceId, dpopProofs.proofHash],
      set: { expiresAt: sql`excluded.expires_at` },
      setWhere: sql`${dpopProofs.expiresAt} <= ${param("now")}::timestamptz`,
    })
    .returning({ proofHash: dpopProofs.proofHash }),
);

/** Claims a verified proof; a replay is refused through `refuse`. A database failure propagates (503: fail closed). */
export async function claimProof(ctx: EndpointContext, proof: VerifiedProof, refuse: Refuse): Promise<void> {
  const claimed = await claimStatement(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    proofHash: sha256Hex(`${proof.jkt}.${proof.jti}`),
    expiresAt: proof.expiresAt.toISOString(),
    now: ctx.service.clock.now().toISOString(),
  });
  if (claimed.length === 0) throw refuse({ code: "invalid_dpop_proof", description: "This DPoP proof was already used: sign a new one for every request", nonce: currentNonce(ctx) });
}
