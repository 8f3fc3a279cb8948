/**
 * The email one-time code (lib/authn/factors/contract.ts: challenge → verify → evidence; nothing
 * to enrol, the account's own address is the factor).
 *
 * - A code is 6 random digits, valid 10 minutes, for at most 5 attempts (then it is dead, even if
 *   the next guess is right), used once.
 * - At rest only a keyed hash: HMAC-SHA-256 under a subkey of the master key, over the challenge
 *   id, what it is bound to (the pending sign-in or sign-up) and the address with the code. Six
 *   digits are a million values: a plain hash would give them up offline in a moment.
 * - Bound to one pending sign-in (or sign-up) and one address: a new code for the same sign-in
 *   replaces the previous one, whatever address it named.
 * - Verified by one conditional UPDATE that counts the attempt and consumes a right code
 *   (`consumed_at` set only while it was null, unexpired and under the attempt limit), so of
 *   parallel uses of one code exactly one succeeds.
 *
 * Abuse limits (docs/sign-in.md "Email one-time codes"), declared below and enforced by
 * ./limits.ts: a resend cooldown per address, sends per address and per client address
 * (EMAIL_CODE_SENDING), and guesses per address and client address and per address
 * (EMAIL_CODE_GUESSING). Addresses are counted as typed, registered or not.
 */
import { randomInt } from "node:crypto";
import { and, desc, eq, gt, isNull, lt, sql } from "drizzle-orm";
import { factorChallenges, users } from "../../../../db/schema";
import { addMs, MINUTE, SECOND } from "../../../clock";
import { deriveKey, hmacBase64Url, newId, randomToken } from "../../../crypto";
import type { EndpointContext } from "../../../http/context";
import { evidenceFor, type Evidence } from "../../evidence";
import { ACCOUNT_FAILURES_PER_HOUR, FAILURES_PER_5_MINUTES, type GuessingLimits } from "../../../limits/declarations";
import { factorGate, knownAfter } from "../limits";
import type { ChallengeBinding, VerifyFailure } from "../contract";

export const EMAIL_CODE_TTL_MS = 10 * MINUTE;
export const EMAIL_CODE_MAX_ATTEMPTS = 5;
export const EMAIL_CODE_DIGITS = 6;
/** Between two codes sent to one address. */
export const RESEND_COOLDOWN_MS = 30 * SECOND;
/** Codes sent per address, and per client address, in this window. */
export const SEND_WINDOW_MS = 15 * MINUTE;
export const SENDS_PER_ADDRESS = 5;
export const SENDS_PER_CLIENT_ADDRESS = 20;

/**
 * Guesses at email codes, wherever one is checked (sign-in, sign-up, the portal). Only a browser
 * whose session of the account already passed an email code or a passkey / security key passes
 * the account ceiling.
 */
export const EMAIL_CODE_GUESSING: GuessingLimits = {
  name: "email-otp",
  label: "Email code",
  perChallenge: `${EMAIL_CODE_MAX_ATTEMPTS} answers per code (then it is dead, even for the right code), ${EMAIL_CODE_TTL_MS / MINUTE} minutes, once`,
  perAccountAndAddress: FAILURES_PER_5_MINUTES,
  perAccount: ACCOUNT_FAILURES_PER_HOUR,
  knownDevice: { after: knownAfter("email_otp"), rate: FAILURES_PER_5_MINUTES },
};

/**
 * Codes sent, wherever one is asked for (sign-in, sign-up, the portal): per client address, and per
 * address from every client address. The same browsers as for guessing pass the per-address limit.
 */
export const EMAIL_CODE_SENDING: GuessingLimits = {
  name: "email-send",
  label: "Email code sent",
  perChallenge: `one per address per ${RESEND_COOLDOWN_MS / SECOND} seconds`,
  perAddress: { times: SENDS_PER_CLIENT_ADDRESS, scale: null, windowMs: SEND_WINDOW_MS },
  perAccount: { times: SENDS_PER_ADDRESS, scale: null, windowMs: SEND_WINDOW_MS },
  knownDevice: { after: knownAfter("email_otp"), rate: { times: SENDS_PER_ADDRESS, scale: null, windowMs: SEND_WINDOW_MS } },
};

type Ctx = Pick<EndpointContext, "service" | "workspace">;

/** Six uniformly random digits. */
export function newEmailCode(): string {
  return String(randomInt(0, 10 ** EMAIL_CODE_DIGITS)).padStart(EMAIL_CODE_DIGITS, "0");
}

function codeHash(ctx: Ctx, challengeId: string, binding: ChallengeBinding, address: string, code: string): string {
  const key = deriveKey(ctx.service.config.masterKey, "email-otp");
  return hmacBase64Url(key, [ctx.workspace.id, challengeId, binding.purpose, binding.bindingId, address, code].join("\u0000"));
}

/** The account an address signs in to, when it has one that may sign in. */
export async function activeUserByAddress(ctx: Ctx, address: string): Promise<{ id: string; emailVerified: boolean } | null> {
  const [user] = await ctx.service.db
    .select({ id: users.id, emailVerified: users.emailVerified, status: users.status })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.emailNormalized, address)))
    .limit(1);
  return user && user.status === "active" ? { id: user.id, emailVerified: user.emailVerified } : null;
}

/** A code that reached its inbox proves the address: the account's email becomes verified. */
export async function markEmailVerified(ctx: Ctx, userId: string): Promise<void> {
  await ctx.service.db
    .update(users)
    .set({ emailVerified: true, updatedAt: ctx.service.clock.now() })
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, userId), eq(users.emailVerified, false)));
}

export type SendGate =
  | { allowed: false; reason: "cooldown" | "limited" }
  | {
      allowed: true;
      /** Counts this send against every limit it was checked under. */
      recordSend(): Promise<void>;
    };

/**
 * Whether a code may be sent to `address` now. The cooldown is read from the codes themselves
 * (the newest one sent to the address); the rest is EMAIL_CODE_SENDING. The per-address limit
 * must not lock the owner out: a browser whose session of this account passed an email code (or
 * stronger) passes it, limited per device instead; otherwise it lifts when its window ends.
 */
export async function sendGate(ctx: EndpointContext, request: Request, address: string): Promise<SendGate> {
  const { clock, db } = ctx.service;
  const t = factorChallenges;
  const [recent] = await db
    .select({ id: t.id })
    .from(t)
    .where(and(eq(t.workspaceId, ctx.workspace.id), eq(t.address, address), eq(t.kind, "email_otp"), gt(t.createdAt, new Date(clock.now().getTime() - RESEND_COOLDOWN_MS))))
    .limit(1);
  if (recent) return { allowed: false, reason: "cooldown" };
  const gate = await factorGate(ctx, request, EMAIL_CODE_SENDING, address);
  if (!gate.allowed) return { allowed: false, reason: "limited" };
  return { allowed: true, recordSend: gate.record };
}

export interface IssueInput {
  address: string;
  /** The account the code signs in to; null for a new address (sign-up) or an unknown one. */
  userId: string | null;
  /**
   * False when no message carries a code (an address that has no account at sign-in): the
   * challenge is stored all the same, so the page and the limits behave exactly alike, but its
   * hash is of a random value no code matches.
   */
  deliverable: boolean;
}

/** Issues a code bound to `binding` and `address`, replacing every earlier code of the binding. Returns the code to send, or null when not deliverable. */
export async function issueEmailCode(ctx: Ctx, binding: ChallengeBinding, input: IssueInput): Promise<string | null> {
  const now = ctx.service.clock.now();
  const t = factorChallenges;
  await cancelEmailCodes(ctx, binding.bindingId);
  const id = newId();
  const code = newEmailCode();
  const secret = codeHash(ctx, id, binding, input.address, input.deliverable ? code : randomToken(32));
  await ctx.service.db.insert(t).values({
    id,
    workspaceId: ctx.workspace.id,
    kind: "email_otp",
    purpose: binding.purpose,
    bindingId: binding.bindingId,
    userId: input.userId,
    address: input.address,
    secret,
    attempts: 0,
    createdAt: now,
    expiresAt: addMs(now, EMAIL_CODE_TTL_MS),
  });
  return input.deliverable ? code : null;
}

/** Ends every unused code bound to `bindingId` (any purpose): a new code, or the user chose another way. */
export async function cancelEmailCodes(ctx: Ctx, bindingId: string): Promise<void> {
  const t = factorChallenges;
  await ctx.service.db
    .update(t)
    .set({ consumedAt: ctx.service.clock.now() })
    .where(and(eq(t.workspaceId, ctx.workspace.id), eq(t.kind, "email_otp"), eq(t.bindingId, bindingId), isNull(t.consumedAt)));
}

export interface PendingEmailCode {
  address: string;
  /** Expired or out of attempts: the user must ask for a new one. */
  dead: boolean;
}

/** The latest unused code of the binding (live or dead), which the page asks for; null when there is none. */
export async function pendingEmailCode(ctx: Ctx, binding: ChallengeBinding): Promise<PendingEmailCode | null> {
  const row = await latest(ctx, binding);
  if (!row) return null;
  const dead = row.expiresAt.getTime() <= ctx.service.clock.now().getTime() || row.attempts >= EMAIL_CODE_MAX_ATTEMPTS;
  return { address: row.address ?? "", dead };
}

/**
 * What a code posted where no code is asked for (a later step of the sign-in) answers, unread and
 * uncounted: "expired" when the binding has no live code (used, as by a parallel post that won,
 * dead, or never sent), as verifyEmailCode would say of it; otherwise "invalid", like a wrong code.
 */
export async function unreadCodeFailure(ctx: Ctx, binding: ChallengeBinding): Promise<VerifyFailure> {
  const pending = await pendingEmailCode(ctx, binding);
  return pending && !pending.dead ? "invalid" : "expired";
}

async function latest(ctx: Ctx, binding: ChallengeBinding) {
  const t = factorChallenges;
  const [row] = await ctx.service.db
    .select({ id: t.id, address: t.address, expiresAt: t.expiresAt, attempts: t.attempts })
    .from(t)
    .where(
      and(eq(t.workspaceId, ctx.workspace.id), eq(t.kind, "email_otp"), eq(t.purpose, binding.purpose), eq(t.bindingId, binding.bindingId), isNull(t.consumedAt)),
    )
    .orderBy(desc(t.createdAt))
    .limit(1);
  return row ?? null;
}

export type EmailVerifyResult =
  | { ok: true; userId: string | null; address: string; evidence: Evidence }
  | { ok: false; reason: "invalid" | "expired" };

/**
 * Checks `input` against the binding's code: one attempt. A right code is consumed; a wrong one
 * counts, and the fifth wrong one kills the code. A guess over the guessing limits is not checked
 * and answers like a wrong code.
 */
export async function verifyEmailCode(ctx: EndpointContext, request: Request, binding: ChallengeBinding, input: string | null): Promise<EmailVerifyResult> {
  const code = (input ?? "").replace(/[\s-]/g, "");
  const pending = await latest(ctx, binding);
  if (!pending || !pending.address) return { ok: false, reason: "expired" };
  // Not a code at all: nothing to count against the code, and no guess was made.
  if (!new RegExp(`^\\d{${EMAIL_CODE_DIGITS}}$`).test(code)) return { ok: false, reason: "invalid" };

  const gate = await factorGate(ctx, request, EMAIL_CODE_GUESSING, pending.address);
  if (!gate.allowed) return { ok: false, reason: "invalid" };

  const now = ctx.service.clock.now();
  const t = factorChallenges;
  const hash = codeHash(ctx, pending.id, binding, pending.address, code);
  const [row] = await ctx.service.db
    .update(t)
    .set({ attempts: sql`${t.attempts} + 1`, consumedAt: sql`case when ${t.secret} = ${hash} then ${now.toISOString()}::timestamptz else null end` })
    .where(and(eq(t.id, pending.id), eq(t.workspaceId, ctx.workspace.id), isNull(t.consumedAt), gt(t.expiresAt, now), lt(t.attempts, EMAIL_CODE_MAX_ATTEMPTS)))
    .returning({ consumedAt: t.consumedAt, attempts: t.attempts, userId: t.userId, address: t.address });
  if (!row) return { ok: false, reason: "expired" };
  if (!row.consumedAt) {
    await gate.record();
    return { ok: false, reason: row.attempts >= EMAIL_CODE_MAX_ATTEMPTS ? "expired" : "invalid" };
  }
  // userId is null for a sign-up's new address: the caller creates the account.
  return { ok: true, userId: row.userId, address: row.address!, evidence: evidenceFor("email_otp", now) };
}

export type EmailCodeFactorResult = { ok: true; userId: string; evidence: Evidence } | { ok: false; reason: "invalid" | "expired" };

/**
 * The email code as a factor of an account: the one verification the sign-in's first factor and
 * the portal's primary verification call. The code is checked once under its guessing gate
 * (`verifyEmailCode`: a wrong one recorded on the gate); then the account is judged: the code must
 * have been sent for an account that still holds the address and is still active (disabled or
 * readdressed since it was sent: `expired`, like a dead code). A right code proves the mailbox, so
 * the address is marked verified.
 */
export async function verifyEmailCodeFactor(ctx: EndpointContext, request: Request, binding: ChallengeBinding, input: string | null): Promise<EmailCodeFactorResult> {
  const result = await verifyEmailCode(ctx, request, binding, input);
  if (!result.ok) return result;
  const user = result.userId ? await activeUserByAddress(ctx, result.address) : null;
  if (!user || user.id !== result.userId) return { ok: false, reason: "expired" };
  await markEmailVerified(ctx, user.id);
  return { ok: true, userId: user.id, evidence: result.evidence };
}
