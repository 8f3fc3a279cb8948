// DPoP (RFC 9449) for the benchmark's "userinfo-dpop" scenario: a key, a bound access token got the
// way a client gets one (a refresh with a proof, retried once with the server's nonce), and proofs
// signed ahead of the measured run so the load generator spends nothing on them.
import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { basic, FORM } from "./seed.mjs";

const b64url = (value) => Buffer.from(value).toString("base64url");

export class DpopKey {
  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.privateKey = privateKey;
    const { kty, crv, x, y } = publicKey.export({ format: "jwk" });
    this.header = b64url(JSON.stringify({ typ: "dpop+jwt", alg: "ES256", jwk: { kty, crv, x, y } }));
  }

  /** A proof for `htm` `htu`, naming `accessToken` (ath) and `nonce` when given. */
  proof(htm, htu, { accessToken, nonce } = {}) {
    const claims = { htm, htu, iat: Math.floor(Date.now() / 1000), jti: randomBytes(12).toString("base64url") };
    if (accessToken) claims.ath = createHash("sha256").update(accessToken).digest("base64url");
    if (nonce) claims.nonce = nonce;
    const input = `${this.header}.${b64url(JSON.stringify(claims))}`;
    return `${input}.${sign("sha256", Buffer.from(input), { key: this.privateKey, dsaEncoding: "ieee-p1363" }).toString("base64url")}`;
  }
}

/**
 * A DPoP-bound access token for the bench's human (a confidential client: its family stays unbound,
 * so the other scenarios' bearer refreshes go on). The human's refresh token is rotated here: it
 * takes the new one.
 */
export async function boundAccessToken(human, key) {
  const url = `${human.issuer()}/oauth2/token`;
  const { client } = human.env;
  const send = (nonce) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": FORM, authorization: basic(client.id, client.secret), dpop: key.proof("POST", url, { nonce }) },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: human.refreshToken }).toString(),
    });
  let res = await send();
  let json = await res.json();
  if (res.status === 400 && json.error === "use_dpop_nonce") {
    res = await send(res.headers.get("dpop-nonce"));
    json = await res.json();
  }
  if (res.status !== 200 || json.token_type !== "DPoP") throw new Error(`DPoP refresh: ${res.status} ${JSON.stringify(json)}`);
  human.refreshToken = json.refresh_token;
  human.accessToken = json.access_token;
  human.issuedAt = Date.now();
  return json.access_token;
}
