/**
 * Authenticator apps and recovery codes in the sign-in: the view, the enrolment and the
 * acknowledgement of the recovery codes. Their codes as a further factor are answered by the
 * typed-code step (./typed-code.ts), at the paths their factors declare.
 *
 * Every endpoint first asks the flow where the sign-in stands and acts only at its own step: an
 * enrolment only at `enroll_second_factor` (so a first factor alone can never add a second factor
 * to an account that has one), the acknowledgement only at `recovery_codes`.
 */
import QRCode from "qrcode";
import { decryptSecret } from "../../crypto";
import type { EndpointContext } from "../../http/context";
import type { Route } from "../../http/route";
import type { TransactionRow } from "../../oauth/pending-sign-in";
import { confirmTotpEnrolment, pendingTotpEnrolment, startTotpEnrolment, TOTP_EVIDENCE } from "../../authn/factors/totp";
import { advance, currentStep, signInStep, toSignInPage, updateOpen, type FlowStep } from "../flow";
import { completeSecondFactorEnrolment, enrolmentSource, recoveryCodesPurpose } from "../enrolment";
import { accountEmail } from "../../authn/factors/typed-code";
import { RECOVERY_CODES_FACTOR } from "../../authn/factors/recovery-codes";

export interface TotpView {
  /** During enrolment: the otpauth:// URI as a QR code (an SVG data URL) and the base32 secret. */
  enrollment: { qrSvg: string; secret: string } | null;
  /** At the recovery-codes step: the codes, shown once. */
  recoveryCodes: string[] | null;
}

/** The recovery codes the transaction holds, in clear (they are shown until the user confirms saving them). */
export function transactionRecoveryCodes(ctx: EndpointContext, tx: TransactionRow): string[] | null {
  if (!tx.recoveryCodesEncrypted) return null;
  return JSON.parse(decryptSecret(ctx.service.config.masterKey, tx.recoveryCodesEncrypted, recoveryCodesPurpose(tx.id))) as string[];
}

export async function totpView(ctx: EndpointContext, tx: TransactionRow, step: FlowStep): Promise<TotpView> {
  if (step.kind === RECOVERY_CODES_FACTOR.shownOnce) return { enrollment: null, recoveryCodes: transactionRecoveryCodes(ctx, tx) };
  if (step.kind !== "enroll_second_factor" || !step.options.includes(TOTP_EVIDENCE.method) || !tx.userId) return { enrollment: null, recoveryCodes: null };
  const pending = await pendingTotpEnrolment(ctx, tx.userId, tx.createdAt, { issuer: ctx.workspace.name, account: (await accountEmail(ctx, tx.userId))?.email ?? "account" });
  if (!pending) return { enrollment: null, recoveryCodes: null };
  const svg = await QRCode.toString(pending.uri, { type: "svg", errorCorrectionLevel: "M", margin: 1 });
  return { enrollment: { qrSvg: `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`, secret: pending.secret }, recoveryCodes: null };
}

const stepOf = async (request: Request, ctx: EndpointContext, tx: TransactionRow) => (await currentStep(ctx, tx, request.headers.get("cookie"))).step;

const atTotpEnrolment = (step: FlowStep) => step.kind === "enroll_second_factor" && step.options.includes(TOTP_EVIDENCE.method);

/** POST /sign-in/totp/enroll/start: a new seed for the user to scan (replaces an unfinished one). */
const totpEnrolStartEndpoint = signInStep(async (request, ctx, { tx }) => {
  if (!atTotpEnrolment(await stepOf(request, ctx, tx)) || !tx.userId) return toSignInPage(ctx, tx.id);
  await startTotpEnrolment(ctx, tx.userId);
  return toSignInPage(ctx, tx.id);
});

/** POST /sign-in/totp/enroll: the first code from the app completes the enrolment and counts as the second factor. */
const totpEnrolConfirmEndpoint = signInStep(async (request, ctx, { tx, form }) => {
  if (!atTotpEnrolment(await stepOf(request, ctx, tx)) || !tx.userId) return toSignInPage(ctx, tx.id);
  const pending = await pendingTotpEnrolment(ctx, tx.userId, tx.createdAt);
  if (!pending) return toSignInPage(ctx, tx.id, "enrollment_failed");
  const result = await confirmTotpEnrolment(ctx, tx.userId, pending.factorId, form.get("code") ?? "", enrolmentSource(request, ctx, tx));
  if (!result.ok) return toSignInPage(ctx, tx.id, result.reason === "invalid" ? "invalid_code" : "enrollment_failed");
  return completeSecondFactorEnrolment(request, ctx, tx, result.evidence);
});

/** POST /sign-in/recovery-codes/saved: the user saved the codes; they are dropped from the transaction and the sign-in goes on. */
const recoveryCodesSavedEndpoint = signInStep(async (request, ctx, { tx }) => {
  if (!tx.recoveryCodesEncrypted) return toSignInPage(ctx, tx.id);
  const updated = await updateOpen(ctx, tx, { recoveryCodesEncrypted: null });
  if (!updated) return toSignInPage(ctx, tx.id);
  return advance(request, ctx, updated);
});

export const totpRoutes: Route[] = [
  { method: "POST", path: "/sign-in/totp/enroll/start", endpoint: totpEnrolStartEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/totp/enroll", endpoint: totpEnrolConfirmEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/recovery-codes/saved", endpoint: recoveryCodesSavedEndpoint, machine: false, errors: "hosted" },
];
