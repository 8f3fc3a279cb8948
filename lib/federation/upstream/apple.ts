/**
 * Sign in with Apple authenticates the client with a JWT it signs itself (ES256, with the private
 * key downloaded from Apple's developer console) instead of a shared secret. A fresh short-lived
 * one is made for each token request, so a leaked one is useless minutes later (Apple allows up
 * to six months).
 */
import { importPKCS8, SignJWT } from "jose";
import { FederationError, type UpstreamProvider } from "./contract";

export const APPLE_AUDIENCE = "https://appleid.apple.com";
/** Well under Apple's six-month ceiling: the JWT only has to survive one token request. */
const CLIENT_SECRET_LIFETIME_SECONDS = 5 * 60;

/** The client secret JWT for Apple's token endpoint: iss team id, sub client id, aud Apple, header kid. */
export async function appleClientSecret(provider: Pick<UpstreamProvider, "clientId" | "clientSecret" | "apple">, now: Date): Promise<string> {
  if (!provider.apple || !provider.clientSecret) throw new FederationError("misconfigured", "Sign in with Apple needs the team id, key id and private key");
  let key: CryptoKey;
  try {
    key = await importPKCS8(provider.clientSecret.trim(), "ES256");
  } catch (cause) {
    throw new FederationError("misconfigured", "The Apple private key is not a PKCS #8 P-256 key in PEM form", { cause });
  }
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid: provider.apple.keyId })
    .setIssuer(provider.apple.teamId)
    .setSubject(provider.clientId)
    .setAudience(APPLE_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + CLIENT_SECRET_LIFETIME_SECONDS)
    .sign(key);
}
