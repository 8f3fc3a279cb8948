/**
 * A SAML connection's addresses as a service provider: the one rule for them, read by the ACS, the
 * SP metadata, the AuthnRequest and the console (which shows them before the connection is saved,
 * in the browser too: this module imports nothing).
 */
export const SAML_ACS_PATH = "/federation/saml/acs";
export const SAML_METADATA_PATH = "/federation/saml/metadata";

/**
 * This connection's addresses as a service provider, under the issuer the request came to. The
 * entity ID is the metadata's own address (it answers with the SP metadata).
 */
export function samlEndpoints(issuer: string, connectionId: string): { entityId: string; acs: string; metadata: string } {
  const query = `?connection=${encodeURIComponent(connectionId)}`;
  return { entityId: `${issuer}${SAML_METADATA_PATH}${query}`, acs: `${issuer}${SAML_ACS_PATH}${query}`, metadata: `${issuer}${SAML_METADATA_PATH}${query}` };
}
