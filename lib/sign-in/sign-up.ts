/**
 * Self-service sign-up (policy field `signUp`, off by default): an email address proved by a
 * one-time code (lib/authn/factors/email-code/email-code.ts), then a password or a passkey.
 *
 *   1. POST /sign-up/email    a code to confirm the address;
 *   2. POST /sign-up/verify   the code: the transaction records the proved address (no account yet);
 *   3. POST /sign-up/account  the credential: the account is created (email verified) and the
 *                             sign-in continues as any other (lib/sign-in/flow.ts), with the email
 *                             code as its evidence.
 *
 * No account exists before its address is proved, and no page says whether an address is
 * registered: for a registered address step 1 looks the same, and the message sent tells the
 * owner the account exists, with a sign-in code when the application accepts email codes, which
 * step 2 then takes as a sign-in. A password set here is not evidence: the user chose it a moment
 * ago, so it proves nothing the code did not.
 */
import { and, eq, gt, isNull } from "drizzle-orm";
import { authorizationTransactions, users } from "../../db/schema";
import { newId } from "../crypto";
import type { EndpointContext } from "../http/context";
import type { Route } from "../http/route";
import { isStorableText } from "../text";
import { codeSendGate } from "./code-send";
import type { TransactionRow } from "../oauth/pending-sign-in";
import { evidenceFor } from "../authn/evidence";
import { emailAvailable, sendMail } from "../authn/email/transport";
import { accountExistsMessage, signUpCodeMessage } from "../authn/email/templates";
import {
  activeUserByAddress,
  EMAIL_CODE_TTL_MS,
  issueEmailCode,
  markEmailVerified,
  pendingEmailCode,
  unreadCodeFailure,
  verifyEmailCode,
} from "../authn/factors/email-code";
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PasswordWorkRefused } from "../authn/password";
import { screenNewPassword } from "../authn/passwords/policy";
import { PasswordRefused } from "../authn/passwords/screening";
import { clientAddress } from "../http/client-address";
import { policyFor, type AuthPolicy } from "../authn/policy";
import { homeRealmRedirect } from "./steps/federation";
import { currentStep, identify, signInStep, toSignInPage, updateOpen, type FlowStep } from "./flow";
import { normalizeEmail } from "../authn/email-address";
import { EMAIL_CODE_EVIDENCE } from "../authn/factors/email-code/evidence";

/** How the new account will sign in: a password, a passkey, or (when the application accepts neither) its email codes alone. */
export type SignUpCredential = "password" | "passkey" | "email";

/** The credentials a sign-up may choose under this policy: the first factors it accepts. */
export function signUpCredentials(policy: AuthPolicy): SignUpCredential[] {
  const out = (["password", "passkey"] as const).filter((f) => policy.firstFactors.includes(f));
  return out.length > 0 ? out : policy.firstFactors.includes(EMAIL_CODE_EVIDENCE.method) ? ["email"] : [];
}

export interface SignUpView {
  /** The application accepts sign-ups and email can be sent. */
  available: boolean;
  /** A code to confirm this address was sent: the page asks for it. */
  codeSentTo: string | null;
  /** That code can no longer be used: the page offers a new one. */
  codeDead: boolean;
  /** The address is proved: the page asks for the credential. */
  verifiedAddress: string | null;
  credentials: SignUpCredential[];
}

export async function signUpView(ctx: EndpointContext, tx: TransactionRow, step: FlowStep, policy: AuthPolicy): Promise<SignUpView> {
  const credentials = signUpCredentials(policy);
  const available = policy.signUp && emailAvailable(ctx.service.config) && credentials.length > 0;
  const active = available && step.kind === "first_factor";
  const pending = active && !tx.signUpAddress ? await pendingEmailCode(ctx, { purpose: "sign_up", bindingId: tx.id }) : null;
  return {
    available,
    codeSentTo: pending?.address ?? null,
    codeDead: pending?.dead ?? false,
    verifiedAddress: active ? tx.signUpAddress : null,
    credentials,
  };
}

async function signUpAllowed(ctx: EndpointContext, tx: TransactionRow): Promise<AuthPolicy | null> {
  const policy = await policyFor(ctx, tx.clientPk);
  return policy.signUp && signUpCredentials(policy).length > 0 ? policy : null;
}

/** The sign-up is part of the first step: its codes are neither sent nor checked at any later step (a code for a registered address signs in). */
async function atFirstStep(request: Request, ctx: EndpointContext, tx: TransactionRow): Promise<boolean> {
  return (await currentStep(ctx, tx, request.headers.get("cookie"))).step.kind === "first_factor";
}

/** POST /sign-up/email: a code to confirm the address (for a registered address, the account-exists message). */
export const signUpSendEndpoint = signInStep(async (request, ctx, { tx, form }) => {
  const policy = await signUpAllowed(ctx, tx);
  if (!policy) return toSignInPage(ctx, tx.id, "method_not_allowed");
  if (!(await atFirstStep(request, ctx, tx))) return toSignInPage(ctx, tx.id);
  if (!emailAvailable(ctx.service.config)) return toSignInPage(ctx, tx.id, "email_unavailable");
  const address = normalizeEmail(form.get("email"));
  if (!address) return toSignInPage(ctx, tx.id, "invalid_email");
  // An address in a domain an organization verified gets its account through the organization's connection.
  const elsewhere = await homeRealmRedirect(ctx, tx, address);
  if (elsewhere) return elsewhere;

  const gate = await codeSendGate(request, ctx, tx, form, address);
  if (!gate.allowed) return toSignInPage(ctx, tx.id, gate.error);
  // One statement for registered and new addresses alike: the page must not take longer for either.
  const [registered] = await ctx.service.db
    .select({ id: users.id, status: users.status })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.emailNormalized, address)))
    .limit(1);
  const user = registered?.status === "active" ? registered : null;
  // A registered address gets a sign-in code only where this application accepts one; a disabled account gets nothing.
  const signsIn = user !== null && policy.firstFactors.includes(EMAIL_CODE_EVIDENCE.method);
  const binding = { purpose: "sign_up" as const, bindingId: tx.id };
  const code = await issueEmailCode(ctx, binding, { address, userId: user?.id ?? null, deliverable: registered ? signsIn : true });
  await gate.sent();
  if (tx.signUpAddress) await updateOpen(ctx, tx, { signUpAddress: null });

  const minutes = EMAIL_CODE_TTL_MS / 60_000;
  const workspaceName = ctx.workspace.name;
  if (!registered) sendMail(ctx, signUpCodeMessage({ to: address, workspaceName, code: code!, minutes }));
  else if (user) sendMail(ctx, accountExistsMessage({ to: address, workspaceName, code, minutes }));
  return toSignInPage(ctx, tx.id);
});

/** POST /sign-up/verify: the code. A new address is recorded as proved; a registered one signs in. */
export const signUpVerifyEndpoint = signInStep(async (request, ctx, { tx, form }) => {
  if (!(await signUpAllowed(ctx, tx))) return toSignInPage(ctx, tx.id, "method_not_allowed");
  const binding = { purpose: "sign_up" as const, bindingId: tx.id };
  const result = (await atFirstStep(request, ctx, tx))
    ? await verifyEmailCode(ctx, request, binding, form.get("code"))
    : { ok: false as const, reason: await unreadCodeFailure(ctx, binding) };
  if (!result.ok) return toSignInPage(ctx, tx.id, result.reason === "expired" ? "code_expired" : "invalid_code");
  // Registered (when the code was sent, or since): the code was a sign-in code for the account.
  const user = await activeUserByAddress(ctx, result.address);
  if (user) {
    await markEmailVerified(ctx, user.id);
    return identify(request, ctx, tx, user.id, result.evidence);
  }
  if (result.userId) return toSignInPage(ctx, tx.id, "code_expired"); // the account was disabled meanwhile
  await updateOpen(ctx, tx, { signUpAddress: result.address });
  return toSignInPage(ctx, tx.id);
});

/**
 * Takes the proved address off the transaction: one conditional UPDATE, so a double submission
 * creates one account.
 */
async function claimSignUpAddress(ctx: EndpointContext, tx: TransactionRow, withPasskey: boolean): Promise<TransactionRow | null> {
  const t = authorizationTransactions;
  const [row] = await ctx.service.db
    .update(t)
    .set({ signUpAddress: null, signUpWithPasskey: withPasskey })
    .where(
      and(
        eq(t.workspaceId, ctx.workspace.id),
        eq(t.id, tx.id),
        eq(t.signUpAddress, tx.signUpAddress ?? ""),
        isNull(t.completedAt),
        gt(t.expiresAt, ctx.service.clock.now()),
      ),
    )
    .returning();
  return row ?? null;
}

/** POST /sign-up/account: creates the account with the proved address and the chosen credential, then signs it in. */
export const signUpAccountEndpoint = signInStep(async (request, ctx, { tx, form }) => {
  const policy = await signUpAllowed(ctx, tx);
  if (!policy) return toSignInPage(ctx, tx.id, "method_not_allowed");
  const address = tx.signUpAddress;
  if (!address) return toSignInPage(ctx, tx.id);
  const credential = form.get("credential") as SignUpCredential | null;
  if (!credential || !signUpCredentials(policy).includes(credential)) return toSignInPage(ctx, tx.id, "method_not_allowed");

  let passwordHash: string | null = null;
  if (credential === "password") {
    const password = form.get("password") ?? "";
    if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH || !isStorableText(password)) return toSignInPage(ctx, tx.id, "weak_password");
    try {
      await screenNewPassword(ctx.service, ctx.workspace.id, password, { userInputs: [address] });
    } catch (error) {
      if (!(error instanceof PasswordRefused)) throw error;
      return toSignInPage(ctx, tx.id, error.code);
    }
    try {
      passwordHash = await hashPassword(password, clientAddress(request, ctx.service.config.trustProxy));
    } catch (error) {
      if (!(error instanceof PasswordWorkRefused)) throw error;
      return toSignInPage(ctx, tx.id, "rate_limited"); // the hashing queue is full: nothing was claimed
    }
  }

  const claimed = await claimSignUpAddress(ctx, tx, credential === "passkey");
  if (!claimed) return toSignInPage(ctx, tx.id);
  const now = ctx.service.clock.now();
  const [created] = await ctx.service.db
    .insert(users)
    .values({
      id: newId(),
      workspaceId: ctx.workspace.id,
      email: address,
      emailNormalized: address,
      emailVerified: true,
      name: null,
      passwordHash,
      status: "active",
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .returning({ id: users.id });
  // Registered meanwhile (another sign-up, the console): this browser proved the address, so it
  // signs in to that account as an email code would; its credentials are left as they are.
  const userId = created?.id ?? (await activeUserByAddress(ctx, address))?.id;
  if (!userId) return toSignInPage(ctx, tx.id, "enrollment_failed");
  if (!created) await updateOpen(ctx, claimed, { signUpWithPasskey: false });
  return identify(request, ctx, claimed, userId, evidenceFor(EMAIL_CODE_EVIDENCE.method, now));
});

export const signUpRoutes: Route[] = [
  { method: "POST", path: "/sign-up/email", endpoint: signUpSendEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-up/verify", endpoint: signUpVerifyEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-up/account", endpoint: signUpAccountEndpoint, machine: false, errors: "hosted" },
];
