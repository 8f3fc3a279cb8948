import type { EndpointContext } from "../../http/context";
import type { AuthenticatedClient } from "../clients";

/** One grant type: its name, the parameters it accepts, and its handler (node-oidc-provider's lib/actions/grants). */
export interface GrantHandler {
  grantType: string;
  /** Every body parameter this grant accepts, including grant_type and client_id. */
  parameters: ReadonlySet<string>;
  handle(params: Map<string, string>, client: AuthenticatedClient, ctx: EndpointContext): Promise<Record<string, unknown>>;
}
