/**
 * The end of a second-factor enrolment in the sign-in (an authenticator app, a security key, a
 * passkey): the proof the new factor just gave counts as that factor, and a user without recovery
 * codes gets them now, shown once at the next step (flow.ts `currentStep`: `recovery_codes` while
 * the transaction holds them).
 */
import type { EndpointContext } from "../http/context";
import type { TransactionRow } from "../oauth/pending-sign-in";
import { encryptSecret } from "../crypto";
import { clientAddressOf } from "../http/client-address";
import type { EnrolmentSource } from "../authn/factors/contract";
import type { Evidence } from "../authn/evidence";
import { generateRecoveryCodes, recoveryCodesLeft } from "../authn/factors/recovery-codes";
import { prove, toSignInPage } from "./flow";

/** The purpose the transaction's recovery codes are encrypted under, bound to the transaction. */
export const recoveryCodesPurpose = (txId: string) => `sign-in-recovery-codes:${txId}`;

/** An enrolment in this sign-in, as the factor's audit event records it (the same event as the portal's). */
export function enrolmentSource(request: Request, ctx: EndpointContext, tx: TransactionRow): EnrolmentSource {
  return { ip: clientAddressOf(request.headers, ctx.service.config.trustProxy), context: { sign_in: tx.id } };
}

export async function completeSecondFactorEnrolment(request: Request, ctx: EndpointContext, tx: TransactionRow, event: Evidence): Promise<Response> {
  if (!tx.userId) return toSignInPage(ctx, tx.id);
  if ((await recoveryCodesLeft(ctx, tx.userId)) > 0) return prove(request, ctx, tx, event);
  const codes = await generateRecoveryCodes(ctx, tx.userId, enrolmentSource(request, ctx, tx));
  return prove(request, ctx, tx, event, { recoveryCodesEncrypted: encryptSecret(ctx.service.config.masterKey, JSON.stringify(codes), recoveryCodesPurpose(tx.id)) });
}
