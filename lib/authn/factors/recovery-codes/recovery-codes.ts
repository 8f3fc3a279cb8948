/**
 * Recovery codes: ten single-use codes, shown once, that stand in for a lost second factor.
 *
 * A code reads `abcd-efghijkl-mnopqrst`: the first group is a public lookup part that finds its
 * row among the user's codes; the other two are the secret (16 base32 characters, 80 bits), stored
 * as an argon2id hash. An attempt so costs one argon2id verification, not ten. A code is used once
 * under races: one conditional UPDATE ... WHERE used_at IS NULL RETURNING. Generating a new set
 * deletes the old one in the same transaction.
 */
import { and, count, eq, inArray, isNull, sql } from "drizzle-orm";
import { recoveryCodes } from "../../../../db/schema";
import { newId, randomToken } from "../../../crypto";
import type { Database } from "../../../../db/client";
import type { EndpointContext } from "../../../http/context";
import { recordAudit } from "../../../audit/events";
import { evidenceFor } from "../../evidence";
import { decoyHash, hashPassword, verifyPassword } from "../../password";
import type { EnrolledFactor, EnrolmentSource, VerifyResult } from "../contract";
import { ACCOUNT_FAILURES_PER_HOUR, FAILURES_PER_5_MINUTES, type GuessingLimits } from "../../../limits/declarations";
import { knownAfter } from "../limits";

type Ctx = Pick<EndpointContext, "service" | "workspace">;

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
const LOOKUP_LENGTH = 4;
/** 16 characters of a 32-letter alphabet: 80 bits. */
const SECRET_LENGTH = 16;
/** Longest input worth reading (a code with spaces or dashes around its groups). */
const MAX_INPUT = 64;

/**
 * Guessing limits on recovery codes, wherever one is checked. Only a browser whose session of the
 * account already used a recovery code or a passkey / security key passes the account ceiling.
 */
export const RECOVERY_CODE_LIMITS: GuessingLimits = {
  name: "recovery-code",
  label: "Recovery code",
  perChallenge: "each code once",
  perAccountAndAddress: FAILURES_PER_5_MINUTES,
  perAccount: ACCOUNT_FAILURES_PER_HOUR,
  knownDevice: { after: knownAfter("recovery_code"), rate: FAILURES_PER_5_MINUTES },
};

/** `n` characters of the alphabet, uniform (a byte's low 5 bits). */
function randomChars(n: number): string {
  const bytes = Buffer.from(randomToken(n), "base64url");
  let out = "";
  for (let i = 0; i < n; i++) out += ALPHABET[bytes[i]! & 31];
  return out;
}

/** The code as typed, in its canonical parts; null when it cannot be a recovery code. */
export function parseRecoveryCode(input: string): { lookup: string; secret: string } | null {
  if (input.length > MAX_INPUT) return null;
  const compact = input.toLowerCase().replace(/[\s-]/g, "");
  if (compact.length !== LOOKUP_LENGTH + SECRET_LENGTH || ![...compact].every((c) => ALPHABET.includes(c))) return null;
  return { lookup: compact.slice(0, LOOKUP_LENGTH), secret: compact.slice(LOOKUP_LENGTH) };
}

function formatCode(lookup: string, secret: string): string {
  return `${lookup}-${secret.slice(0, 8)}-${secret.slice(8)}`;
}

/**
 * A new set of codes for the user, replacing (voiding) any earlier set. Returns the codes in
 * clear: the caller shows them once; only their hashes are kept. Audited here, whichever flow
 * generates them (`account_security.recovery_codes_generated`, with where: the sign-in that
 * enrolled a first second factor, or the portal session).
 */
export async function generateRecoveryCodes(ctx: Ctx, userId: string, source: EnrolmentSource): Promise<string[]> {
  const lookups = new Set<string>();
  while (lookups.size < RECOVERY_CODE_COUNT) lookups.add(randomChars(LOOKUP_LENGTH));
  const codes = [...lookups].map((lookup) => ({ lookup, secret: randomChars(SECRET_LENGTH) }));
  // Hashed one after the other: the argon2 pool is shared with every sign-in.
  const hashes: string[] = [];
  for (const c of codes) hashes.push(await hashPassword(c.secret));
  const now = ctx.service.clock.now();
  const ws = ctx.workspace.id;
  await ctx.service.db.transaction(async (db) => {
    await db.delete(recoveryCodes).where(and(eq(recoveryCodes.workspaceId, ws), eq(recoveryCodes.userId, userId)));
    await db.insert(recoveryCodes).values(codes.map((c, i) => ({ id: newId(), workspaceId: ws, userId, lookup: c.lookup, codeHash: hashes[i]!, createdAt: now })));
  });
  await recordAudit(ctx.service.db, {
    workspaceId: ws,
    type: "account_security.recovery_codes_generated",
    actor: userId,
    subject: userId,
    data: { count: codes.length, ...source.context },
    ip: source.ip,
    at: now,
  });
  return codes.map((c) => formatCode(c.lookup, c.secret));
}

/** How many unused codes the user has. */
export async function recoveryCodesLeft(ctx: Ctx, userId: string): Promise<number> {
  const [row] = await ctx.service.db
    .select({ n: count() })
    .from(recoveryCodes)
    .where(and(eq(recoveryCodes.workspaceId, ctx.workspace.id), eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt)));
  return Number(row?.n ?? 0);
}

/**
 * Checks a recovery code of the user and uses it up. Unknown, wrong and used codes answer alike
 * (`invalid`), after one argon2id verification each, so neither the answer nor its time tells
 * which part was wrong.
 */
export async function useRecoveryCode(ctx: Ctx, userId: string, input: string, ip: string | null = null): Promise<VerifyResult> {
  const parsed = parseRecoveryCode(input);
  const ws = ctx.workspace.id;
  const [row] = parsed
    ? await ctx.service.db
        .select({ id: recoveryCodes.id, codeHash: recoveryCodes.codeHash })
        .from(recoveryCodes)
        .where(and(eq(recoveryCodes.workspaceId, ws), eq(recoveryCodes.userId, userId), eq(recoveryCodes.lookup, parsed.lookup), isNull(recoveryCodes.usedAt)))
        .limit(1)
    : [];
  const ok = await verifyPassword(row?.codeHash ?? (await decoyHash()), parsed?.secret ?? "");
  if (!row || !ok) return { ok: false, reason: "invalid" };
  const now = ctx.service.clock.now();
  const [used] = await ctx.service.db
    .update(recoveryCodes)
    .set({ usedAt: now })
    .where(and(eq(recoveryCodes.workspaceId, ws), eq(recoveryCodes.id, row.id), isNull(recoveryCodes.usedAt)))
    .returning({ id: recoveryCodes.id });
  if (!used) return { ok: false, reason: "invalid" };
  const remaining = await recoveryCodesLeft(ctx, userId);
  await recordAudit(ctx.service.db, { workspaceId: ws, type: "recovery_code.used", subject: userId, data: { remaining }, ip, at: now });
  return { ok: true, userId, evidence: evidenceFor("recovery_code", now) };
}

/** The user's set of codes as one held factor (named by the user id): how many remain; none when the user has no set. */
export async function listRecoveryCodes(ctx: Ctx, userId: string): Promise<EnrolledFactor<"recovery_code">[]> {
  const [set] = await ctx.service.db
    .select({
      total: count(),
      remaining: sql<number>`count(*) filter (where ${recoveryCodes.usedAt} is null)`,
      createdAt: sql<Date | string>`min(${recoveryCodes.createdAt})`,
      lastUsedAt: sql<Date | string | null>`max(${recoveryCodes.usedAt})`,
    })
    .from(recoveryCodes)
    .where(and(eq(recoveryCodes.workspaceId, ctx.workspace.id), eq(recoveryCodes.userId, userId)));
  if (!set || Number(set.total) === 0) return [];
  const date = (v: Date | string | null) => (v === null ? null : new Date(v));
  return [{ kind: "recovery_code", id: userId, name: "Recovery codes", createdAt: date(set.createdAt)!, lastUsedAt: date(set.lastUsedAt), remaining: Number(set.remaining) }];
}

/** Which of `userIds` have an unused recovery code. */
export async function recoveryCodeHolders(db: Database, workspaceId: string, userIds: string[]): Promise<{ userId: string; kind: "recovery_code" }[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .selectDistinct({ userId: recoveryCodes.userId })
    .from(recoveryCodes)
    .where(and(eq(recoveryCodes.workspaceId, workspaceId), inArray(recoveryCodes.userId, userIds), isNull(recoveryCodes.usedAt)));
  return rows.map((r) => ({ userId: r.userId, kind: "recovery_code" }));
}

/** Removes the user's whole set of codes; true when there was one. */
export async function removeRecoveryCodes(ctx: Ctx, userId: string): Promise<boolean> {
  const gone = await ctx.service.db
    .delete(recoveryCodes)
    .where(and(eq(recoveryCodes.workspaceId, ctx.workspace.id), eq(recoveryCodes.userId, userId)))
    .returning({ id: recoveryCodes.id });
  return gone.length > 0;
}
