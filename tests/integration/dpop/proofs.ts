/**
 * DPoP proofs as a client makes them (RFC 9449 §4.2), signed with jose, for the DPoP tests: one
 * `Holder` per key, a proof per request, each claim replaceable to break one rule at a time.
 */
import { randomBytes } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { sha256Base64Url } from "../../../lib/crypto";
import { call, PUBLIC_URL, type Harness } from "../../helpers/harness";

export interface ProofOptions {
  htm?: string;
  /** Below the workspace's issuer (`/oauth2/token`), or a full URL. */
  htu?: string;
  /** Seconds from the harness clock's now. */
  iatOffset?: number;
  jti?: string;
  /** The access token `ath` names; a string replaces `ath` itself. */
  accessToken?: string;
  ath?: string;
  nonce?: string;
  typ?: string;
  /** Replaces the jwk header (a private key's members, say). */
  jwk?: JWK;
  /** Claims left out. */
  omit?: string[];
}

export class Holder {
  private constructor(
    readonly alg: string,
    private readonly privateKey: CryptoKey,
    readonly publicJwk: JWK,
    readonly jkt: string,
    readonly privateJwk: JWK,
  ) {}

  static async create(alg = "ES256"): Promise<Holder> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    return new Holder(alg, privateKey, publicJwk, await calculateJwkThumbprint(publicJwk, "sha256"), await exportJWK(privateKey));
  }

  /** A proof for workspace `ws`'s endpoint `path` (htm POST unless said), as of the harness clock. */
  async proof(h: Harness, ws: string, path: string, o: ProofOptions = {}): Promise<string> {
    const claims: Record<string, unknown> = {
      htm: o.htm ?? "POST",
      htu: o.htu?.startsWith("http") ? o.htu : `${PUBLIC_URL}/t/${ws}${o.htu ?? path}`,
      iat: Math.floor(h.clock.now().getTime() / 1000) + (o.iatOffset ?? 0),
      jti: o.jti ?? randomBytes(16).toString("base64url"),
    };
    if (o.accessToken !== undefined) claims.ath = sha256Base64Url(o.accessToken);
    if (o.ath !== undefined) claims.ath = o.ath;
    if (o.nonce !== undefined) claims.nonce = o.nonce;
    for (const name of o.omit ?? []) delete claims[name];
    return new SignJWT(claims).setProtectedHeader({ alg: this.alg, typ: o.typ ?? "dpop+jwt", jwk: o.jwk ?? this.publicJwk }).sign(this.privateKey);
  }
}

/** The server's current nonce, as a client learns it: from the DPoP-Nonce header of a refused first attempt. */
export async function learnNonce(h: Harness, ws: string, holder: Holder): Promise<string> {
  const res = await call(h, `/t/${ws}/oauth2/token`, {
    form: { grant_type: "refresh_token", refresh_token: "lkr_unknown", client_id: "spa" },
    headers: { dpop: await holder.proof(h, ws, "/oauth2/token") },
  });
  const body = await res.json();
  if (body.error !== "use_dpop_nonce") throw new Error(`expected use_dpop_nonce, got ${JSON.stringify(body)}`);
  return res.headers.get("dpop-nonce")!;
}
