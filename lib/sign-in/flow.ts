/**
 * The sign-in in progress: every hosted sign-in step (password, email code, passkey, second
 * factors, enrolment) is a form post that goes through here.
 *
 * - `signInStep(handler)` is the endpoint shape of a step: same-origin guard, form media type and
 *   size, the pending sign-in bound to this browser's `lk_tx_` cookie, and the CSRF token bound to
 *   both; the handler gets the verified transaction and form.
 * - `identify` records a first factor (the user it proved) on the transaction; `prove` records a
 *   further factor of the same user (each counted as a verified factor, ./outcomes.ts). Both then `advance`: the application's policy
 *   (lib/authn/policy.ts) decides what is still missing, and the browser goes back to the sign-in
 *   page for it, or the sign-in completes: a hosted session is created (or the live session being
 *   stepped up gets the new evidence and a new secret) and the code is issued.
 *
 * Nothing a step proves reaches a session before the policy is met, so a half-finished sign-in
 * never leaves a session behind that another application could reuse.
 */
import { and, eq, gt, isNull } from "drizzle-orm";
import { recordAudit } from "../audit/events";
import { authorizationTransactions, type StoredEvidence } from "../../db/schema";
import type { Endpoint, EndpointContext } from "../http/context";
import { parseCookieHeader } from "../http/cookies";
import { passkeyOfferDeclinedHere } from "./passkey-offer";
import { csrfToken, verifyCsrfToken } from "../http/csrf";
import { clientAddressOf } from "../http/client-address";
import { redirect303 } from "../http/response";
import { hostedError, type SignInFormError } from "../hosted/errors";
import { signsInOnlyThroughConnection } from "../organizations/scim/sign-in-rule";
import { hostedFormPost } from "../hosted/form-post";
import { completeTransaction, loadCompletedTransaction, loadOpenTransaction, TX_COOKIE_PREFIX, type TransactionRow } from "../oauth/pending-sign-in";
import { appendEvidence, createHostedSession, getLiveSession, rotateSessionSecret, type HostedSession } from "../authn/hosted-session";
import { readEvidence, withEvidence, type Evidence } from "../authn/evidence";
import { nextStep, policyFor, resetFurtherFactors, type AuthPolicy, type NextStep } from "../authn/policy";
import { enrolledSummary } from "../authn/factors";
import { federatedEvidence, linkProvedAccount } from "../federation/identities";
import { signalVerified } from "./outcomes";
import { RECOVERY_CODES_FACTOR } from "../authn/factors/recovery-codes";
import type { ShownOnce } from "../authn/factors/registry";
import { applyPasswordChange, changeReady, resetStep, type PasswordChangeStep } from "../authn/passwords/change";
import { browserMark, noteSignInBrowser } from "../security-alerts/browsers";


/** The form's CSRF token: bound to the workspace, the transaction and the browser's HttpOnly `lk_tx_` cookie for it. */
const formBindings = (ctx: EndpointContext, txId: string, binding: string) => [ctx.workspace.id, txId, binding];

export function signInCsrf(ctx: EndpointContext, txId: string, binding: string): string {
  return csrfToken(ctx.service.config.masterKey, "hosted-sign-in", formBindings(ctx, txId, binding));
}

/** The transaction named by `txId` that this browser's cookie opens, with the cookie's value. */
export async function transactionOf(ctx: EndpointContext, txId: string, cookieHeader: string | null): Promise<{ tx: TransactionRow; binding: string } | null> {
  const binding = parseCookieHeader(cookieHeader).get(`${TX_COOKIE_PREFIX}${txId}`);
  const tx = await loadOpenTransaction(ctx, txId, binding);
  return tx && binding ? { tx, binding } : null;
}

export interface StepInput {
  tx: TransactionRow;
  form: URLSearchParams;
}

export type StepHandler = (request: Request, ctx: EndpointContext, input: StepInput) => Promise<Response>;

/**
 * A sign-in step's endpoint: a hosted form post (lib/hosted/form-post.ts: same origin, form body),
 * then the pending sign-in bound to this browser and the CSRF token (lib/http/csrf.ts) bound to
 * both; the token applies to every post, whatever its headers say.
 */
export function signInStep(handler: StepHandler): Endpoint {
  return hostedFormPost(async (request, ctx, form) => {
    const txId = form.get("tx") ?? "";
    const open = await transactionOf(ctx, txId, request.headers.get("cookie"));
    if (!open) {
      // A form of a sign-in this browser already finished (Back, then submit): the page says it is done.
      const binding = parseCookieHeader(request.headers.get("cookie")).get(`${TX_COOKIE_PREFIX}${txId}`);
      if (await loadCompletedTransaction(ctx, txId, binding)) return toSignInPage(ctx, txId);
      return hostedError("sign_in_expired");
    }
    if (!verifyCsrfToken(ctx.service.config.masterKey, "hosted-sign-in", formBindings(ctx, open.tx.id, open.binding), form.get("csrf"))) {
      return hostedError("form_unverified");
    }
    return handler(request, ctx, { tx: open.tx, form });
  });
}

/** Back to the sign-in page, at whatever step the transaction is, optionally with a message from the catalogue. */
export function toSignInPage(ctx: EndpointContext, txId: string, error?: SignInFormError, headers: [string, string][] = []): Response {
  const query = `tx=${encodeURIComponent(txId)}${error ? `&error=${error}` : ""}`;
  return redirect303(`${ctx.basePath}/sign-in?${query}`, headers);
}

/** The live session the transaction steps up, if it is still live and still this user's. */
async function steppedUpSession(ctx: EndpointContext, tx: TransactionRow, cookieHeader: string | null): Promise<HostedSession | null> {
  if (!tx.sessionId) return null;
  const session = await getLiveSession(ctx, cookieHeader);
  return session && session.id === tx.sessionId && session.userId === tx.userId ? session : null;
}

/** Everything the user has proved for this sign-in: the stepped-up session's evidence and this transaction's. */
function provedSoFar(tx: TransactionRow, session: HostedSession | null): Evidence[] {
  const own = readEvidence(tx.evidence);
  return session ? own.reduce(withEvidence, readEvidence(session.evidence)) : own;
}

/**
 * The policy's next step, the step that shows what an enrolment generated once (the recovery-code
 * set), or a new password's steps (lib/authn/passwords/change.ts).
 */
export type FlowStep = NextStep | { kind: ShownOnce } | PasswordChangeStep;

/** Where the sign-in stands: the step the page must show. */
export async function currentStep(ctx: EndpointContext, tx: TransactionRow, cookieHeader: string | null): Promise<{ step: FlowStep; policy: AuthPolicy }> {
  const { step, policy } = await flowState(ctx, tx, cookieHeader);
  return { step, policy };
}

async function flowState(ctx: EndpointContext, tx: TransactionRow, cookieHeader: string | null): Promise<{ step: FlowStep; policy: AuthPolicy; changeReady: boolean }> {
  const policy = await policyFor(ctx, tx.clientPk);
  if (tx.recoveryCodesEncrypted) return { step: { kind: RECOVERY_CODES_FACTOR.shownOnce }, policy, changeReady: false };
  // A changed password is said once, before anything else.
  if (tx.passwordChange === "changed") return { step: { kind: "password_changed" }, policy, changeReady: false };
  const session = await steppedUpSession(ctx, tx, cookieHeader);
  const enrolled = tx.userId ? await enrolledSummary(ctx, tx.userId) : null;
  const proved = provedSoFar(tx, session);
  // A reset asks for the new password and the account's further factor before the application's policy asks anything.
  const further = tx.passwordChange === "reset" ? resetFurtherFactors(enrolled, proved) : null;
  const reset = resetStep(tx, further);
  if (reset) return { step: reset, policy, changeReady: false };
  const ready = changeReady(tx, further);
  // An account just signed up with a passkey (lib/sign-in/sign-up.ts) gets it before anything else.
  if (tx.signUpWithPasskey && enrolled && enrolled.passkey === 0) return { step: { kind: "passkey_offer", required: true }, policy, changeReady: ready };
  // "Not now" answers the optional offer for this sign-in, and for 30 days in this browser (./passkey-offer.ts).
  const offerAnswered = tx.passkeyOfferAnswered || (tx.userId !== null && passkeyOfferDeclinedHere(ctx, cookieHeader, tx.userId));
  const step = nextStep(policy, enrolled, proved, offerAnswered);
  // A password known breached is replaced once the policy is met, before the passkey offer.
  if (tx.passwordChange === "breached" && !tx.newPasswordHash && (step.kind === "done" || step.kind === "passkey_offer")) {
    return { step: { kind: "new_password", reason: "breached" }, policy, changeReady: false };
  }
  return { step, policy, changeReady: ready };
}

/**
 * Records a first factor: the user it identified and its evidence. A different user than the one
 * the transaction held starts over (the earlier user's evidence and stepped-up session are
 * dropped); the same user adds to what they proved.
 *
 * `origin` is the organization and enterprise connection a federated sign-in came through: the
 * session the sign-in creates carries them (any other first factor clears them). When an upstream
 * identity is waiting to be linked (lib/federation/identities.ts), proving the account it names
 * keeps it waiting until the sign-in completes (`finish`): it is linked only once the account's
 * own policy is met by the account's own factors, MFA included, and the upstream sign-in is not
 * counted towards it. Proving any other account drops it.
 */
export async function identify(
  request: Request,
  ctx: EndpointContext,
  tx: TransactionRow,
  userId: string,
  event: Evidence,
  options: {
    origin?: { organizationId: string | null; connectionId: string | null } | null;
    /** The user proved the account's mailbox to reset its password (lib/sign-in/steps/password-reset.ts). */
    reset?: boolean;
    /** The password just verified is known from a breach: the sign-in asks for a new one (lib/authn/passwords/breached.ts). */
    breached?: boolean;
  } = {},
): Promise<Response> {
  const origin = options.origin ?? null;
  // An account an organization's directory manages signs in through the organization's connection only (unless it allows more).
  if (!origin?.connectionId && (await signsInOnlyThroughConnection(ctx.service.db, ctx.workspace.id, userId))) return toSignInPage(ctx, tx.id, "organization_sign_in");
  const sameUser = tx.userId === userId;
  const evidence: Evidence[] = sameUser ? withEvidence(readEvidence(tx.evidence), event) : [event];
  let from = origin ?? (sameUser && tx.connectionId ? { organizationId: tx.organizationId, connectionId: tx.connectionId } : { organizationId: null, connectionId: null });
  const link = tx.federatedLink;
  const keepLink = link !== null && link.userId === userId && !origin;
  if (keepLink) from = { organizationId: link.organizationId, connectionId: link.connectionId };
  const updated = await updateOpen(ctx, tx, {
    userId,
    evidence,
    sessionId: sameUser ? tx.sessionId : null,
    passkeyOfferAnswered: sameUser ? tx.passkeyOfferAnswered : false,
    federatedLink: keepLink ? link : null,
    ...passwordChangeAfter(tx, sameUser, options),
    ...from,
  });
  if (!updated) return hostedError("sign_in_expired");
  signalVerified(event);
  return advance(request, ctx, updated);
}

/**
 * The new password a first factor leaves the sign-in asking for: a reset's (the mailbox proved for
 * it), one in place of a breached password (unless a reset of this account is under way), or, for
 * the same user, whatever was under way; proving another account drops it.
 */
function passwordChangeAfter(tx: TransactionRow, sameUser: boolean, options: { reset?: boolean; breached?: boolean }): Partial<Pick<TransactionRow, "passwordChange" | "newPasswordHash">> {
  if (options.reset) return { passwordChange: "reset", newPasswordHash: null };
  if (options.breached && !(sameUser && tx.passwordChange === "reset")) return { passwordChange: "breached", newPasswordHash: null };
  return sameUser ? {} : { passwordChange: null, newPasswordHash: null };
}

/** Records a further factor of the transaction's user (a second factor, an enrolment's proof). */
export async function prove(
  request: Request,
  ctx: EndpointContext,
  tx: TransactionRow,
  event: Evidence,
  /** Set in the same update (an enrolment's recovery codes, lib/sign-in/enrolment.ts). */
  also: Pick<Partial<TransactionRow>, "recoveryCodesEncrypted"> = {},
): Promise<Response> {
  if (!tx.userId) return toSignInPage(ctx, tx.id);
  const updated = await updateOpen(ctx, tx, { ...also, evidence: withEvidence(readEvidence(tx.evidence), event) }, tx.userId);
  if (!updated) return hostedError("sign_in_expired");
  signalVerified(event);
  return advance(request, ctx, updated);
}

/** Updates the transaction while it is open (and, when given, still held by `userId`). */
export async function updateOpen(
  ctx: EndpointContext,
  tx: TransactionRow,
  set: Partial<
    Pick<
      TransactionRow,
      | "userId"
      | "evidence"
      | "sessionId"
      | "recoveryCodesEncrypted"
      | "passkeyOfferAnswered"
      | "signUpAddress"
      | "signUpWithPasskey"
      | "organizationId"
      | "connectionId"
      | "federatedLink"
      | "passwordChange"
      | "newPasswordHash"
    >
  >,
  userId?: string,
): Promise<TransactionRow | null> {
  const t = authorizationTransactions;
  const now = ctx.service.clock.now();
  const [row] = await ctx.service.db
    .update(t)
    .set(set)
    .where(and(eq(t.workspaceId, ctx.workspace.id), eq(t.id, tx.id), isNull(t.completedAt), gt(t.expiresAt, now), userId ? eq(t.userId, userId) : undefined))
    .returning();
  return row ?? null;
}

/**
 * After a step: a new password that waits for nothing more replaces the old one (and the page says
 * so); otherwise back to the page for what is missing, or complete the sign-in.
 */
export async function advance(request: Request, ctx: EndpointContext, tx: TransactionRow): Promise<Response> {
  const cookieHeader = request.headers.get("cookie");
  const { step, changeReady } = await flowState(ctx, tx, cookieHeader);
  if (changeReady) {
    const changed = await applyPasswordChange(request, ctx, tx);
    return changed ? toSignInPage(ctx, tx.id) : hostedError("sign_in_expired");
  }
  if (step.kind !== "done") return toSignInPage(ctx, tx.id);
  return finish(request, ctx, tx, cookieHeader);
}

async function finish(request: Request, ctx: EndpointContext, tx: TransactionRow, cookieHeader: string | null): Promise<Response> {
  let evidence = readEvidence(tx.evidence);
  // The account the user proved meets its policy: an upstream identity waiting for it is linked
  // now, and recorded as a plain federated sign-in (its upstream MFA, if any, decided nothing here).
  const link = tx.federatedLink;
  if (link && link.userId === tx.userId) {
    if (!(await linkProvedAccount(ctx, link))) return hostedError("federation_link_failed");
    evidence = withEvidence(evidence, federatedEvidence(ctx.service.clock.now(), { ...link, upstreamMfa: false }));
  }
  const stepped = await steppedUpSession(ctx, tx, cookieHeader);
  if (stepped) {
    let session: HostedSession | null = stepped;
    for (const event of evidence) session = session ? await appendEvidence(ctx, stepped.id, event) : null;
    if (!session) return hostedError("sign_in_expired");
    // A step-up is a new authentication: the session gets a new secret (session fixation).
    const rotated = await rotateSessionSecret(ctx, session);
    if (!rotated) return hostedError("sign_in_expired");
    const response = await completeTransaction(ctx, tx, rotated.session, [["Set-Cookie", rotated.cookie]]);
    await recordSignIn(ctx, request, tx, rotated.session, true);
    return response;
  }
  const { session, cookie } = await createHostedSession(ctx, {
    userId: tx.userId!,
    evidence,
    organizationId: tx.organizationId,
    connectionId: tx.connectionId,
    userAgent: request.headers.get("user-agent"),
    ip: clientAddressOf(request.headers, ctx.service.config.trustProxy),
  });
  const browser = browserMark(ctx, cookieHeader);
  const response = await completeTransaction(ctx, tx, session, [["Set-Cookie", cookie], ["Set-Cookie", browser.cookie]]);
  await recordSignIn(ctx, request, tx, session, false, browser.value);
  return response;
}

/** The audit log's record of a completed sign-in (after the transaction completed, so once per sign-in). */
async function recordSignIn(ctx: EndpointContext, request: Request, tx: TransactionRow, session: HostedSession, stepUp: boolean, browser?: string): Promise<void> {
  // A new session's browser, for the security alert of a sign-in from a new browser (lib/security-alerts).
  const seen = browser ? await noteSignInBrowser(ctx, request, session.userId, browser) : {};
  await recordAudit(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    type: "sign_in.succeeded",
    subject: session.userId,
    data: { amr: session.amr, client: tx.clientPk, step_up: stepUp, tried: tx.purpose === "try", ...seen },
    ip: clientAddressOf(request.headers, ctx.service.config.trustProxy),
    at: ctx.service.clock.now(),
  });
}
