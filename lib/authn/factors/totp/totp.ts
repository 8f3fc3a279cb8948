/**
 * Authenticator apps (TOTP, RFC 6238: HMAC-SHA-1, 6 digits, 30-second steps).
 *
 * - The seed is kept encrypted under the master key (AES-256-GCM, its own purpose).
 * - A code is accepted for the current step and one step either side (clock drift), and each step
 *   once: accepting it is a compare-and-set of the factor's last used step, so of two requests
 *   carrying the same code (a replay, a race) one wins. A step older than the last used one is
 *   refused too, as the RFC recommends.
 * - Enrolment creates an unconfirmed factor (`confirmed_at` null) whose seed the user scans, and
 *   is completed only by a valid code, which counts as used. An unconfirmed factor never verifies
 *   a sign-in; starting a new enrolment replaces the user's unconfirmed ones, completing one
 *   removes the others, and one left unconfirmed past ENROLMENT_TTL_MS cannot be completed.
 */
import { and, desc, eq, gt, inArray, isNotNull, isNull, lt, or, sql } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import { totpFactors } from "../../../../db/schema";
import { MINUTE } from "../../../clock";
import { decryptSecret, encryptSecret, newId, safeEqual } from "../../../crypto";
import type { Database } from "../../../../db/client";
import type { EndpointContext } from "../../../http/context";
import { evidenceFor } from "../../evidence";
import type { EnrolledFactor, EnrolmentSource, VerifyResult } from "../contract";
import { recordCredentialAdded } from "../enrolment";
import { ACCOUNT_FAILURES_PER_HOUR, FAILURES_PER_5_MINUTES, type GuessingLimits } from "../../../limits/declarations";
import { knownAfter } from "../limits";
import { currentLocale } from "../../../i18n/request-locale";
import { translate } from "../../../i18n/translate";

type Ctx = Pick<EndpointContext, "service" | "workspace">;

const PURPOSE = "totp-seed";
export const TOTP_PERIOD_SECONDS = 30;
const DIGITS = 6;
/** Steps either side of the current one that are accepted. */
const WINDOW = 1;
/** An unconfirmed enrolment lives as long as the sign-in that started it. */
export const ENROLMENT_TTL_MS = 10 * MINUTE;
/**
 * Guessing limits on authenticator codes, wherever one is checked (the sign-in's second factor,
 * a step-up, the portal). Only a browser whose session of the account already passed an
 * authenticator code or a passkey / security key passes the account ceiling.
 */
export const TOTP_LIMITS: GuessingLimits = {
  name: "totp",
  label: "Authenticator app code",
  perChallenge: `each ${TOTP_PERIOD_SECONDS}-second step once, ${WINDOW} step either side (replays refused, the enrolment's code included)`,
  perAccountAndAddress: FAILURES_PER_5_MINUTES,
  perAccount: ACCOUNT_FAILURES_PER_HOUR,
  knownDevice: { after: knownAfter("totp"), rate: FAILURES_PER_5_MINUTES },
};

/** The name a new authenticator app gets, in the language of the browser that adds it (lib/i18n). */
export const defaultTotpName = () => translate(currentLocale(), "credential.authenticatorApp");

/** The time step of an instant. */
export const stepAt = (at: Date) => Math.floor(at.getTime() / 1000 / TOTP_PERIOD_SECONDS);

function totpOf(seedBase32: string, issuer = "Latchkey", label = "account"): TOTP {
  return new TOTP({ issuer, label, secret: Secret.fromBase32(seedBase32), algorithm: "SHA1", digits: DIGITS, period: TOTP_PERIOD_SECONDS });
}

/** The code of a seed at a step (also what tests compute). */
export function totpCode(seedBase32: string, step: number): string {
  return totpOf(seedBase32).generate({ timestamp: step * TOTP_PERIOD_SECONDS * 1000 });
}

/** The accepted step `code` matches for this seed at `now`, or null. Every step of the window is computed, so the time does not depend on which matched. */
function matchingStep(seedBase32: string, code: string, now: Date): number | null {
  const current = stepAt(now);
  let found: number | null = null;
  for (let d = -WINDOW; d <= WINDOW; d++) {
    if (safeEqual(totpCode(seedBase32, current + d), code) && found === null) found = current + d;
  }
  return found;
}

/** A code as typed: digits only (spaces allowed between them), or null. */
function normalizeCode(input: string): string | null {
  const code = input.replace(/\s/g, "");
  return new RegExp(`^\\d{${DIGITS}}$`).test(code) ? code : null;
}

const seedOf = (ctx: Ctx, sealed: string) => decryptSecret(ctx.service.config.masterKey, sealed, PURPOSE);

export interface PendingTotp {
  factorId: string;
  /** The seed in base32, as the user types it into an app that cannot scan. */
  secret: string;
  /** The otpauth:// URI the QR code carries. */
  uri: string;
}

/** Starts an enrolment: a new unconfirmed factor with a fresh 160-bit seed, replacing the user's unconfirmed ones. */
export async function startTotpEnrolment(ctx: Ctx, userId: string): Promise<string> {
  const seed = new Secret({ size: 20 }).base32;
  const id = newId();
  const ws = ctx.workspace.id;
  await ctx.service.db.transaction(async (db) => {
    await db.delete(totpFactors).where(and(eq(totpFactors.workspaceId, ws), eq(totpFactors.userId, userId), isNull(totpFactors.confirmedAt)));
    await db.insert(totpFactors).values({
      id,
      workspaceId: ws,
      userId,
      secretEncrypted: encryptSecret(ctx.service.config.masterKey, seed, PURPOSE),
      name: defaultTotpName(),
      createdAt: ctx.service.clock.now(),
    });
  });
  return id;
}

/** The user's enrolment in progress started at or after `since` (and not yet stale), with what the page shows for it. */
export async function pendingTotpEnrolment(ctx: Ctx, userId: string, since: Date, label = { issuer: "Latchkey", account: "account" }): Promise<PendingTotp | null> {
  const now = ctx.service.clock.now();
  const after = new Date(Math.max(since.getTime() - 1, now.getTime() - ENROLMENT_TTL_MS));
  const [row] = await ctx.service.db
    .select({ id: totpFactors.id, secretEncrypted: totpFactors.secretEncrypted })
    .from(totpFactors)
    .where(and(eq(totpFactors.workspaceId, ctx.workspace.id), eq(totpFactors.userId, userId), isNull(totpFactors.confirmedAt), gt(totpFactors.createdAt, after)))
    .orderBy(desc(totpFactors.createdAt))
    .limit(1);
  if (!row) return null;
  const secret = seedOf(ctx, row.secretEncrypted);
  return { factorId: row.id, secret, uri: totpOf(secret, label.issuer, label.account).toString() };
}

/**
 * Completes the enrolment of `factorId` with a code from the app: the factor is confirmed and the
 * code's step recorded as used, in one conditional UPDATE (a second completion finds it confirmed),
 * and the addition is audited (`account_security.credential_added`, wherever it is enrolled).
 */
export async function confirmTotpEnrolment(ctx: Ctx, userId: string, factorId: string, input: string, source: EnrolmentSource): Promise<VerifyResult> {
  const code = normalizeCode(input);
  const now = ctx.service.clock.now();
  const ws = ctx.workspace.id;
  const [row] = await ctx.service.db
    .select({ secretEncrypted: totpFactors.secretEncrypted })
    .from(totpFactors)
    .where(and(eq(totpFactors.workspaceId, ws), eq(totpFactors.userId, userId), eq(totpFactors.id, factorId), isNull(totpFactors.confirmedAt)))
    .limit(1);
  if (!row) return { ok: false, reason: "expired" };
  const step = code ? matchingStep(seedOf(ctx, row.secretEncrypted), code, now) : null;
  if (step === null) return { ok: false, reason: "invalid" };
  const [confirmed] = await ctx.service.db
    .update(totpFactors)
    .set({ confirmedAt: now, lastUsedStep: step, lastUsedAt: now })
    .where(
      and(
        eq(totpFactors.workspaceId, ws),
        eq(totpFactors.userId, userId),
        eq(totpFactors.id, factorId),
        isNull(totpFactors.confirmedAt),
        gt(totpFactors.createdAt, new Date(now.getTime() - ENROLMENT_TTL_MS)),
      ),
    )
    .returning({ id: totpFactors.id });
  if (!confirmed) return { ok: false, reason: "expired" };
  // Any other unfinished enrolment of the user (another tab, an abandoned one) goes with it.
  await ctx.service.db.delete(totpFactors).where(and(eq(totpFactors.workspaceId, ws), eq(totpFactors.userId, userId), isNull(totpFactors.confirmedAt)));
  await recordCredentialAdded(ctx, userId, { kind: "totp", factorId: confirmed.id }, source);
  return { ok: true, userId, evidence: evidenceFor("totp", now, confirmed.id) };
}

/**
 * Verifies a code against the user's confirmed authenticator apps. A matching step is taken with
 * `UPDATE ... SET last_used_step = $step WHERE ... AND (last_used_step IS NULL OR last_used_step < $step) RETURNING`:
 * a replay of the step (or of an earlier one) updates nothing and is refused like a wrong code.
 */
export async function verifyTotp(ctx: Ctx, userId: string, input: string): Promise<VerifyResult> {
  const code = normalizeCode(input);
  if (!code) return { ok: false, reason: "invalid" };
  const now = ctx.service.clock.now();
  const ws = ctx.workspace.id;
  const factors = await ctx.service.db
    .select({ id: totpFactors.id, secretEncrypted: totpFactors.secretEncrypted })
    .from(totpFactors)
    .where(and(eq(totpFactors.workspaceId, ws), eq(totpFactors.userId, userId), isNotNull(totpFactors.confirmedAt)));
  for (const factor of factors) {
    const step = matchingStep(seedOf(ctx, factor.secretEncrypted), code, now);
    if (step === null) continue;
    const [taken] = await ctx.service.db
      .update(totpFactors)
      .set({ lastUsedStep: step, lastUsedAt: now })
      .where(
        and(
          eq(totpFactors.workspaceId, ws),
          eq(totpFactors.id, factor.id),
          isNotNull(totpFactors.confirmedAt),
          or(isNull(totpFactors.lastUsedStep), lt(totpFactors.lastUsedStep, step)),
        ),
      )
      .returning({ id: totpFactors.id });
    if (taken) return { ok: true, userId, evidence: evidenceFor("totp", now, taken.id) };
  }
  return { ok: false, reason: "invalid" };
}

/** The user's confirmed authenticator apps, newest first. */
export async function listTotpFactors(ctx: Ctx, userId: string): Promise<EnrolledFactor<"totp">[]> {
  const rows = await ctx.service.db
    .select()
    .from(totpFactors)
    .where(and(eq(totpFactors.workspaceId, ctx.workspace.id), eq(totpFactors.userId, userId), isNotNull(totpFactors.confirmedAt)))
    .orderBy(sql`${totpFactors.createdAt} desc`);
  return rows.map((t) => ({ kind: "totp", id: t.id, name: t.name, createdAt: t.createdAt, lastUsedAt: t.lastUsedAt }));
}

/** Which of `userIds` have a confirmed authenticator app. */
export async function totpHolders(db: Database, workspaceId: string, userIds: string[]): Promise<{ userId: string; kind: "totp" }[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .selectDistinct({ userId: totpFactors.userId })
    .from(totpFactors)
    .where(and(eq(totpFactors.workspaceId, workspaceId), inArray(totpFactors.userId, userIds), isNotNull(totpFactors.confirmedAt)));
  return rows.map((r) => ({ userId: r.userId, kind: "totp" }));
}

/** Removes one of the user's authenticator apps; true when it was there. */
export async function removeTotpFactor(ctx: Ctx, userId: string, _kind: "totp", id: string): Promise<boolean> {
  const gone = await ctx.service.db
    .delete(totpFactors)
    .where(and(eq(totpFactors.workspaceId, ctx.workspace.id), eq(totpFactors.userId, userId), eq(totpFactors.id, id)))
    .returning({ id: totpFactors.id });
  return gone.length > 0;
}

/** Drops the user's unfinished authenticator app ("Cancel"). */
export async function cancelTotpEnrolment(ctx: Ctx, userId: string): Promise<void> {
  await ctx.service.db.delete(totpFactors).where(and(eq(totpFactors.workspaceId, ctx.workspace.id), eq(totpFactors.userId, userId), isNull(totpFactors.confirmedAt)));
}
