/** Authenticator apps and recovery codes in the sign-in: the view and the endpoints. Stub until the TOTP factor lands. */
import type { EndpointContext } from "../../http/context";
import type { Route } from "../../http/route";
import type { TransactionRow } from "../../oauth/pending-sign-in";
import type { FlowStep } from "../flow";

export interface TotpView {
  /** During enrolment: the otpauth:// URI as a QR code (an SVG data URL) and the base32 secret. */
  enrollment: { qrSvg: string; secret: string } | null;
  /** At the recovery-codes step: the codes, shown once. */
  recoveryCodes: string[] | null;
}

export async function totpView(_ctx: EndpointContext, _tx: TransactionRow, _step: FlowStep): Promise<TotpView> {
  return { enrollment: null, recoveryCodes: null };
}

export const totpRoutes: Route[] = [];
