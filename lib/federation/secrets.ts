/** The master-key purposes of upstream client secrets (lib/crypto.ts encryptSecret / decryptSecret). */
export const connectionSecretPurpose = (connectionId: string) => `enterprise-connection:${connectionId}`;
export const socialSecretPurpose = (providerId: string) => `social-provider:${providerId}`;
/** The PKCE verifier of one upstream round trip, kept until its callback. */
export const roundTripVerifierPurpose = (roundTripId: string) => `federation-verifier:${roundTripId}`;
