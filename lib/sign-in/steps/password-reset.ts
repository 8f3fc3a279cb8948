/**
 * Self-service password reset (the workspace's password policy, `reset: "email"`,
 * lib/authn/passwords/policy.ts), from the sign-in's first step: "Forgot your password?".
 *
 *   1. POST /sign-in/reset/email       the address: a code to it. The page answers the same for
 *                                      every address, with the same statements: what differs is
 *                                      the message (an account with a password gets a code; one
 *                                      without, how it signs in instead; anything else, nothing).
 *   2. POST /sign-in/reset/verify      the code: the account is identified with the email code's
 *                                      evidence, and the sign-in asks for the new password.
 *   3. POST /sign-in/new-password      the new password (also the one asked in place of a breached
 *                                      one): checked, screened and hashed, then kept on the sign-in
 *                                      until the account's further factor is proved, when it
 *                                      replaces the old one (lib/authn/passwords/change.ts).
 *   4. POST /sign-in/password-changed  "Continue", after the page said the password changed.
 *      POST /sign-in/reset/cancel      back to the sign-in's methods.
 *
 * Sending and guessing are the email code's (its send gate and guessing limits, per address, per
 * account and per client address): a reset is one more way to ask for a code, not a second budget.
 */
import { and, eq, sql } from "drizzle-orm";
import { users } from "../../../db/schema";
import { recordAudit } from "../../audit/events";
import type { EndpointContext } from "../../http/context";
import { clientAddress, clientAddressOf } from "../../http/client-address";
import type { Route } from "../../http/route";
import { redirect303 } from "../../http/response";
import { isStorableText } from "../../text";
import { codeSendGate } from "../code-send";
import type { TransactionRow } from "../../oauth/pending-sign-in";
import { normalizeEmail } from "../../authn/email-address";
import { emailAvailable, sendMail } from "../../authn/email/transport";
import { passwordResetCodeMessage, passwordResetNoPasswordMessage } from "../../authn/email/templates";
import { cancelEmailCodes, EMAIL_CODE_TTL_MS, issueEmailCode, pendingEmailCode, unreadCodeFailure, verifyEmailCodeFactor } from "../../authn/factors/email-code";
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PasswordWorkRefused } from "../../authn/password";
import { chooseNewPassword } from "../../authn/passwords/change";
import { loadPasswordPolicy, screenNewPassword, type PasswordResetMode } from "../../authn/passwords/policy";
import { PasswordRefused } from "../../authn/passwords/screening";
import type { AuthPolicy } from "../../authn/policy";
import type { AuditEventType } from "../../audit/catalogue";
import { advance, currentStep, identify, signInStep, toSignInPage, updateOpen, type FlowStep } from "../flow";
import { homeRealmRedirect } from "./federation";

const RESET = (tx: TransactionRow) => ({ purpose: "reset" as const, bindingId: tx.id });

export interface PasswordResetView {
  /** "Forgot your password?" is offered: the workspace allows resets, the application accepts passwords, and email can be sent. */
  available: boolean;
  /** A reset code was sent (or, for an address without a password, the page says so all the same): the page asks for it. */
  codeSentTo: string | null;
  /** That code can no longer be used: the page offers a new one. */
  codeDead: boolean;
}

/** Whether this sign-in may reset a password: the workspace's policy, the application's first factors, and email. */
function resetOffered(ctx: EndpointContext, policy: AuthPolicy, reset: PasswordResetMode): boolean {
  return reset === "email" && policy.firstFactors.includes("password") && emailAvailable(ctx.service.config);
}

/** `reset`: the workspace's reset mode as the page reads it (../page-settings.ts). */
export async function passwordResetView(ctx: EndpointContext, tx: TransactionRow, step: FlowStep, policy: AuthPolicy, reset: PasswordResetMode): Promise<PasswordResetView> {
  if (step.kind !== "first_factor" || !resetOffered(ctx, policy, reset)) return { available: false, codeSentTo: null, codeDead: false };
  const pending = await pendingEmailCode(ctx, RESET(tx));
  return { available: true, codeSentTo: pending?.address ?? null, codeDead: pending?.dead ?? false };
}

/** The reset is part of the first step: its codes are neither sent nor checked at any later step. */
async function atFirstStep(request: Request, ctx: EndpointContext, tx: TransactionRow): Promise<AuthPolicy | null> {
  const { step, policy } = await currentStep(ctx, tx, request.headers.get("cookie"));
  if (step.kind !== "first_factor") return null;
  // The post decides from the database, not from what the page read.
  return resetOffered(ctx, policy, (await loadPasswordPolicy(ctx.service.db, ctx.workspace.id)).reset) ? policy : null;
}

async function audit(request: Request, ctx: EndpointContext, tx: TransactionRow, type: AuditEventType & `password_reset.${string}`, subject: string | null, reason: string): Promise<void> {
  await recordAudit(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    type,
    subject,
    reason,
    data: { client: tx.clientPk },
    ip: clientAddressOf(request.headers, ctx.service.config.trustProxy),
    at: ctx.service.clock.now(),
  });
}

/**
 * The account an address names, with how it signs in besides a password (its passkeys, the social
 * providers and enterprise connections it is linked to), in one statement for every address.
 */
async function accountOf(ctx: EndpointContext, address: string) {
  // Correlated subqueries name their tables in full: drizzle leaves a selected column unqualified.
  const [row] = await ctx.service.db
    .select({
      id: users.id,
      active: sql<boolean>`"users"."status" = 'active'`,
      hasPassword: sql<boolean>`"users"."password_hash" is not null`,
      passkeys: sql<number>`(select count(*)::int from "webauthn_credentials" w where w.workspace_id = "users"."workspace_id" and w.user_id = "users"."id" and w.kind = 'passkey' and w.flagged_at is null)`,
      providers: sql<string[] | null>`(select json_agg(distinct p.name) from "federated_identities" f join "social_providers" p on p.id = f.social_provider_id where f.workspace_id = "users"."workspace_id" and f.user_id = "users"."id")`,
      sso: sql<boolean>`exists (select 1 from "federated_identities" f where f.workspace_id = "users"."workspace_id" and f.user_id = "users"."id" and f.connection_id is not null)`,
    })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.emailNormalized, address)))
    .limit(1);
  return row ?? null;
}

/** POST /sign-in/reset/email: a reset code to the address (or, for an account without a password, how it signs in). */
export const resetSendEndpoint = signInStep(async (request, ctx, { tx, form }) => {
  if (!(await atFirstStep(request, ctx, tx))) return toSignInPage(ctx, tx.id, "method_not_allowed");
  const address = normalizeEmail(form.get("email"));
  if (!address) return resetPage(ctx, tx, "invalid_email");
  // An address in a domain an organization verified signs in through its connection, where no password is asked.
  const elsewhere = await homeRealmRedirect(ctx, tx, address);
  if (elsewhere) return elsewhere;

  const gate = await codeSendGate(request, ctx, tx, form, address);
  if (!gate.allowed) return resetPage(ctx, tx, gate.error);
  const account = await accountOf(ctx, address);
  const resettable = account !== null && account.active && account.hasPassword;
  const code = await issueEmailCode(ctx, RESET(tx), { address, userId: account?.id ?? null, deliverable: resettable });
  await gate.sent();
  const reason = !account ? "unknown_account" : !account.active ? "account_disabled" : account.hasPassword ? "code_sent" : "no_password";
  await audit(request, ctx, tx, "password_reset.requested", account?.id ?? null, reason);

  const workspaceName = ctx.workspace.name;
  if (code) sendMail(ctx, passwordResetCodeMessage({ to: address, workspaceName, code, minutes: EMAIL_CODE_TTL_MS / 60_000 }));
  else if (reason === "no_password") {
    sendMail(ctx, passwordResetNoPasswordMessage({ to: address, workspaceName, passkey: (account?.passkeys ?? 0) > 0, providers: account?.providers ?? [], sso: account?.sso ?? false }));
  }
  return resetPage(ctx, tx);
});

/** The reset's page (`reset=1`): its forms while the first step stands. */
function resetPage(ctx: EndpointContext, tx: TransactionRow, error?: "invalid_email" | "code_resend_wait" | "rate_limited" | "invalid_code" | "code_expired" | "bot_check"): Response {
  return redirect303(`${ctx.basePath}/sign-in?tx=${encodeURIComponent(tx.id)}&reset=1${error ? `&error=${error}` : ""}`);
}

/** POST /sign-in/reset/verify: the code. The account is identified, and the sign-in asks for its new password. */
export const resetVerifyEndpoint = signInStep(async (request, ctx, { tx, form }) => {
  const result = (await atFirstStep(request, ctx, tx))
    ? await verifyEmailCodeFactor(ctx, request, RESET(tx), form.get("code"))
    : { ok: false as const, reason: await unreadCodeFailure(ctx, RESET(tx)) };
  if (!result.ok) {
    await audit(request, ctx, tx, "password_reset.refused", null, result.reason === "expired" ? "code_expired" : "wrong_code");
    return resetPage(ctx, tx, result.reason === "expired" ? "code_expired" : "invalid_code");
  }
  return identify(request, ctx, tx, result.userId, result.evidence, { reset: true });
});

/** POST /sign-in/reset/cancel: back to the methods; the pending code and a reset under way are dropped. */
export const resetCancelEndpoint = signInStep(async (_request, ctx, { tx }) => {
  await cancelEmailCodes(ctx, tx.id);
  // What the reset proved (the mailbox) goes with it: the sign-in starts over.
  if (tx.passwordChange === "reset") await updateOpen(ctx, tx, { userId: null, evidence: [], sessionId: null, passwordChange: null, newPasswordHash: null });
  return toSignInPage(ctx, tx.id);
});

/** POST /sign-in/new-password: the password the step asks for (a reset's, or one in place of a breached one). */
export const newPasswordEndpoint = signInStep(async (request, ctx, { tx, form }) => {
  const { step } = await currentStep(ctx, tx, request.headers.get("cookie"));
  if (step.kind !== "new_password" || !tx.userId) return toSignInPage(ctx, tx.id);
  const password = form.get("password") ?? "";
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH || !isStorableText(password)) return toSignInPage(ctx, tx.id, "weak_password");
  const [user] = await ctx.service.db.select({ email: users.email, name: users.name }).from(users).where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, tx.userId))).limit(1);
  if (!user) return toSignInPage(ctx, tx.id);
  try {
    await screenNewPassword(ctx.service, ctx.workspace.id, password, { userInputs: [user.email, user.name ?? ""] });
  } catch (error) {
    if (!(error instanceof PasswordRefused)) throw error;
    if (step.reason === "reset") await audit(request, ctx, tx, "password_reset.refused", tx.userId, "password_refused");
    return toSignInPage(ctx, tx.id, error.code);
  }
  let hash: string;
  try {
    hash = await hashPassword(password, clientAddress(request, ctx.service.config.trustProxy));
  } catch (error) {
    if (!(error instanceof PasswordWorkRefused)) throw error;
    return toSignInPage(ctx, tx.id, "rate_limited");
  }
  const chosen = await chooseNewPassword(ctx, tx, step.reason, hash);
  return chosen ? advance(request, ctx, chosen) : toSignInPage(ctx, tx.id);
});

/** POST /sign-in/password-changed: "Continue" after the notice; the sign-in goes on with what the application asks. */
export const passwordChangedEndpoint = signInStep(async (request, ctx, { tx }) => {
  if (tx.passwordChange !== "changed") return toSignInPage(ctx, tx.id);
  const updated = await updateOpen(ctx, tx, { passwordChange: null });
  return updated ? advance(request, ctx, updated) : toSignInPage(ctx, tx.id);
});

export const passwordResetRoutes: Route[] = [
  { method: "POST", path: "/sign-in/reset/email", endpoint: resetSendEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/reset/verify", endpoint: resetVerifyEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/reset/cancel", endpoint: resetCancelEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/new-password", endpoint: newPasswordEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/password-changed", endpoint: passwordChangedEndpoint, machine: false, errors: "hosted" },
];
