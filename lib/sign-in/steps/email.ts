/** Email one-time codes in the sign-in (and sign-up): the view and the endpoints. Stub until the email factor lands. */
import type { EndpointContext } from "../../http/context";
import type { Route } from "../../http/route";
import type { TransactionRow } from "../../oauth/pending-sign-in";
import type { AuthPolicy } from "../../authn/policy";
import type { FlowStep } from "../flow";

export interface EmailView {
  /** Whether email codes can be sent (SMTP configured, or the development outbox). */
  available: boolean;
  /** The address a live code for this sign-in was sent to: the page asks for the code. */
  codeSentTo: string | null;
}

export async function emailView(_ctx: EndpointContext, _tx: TransactionRow, _step: FlowStep, _policy: AuthPolicy): Promise<EmailView> {
  return { available: false, codeSentTo: null };
}

export const emailRoutes: Route[] = [];
