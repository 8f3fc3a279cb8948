import type { EndpointContext } from "../../http/context";
import type { AuthenticatedClient, ClientRow } from "../clients";
import type { SenderKey } from "../dpop/sender";

/** The verified DPoP key of a token request (lib/oauth/dpop), passed to `handle`. */
export type { SenderKey };

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
