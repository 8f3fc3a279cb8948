/**
 * Passkeys and security keys in the sign-in: the view (the WebAuthn options the page's script
 * hands to the browser, each with a fresh challenge bound to this sign-in) and the step endpoints.
 *
 *   POST /sign-in/passkey            a passkey as the first factor (identifies the user)
 *   POST /sign-in/webauthn           a security key or passkey as the second factor
 *   POST /sign-in/webauthn/register  a new credential: a second factor (MFA enrolment) or the passkey offer
 *   POST /sign-in/passkey/skip       "Not now" on the passkey offer (unless the policy requires one)
 *
 * The browser posts the JSON of the WebAuthn response in the form field `response`.
 */
import { and, eq } from "drizzle-orm";
import { users } from "../../../db/schema";
import type { EndpointContext } from "../../http/context";
import type { Route } from "../../http/route";
import { hostedError, type SignInFormError } from "../../hosted/errors";
import type { TransactionRow } from "../../oauth/pending-sign-in";
import { evidenceFor } from "../../authn/evidence";
import { policyFor } from "../../authn/policy";
import type { ChallengeBinding, VerifyFailure } from "../../authn/factors/contract";
import {
  passkeySignInOptions,
  registrationOptions,
  registrationUser,
  secondFactorOptions,
  verifyRegistration,
  verifyWebAuthnFactor,
  WEBAUTHN_FACTOR,
  type WebAuthnKind,
} from "../../authn/factors/webauthn";
import { completeSecondFactorEnrolment, enrolmentSource } from "../enrolment";
import { passkeyLaterCookie } from "../passkey-offer";
import { recordSignInFailure, type SignInFailureReason } from "../failures";
import { homeRealmRedirect } from "./federation";
import { advance, currentStep, identify, prove, signInStep, toSignInPage, updateOpen, type FlowStep } from "../flow";

export interface WebAuthnView {
  /**
   * JSON of the request options (navigator.credentials.get) at this step: any passkey on the
   * first step (the button and autofill), the user's own keys at the second; null when the step
   * uses none.
   */
  options: string | null;
  /** JSON of the creation options (navigator.credentials.create) per kind at the enrolment steps; null elsewhere. */
  creation: { passkey: string | null; securityKey: string | null } | null;
}

/** Assertions of this sign-in, and registrations during it: each bound to the transaction. */
const signInBinding = (tx: TransactionRow): ChallengeBinding => ({ purpose: "sign_in", bindingId: tx.id });
const enrolBinding = (tx: TransactionRow): ChallengeBinding => ({ purpose: "enroll", bindingId: tx.id });

const isWebAuthnKind = (k: string): k is WebAuthnKind => k === "passkey" || k === "security_key";

export async function webauthnView(ctx: EndpointContext, tx: TransactionRow, step: FlowStep): Promise<WebAuthnView> {
  const none: WebAuthnView = { options: null, creation: null };
  if (step.kind === "first_factor") {
    if (!step.allowed.includes("passkey")) return none;
    return { options: JSON.stringify(await passkeySignInOptions(ctx, signInBinding(tx))), creation: null };
  }
  if (!tx.userId) return none;
  if (step.kind === "second_factor") {
    if (!step.options.some(isWebAuthnKind)) return none;
    const options = await secondFactorOptions(ctx, signInBinding(tx), tx.userId);
    return { options: options && JSON.stringify(options), creation: null };
  }
  const kinds: WebAuthnKind[] = step.kind === "enroll_second_factor" ? step.options.filter(isWebAuthnKind) : step.kind === "passkey_offer" ? ["passkey"] : [];
  if (kinds.length === 0) return none;
  const user = await registrationUser(ctx, tx.userId);
  if (!user) return none;
  const creation = await registrationOptions(ctx, enrolBinding(tx), user, kinds);
  const json = (o: unknown) => (o ? JSON.stringify(o) : null);
  return { options: null, creation: { passkey: json(creation.passkey), securityKey: json(creation.security_key) } };
}

/** What the page says about a refused answer: a flagged credential is named; anything else is one message. */
const failureMessage = (reason: VerifyFailure): SignInFormError => (reason === "flagged" ? "credential_refused" : "webauthn_failed");
const failureReason = (reason: VerifyFailure): SignInFailureReason => (reason === "flagged" ? "credential_refused" : "assertion_failed");

/** POST /sign-in/passkey: a passkey (discoverable, user verified) identifies the user. */
export const passkeySignInEndpoint = signInStep(async (request, ctx, { tx, form }) => {
  if (!(await policyFor(ctx, tx.clientPk)).firstFactors.includes("passkey")) return toSignInPage(ctx, tx.id, "method_not_allowed");
  // Only the first step offers a passkey that names its account (a later step asks for the user's own keys at /sign-in/webauthn).
  const { step } = await currentStep(ctx, tx, request.headers.get("cookie"));
  if (step.kind !== "first_factor" || !step.allowed.includes("passkey")) return toSignInPage(ctx, tx.id, "webauthn_failed");
  // The factor's one verification: its gate (per client address: the assertion names no account yet), the account, the failure counted.
  const result = await verifyWebAuthnFactor(ctx, request, signInBinding(tx), form.get("response"), { userId: null, kinds: ["passkey"] });
  // A limited attempt is not checked. A signature cannot be guessed and this count names no
  // account (it is the client address's), so the page says when to try again (docs/security.md).
  if (!result.ok && result.reason === "limited") return toSignInPage(ctx, tx.id, "webauthn_limited");
  if (!result.ok) {
    // Whose passkey it was is not established by a failed assertion: no subject.
    await recordSignInFailure(ctx, request, { userId: null, method: WEBAUTHN_FACTOR.failedSignIn, reason: failureReason(result.reason), clientPk: tx.clientPk });
    return toSignInPage(ctx, tx.id, failureMessage(result.reason));
  }
  // An account whose address is in a domain an organization verified signs in through its connection, passkey or not.
  const [user] = await ctx.service.db.select({ email: users.email }).from(users).where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, result.userId))).limit(1);
  const elsewhere = user ? await homeRealmRedirect(ctx, tx, user.email) : null;
  if (elsewhere) return elsewhere;
  return identify(request, ctx, tx, result.userId, result.evidence);
});

/** POST /sign-in/webauthn: one of the user's security keys or passkeys as the second factor. */
export const webauthnSecondFactorEndpoint = signInStep(async (request, ctx, { tx, form }) => {
  const { step } = await currentStep(ctx, tx, request.headers.get("cookie"));
  if (step.kind !== "second_factor" || !tx.userId) return toSignInPage(ctx, tx.id);
  const kinds = step.options.filter(isWebAuthnKind);
  if (kinds.length === 0) return toSignInPage(ctx, tx.id, "method_not_allowed");
  const result = await verifyWebAuthnFactor(ctx, request, signInBinding(tx), form.get("response"), { userId: tx.userId, kinds });
  // The user's own count from this address, after their first factor: the page says when to try again.
  if (!result.ok && result.reason === "limited") return toSignInPage(ctx, tx.id, "webauthn_limited");
  if (!result.ok) {
    await recordSignInFailure(ctx, request, { userId: tx.userId, method: WEBAUTHN_FACTOR.failedSignIn, reason: failureReason(result.reason), clientPk: tx.clientPk });
    return toSignInPage(ctx, tx.id, failureMessage(result.reason));
  }
  return prove(request, ctx, tx, result.evidence);
});

/**
 * POST /sign-in/webauthn/register: a new credential of the kind the form names (`kind`:
 * "passkey" or "security_key"). At the MFA enrolment step it is the user's second factor (its
 * registration counts as the factor, lib/sign-in/enrolment.ts); at the passkey offer it answers
 * the offer.
 */
export const webauthnRegisterEndpoint = signInStep(async (request, ctx, { tx, form }) => {
  const { step } = await currentStep(ctx, tx, request.headers.get("cookie"));
  const userId = tx.userId;
  if (!userId || (step.kind !== "enroll_second_factor" && step.kind !== "passkey_offer")) return toSignInPage(ctx, tx.id);
  const kind = form.get("kind") ?? "passkey";
  const allowed: string[] = step.kind === "enroll_second_factor" ? step.options : ["passkey"];
  if (!isWebAuthnKind(kind) || !allowed.includes(kind)) return toSignInPage(ctx, tx.id, "method_not_allowed");

  const result = await verifyRegistration(ctx, enrolBinding(tx), userId, kind, form.get("response"), enrolmentSource(request, ctx, tx));
  if (!result.ok) return toSignInPage(ctx, tx.id, "enrollment_failed");
  if (step.kind === "enroll_second_factor") {
    return completeSecondFactorEnrolment(request, ctx, tx, evidenceFor(kind, ctx.service.clock.now(), result.credentialRowId));
  }
  return answerOffer(request, ctx, tx);
});

/** POST /sign-in/passkey/skip: "Not now" on an optional passkey offer; not offered again in this browser for 30 days (lib/sign-in/passkey-offer.ts). */
export const passkeyOfferSkipEndpoint = signInStep(async (request, ctx, { tx }) => {
  const { step } = await currentStep(ctx, tx, request.headers.get("cookie"));
  if (step.kind !== "passkey_offer" || !tx.userId) return toSignInPage(ctx, tx.id);
  if (step.required) return toSignInPage(ctx, tx.id, "passkey_required");
  const answered = await answerOffer(request, ctx, tx);
  const headers = new Headers(answered.headers);
  headers.append("Set-Cookie", passkeyLaterCookie(ctx, tx.userId));
  return new Response(answered.body, { status: answered.status, headers });
});

async function answerOffer(request: Request, ctx: EndpointContext, tx: TransactionRow): Promise<Response> {
  const updated = await updateOpen(ctx, tx, { passkeyOfferAnswered: true }, tx.userId ?? undefined);
  if (!updated) return hostedError("sign_in_expired");
  return advance(request, ctx, updated);
}

export const webauthnRoutes: Route[] = [
  { method: "POST", path: "/sign-in/passkey", endpoint: passkeySignInEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/passkey/skip", endpoint: passkeyOfferSkipEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/webauthn", endpoint: webauthnSecondFactorEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/webauthn/register", endpoint: webauthnRegisterEndpoint, machine: false, errors: "hosted" },
];
