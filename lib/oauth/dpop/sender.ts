/**
 * The key a DPoP proof sent with the token request proved possession of (RFC 9449), by its JWK
 * thumbprint (RFC 7638): the tokens the grant issues are bound to it.
 */
export interface SenderKey {
  jkt: string;
}
