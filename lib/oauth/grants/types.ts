import type { EndpointContext } from "../../http/context";
import type { AuthenticatedClient, ClientRow } from "../clients";

/**
 * The key a DPoP proof sent with the token request proved possession of (RFC 9449), by its JWK
 * thumbprint (RFC 7638): the tokens the grant issues are bound to it.
 */
export interface SenderKey {
  jkt: string;
}

/** One grant type: its name, the parameters it accepts, and its handler (node-oidc-provider's lib/actions/grants). */
export interface GrantHandler {
  grantType: string;
  /** Every body parameter this grant accepts, including grant_type and client_id. */
  parameters: ReadonlySet<string>;
  /**
   * Which clients may use it (node-oidc-provider's `grantTypeAllowed`): the client types, and the
   * `invalid_request` description any other client is refused with. The token endpoint checks it
   * once, before `handle`.
   */
  clients: { types: ReadonlySet<ClientRow["type"]>; refusal: string };
  /** `request`: the token request itself, for what the handler records about it (the client address of a reuse). */
  /** `sender`: the key of the request's DPoP proof, verified by the token endpoint; null without one. */
  handle(params: Map<string, string>, client: AuthenticatedClient, ctx: EndpointContext, request?: Request, sender?: SenderKey | null): Promise<Record<string, unknown>>;
}
