/**
 * The JWS algorithms a DPoP proof may be signed with (discovery's
 * `dpop_signing_alg_values_supported`): ES256 and EdDSA (Ed25519, under either name) as RFC 9449
 * clients use them, ES384, and RSA (RS256, PS256; jose refuses keys under 2048 bits).
 */
export const DPOP_ALGORITHMS = ["ES256", "ES384", "EdDSA", "Ed25519", "RS256", "PS256"] as const;
