/** Passkeys and security keys in the sign-in: the view (WebAuthn options) and the endpoints. Stub until the WebAuthn factor lands. */
import type { EndpointContext } from "../../http/context";
import type { Route } from "../../http/route";
import type { TransactionRow } from "../../oauth/pending-sign-in";
import type { FlowStep } from "../flow";

export interface WebAuthnView {
  /** JSON of the options for navigator.credentials.get / create at this step, or null when the step uses none. */
  options: string | null;
}

export async function webauthnView(_ctx: EndpointContext, _tx: TransactionRow, _step: FlowStep): Promise<WebAuthnView> {
  return { options: null };
}

export const webauthnRoutes: Route[] = [];
