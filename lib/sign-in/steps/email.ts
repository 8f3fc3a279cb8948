/**
 * Email one-time codes in the sign-in: "Email me a code", the code step, and the way back to the
 * other methods. The sign-up's steps (lib/sign-in/sign-up.ts) use the same codes and are served
 * from here too.
 *
 * What a page shows never depends on whether the address has an account: an unknown address gets
 * the same code step, the same limits and the same timing (a code is stored whose hash no code
 * matches, and no message is sent: docs/sign-in.md).
 */
import type { EndpointContext } from "../../http/context";
import type { Route } from "../../http/route";
import { redirect303 } from "../../http/response";
import type { TransactionRow } from "../../oauth/pending-sign-in";
import type { AuthPolicy } from "../../authn/policy";
import {
  activeUserByAddress,
  cancelEmailCodes,
  EMAIL_CODE_TTL_MS,
  issueEmailCode,
  pendingEmailCode,
  unreadCodeFailure,
  verifyEmailCodeFactor,
} from "../../authn/factors/email-code";
import { emailAvailable, sendMail } from "../../authn/email/transport";
import { signInCodeMessage } from "../../authn/email/templates";
import { policyFor } from "../../authn/policy";
import { currentStep, identify, signInStep, toSignInPage, updateOpen, type FlowStep } from "../flow";
import { signUpRoutes, signUpView, type SignUpView } from "../sign-up";
import { homeRealmRedirect } from "./federation";
import { rememberAddress } from "../hosted-sign-in";
import { isStorableText } from "../../text";
import { codeSendGate } from "../code-send";
import { normalizeEmail } from "../../authn/email-address";
import { EMAIL_CODE_EVIDENCE } from "../../authn/factors/email-code/evidence";

export interface EmailView {
  /** Whether email codes can be sent (SMTP configured, or the development outbox). */
  available: boolean;
  /** The address a code for this sign-in was sent to: the page asks for the code. */
  codeSentTo: string | null;
  /** That code can no longer be used (expired or out of attempts): the page offers a new one. */
  codeDead: boolean;
  /** How long a code lives, in minutes (the page says so). */
  codeMinutes: number;
  signUp: SignUpView;
}

export async function emailView(ctx: EndpointContext, tx: TransactionRow, step: FlowStep, policy: AuthPolicy): Promise<EmailView> {
  const available = emailAvailable(ctx.service.config);
  const atFirstStep = step.kind === "first_factor";
  const [pending, signUp] = await Promise.all([
    atFirstStep && available ? pendingEmailCode(ctx, { purpose: "sign_in", bindingId: tx.id }) : null,
    signUpView(ctx, tx, step, policy),
  ]);
  return { available, codeSentTo: pending?.address ?? null, codeDead: pending?.dead ?? false, codeMinutes: EMAIL_CODE_TTL_MS / 60_000, signUp };
}

/**
 * Whether the sign-in stands at the first step and it offers email codes: the only step that
 * sends or checks one. At any later step (a second factor offers an authenticator app, a key or a
 * recovery code, never an email code) a code posted here is refused like a wrong one, unread.
 */
export async function offersEmailCode(request: Request, ctx: EndpointContext, tx: TransactionRow): Promise<boolean> {
  const { step } = await currentStep(ctx, tx, request.headers.get("cookie"));
  return step.kind === "first_factor" && step.allowed.includes(EMAIL_CODE_EVIDENCE.method);
}

/** POST /sign-in/email: sends a sign-in code to the address (or, for an address without an account, sends nothing and shows the same step). */
export const emailCodeSendEndpoint = signInStep(async (request, ctx, { tx, form }) => {
  if (!(await policyFor(ctx, tx.clientPk)).firstFactors.includes(EMAIL_CODE_EVIDENCE.method)) return toSignInPage(ctx, tx.id, "method_not_allowed");
  if (!(await offersEmailCode(request, ctx, tx))) return toSignInPage(ctx, tx.id);
  if (!emailAvailable(ctx.service.config)) return toSignInPage(ctx, tx.id, "email_unavailable");
  // What was typed is shown again when the form comes back with an error (kept on the pending sign-in, not in the URL).
  const typed = (form.get("email") ?? "").trim();
  const address = normalizeEmail(form.get("email"));
  if (!address) {
    if (typed && typed.length <= 320 && isStorableText(typed)) await rememberAddress(ctx, tx, typed);
    return toSignInPage(ctx, tx.id, "invalid_email");
  }
  // An address in a domain an organization verified signs in through its connection.
  const elsewhere = await homeRealmRedirect(ctx, tx, address);
  if (elsewhere) return elsewhere;

  const gate = await codeSendGate(request, ctx, tx, form, address);
  if (!gate.allowed) {
    await rememberAddress(ctx, tx, typed);
    return toSignInPage(ctx, tx.id, gate.error);
  }
  const user = await activeUserByAddress(ctx, address);
  const code = await issueEmailCode(ctx, { purpose: "sign_in", bindingId: tx.id }, { address, userId: user?.id ?? null, deliverable: user !== null });
  await gate.sent();
  if (tx.signUpAddress) await updateOpen(ctx, tx, { signUpAddress: null });
  if (code) sendMail(ctx, signInCodeMessage({ to: address, workspaceName: ctx.workspace.name, code, minutes: EMAIL_CODE_TTL_MS / 60_000 }));
  return toSignInPage(ctx, tx.id);
});

/** POST /sign-in/email/verify: the code as a first factor. */
export const emailCodeVerifyEndpoint = signInStep(async (request, ctx, { tx, form }) => {
  if (!(await policyFor(ctx, tx.clientPk)).firstFactors.includes(EMAIL_CODE_EVIDENCE.method)) return toSignInPage(ctx, tx.id, "method_not_allowed");
  const binding = { purpose: "sign_in" as const, bindingId: tx.id };
  const result = (await offersEmailCode(request, ctx, tx))
    ? await verifyEmailCodeFactor(ctx, request, binding, form.get("code"))
    : { ok: false as const, reason: await unreadCodeFailure(ctx, binding) };
  // An account disabled since the code was sent, or none, answers as an expired code (the factor's verification).
  if (!result.ok) return toSignInPage(ctx, tx.id, result.reason === "expired" ? "code_expired" : "invalid_code");
  return identify(request, ctx, tx, result.userId, result.evidence);
});

/**
 * POST /sign-in/email/cancel: "use another way" (or "a different email"): the pending code (sign-in
 * or sign-up) and a proved sign-up address are dropped; back to the methods, or (`then=sign_up`)
 * to the sign-up's first form.
 */
export const emailCodeCancelEndpoint = signInStep(async (_request, ctx, { tx, form }) => {
  await cancelEmailCodes(ctx, tx.id);
  if (tx.signUpAddress) await updateOpen(ctx, tx, { signUpAddress: null });
  if (form.get("then") === "sign_up") return redirect303(`${ctx.basePath}/sign-in?tx=${encodeURIComponent(tx.id)}&sign_up=1`);
  return toSignInPage(ctx, tx.id);
});

export const emailRoutes: Route[] = [
  { method: "POST", path: "/sign-in/email", endpoint: emailCodeSendEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/email/verify", endpoint: emailCodeVerifyEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/email/cancel", endpoint: emailCodeCancelEndpoint, machine: false, errors: "hosted" },
  ...signUpRoutes,
];
