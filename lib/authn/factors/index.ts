/**
 * The user's enrolled factors, across the factor modules: the summary the policy decides on
 * (lib/authn/policy.ts) and the list the console and the portal show.
 */
import { and, count, eq, isNotNull, isNull, sql } from "drizzle-orm";
import { recoveryCodes, totpFactors, users, webauthnCredentials } from "../../../db/schema";
import type { EndpointContext } from "../../http/context";
import type { EnrolledSummary } from "../policy";
import type { EnrolledFactor } from "./contract";

type Ctx = Pick<EndpointContext, "service" | "workspace">;

export async function enrolledSummary(ctx: Ctx, userId: string): Promise<EnrolledSummary | null> {
  const ws = ctx.workspace.id;
  const db = ctx.service.db;
  const [[user], webauthn, [totp], [recovery]] = await Promise.all([
    db.select({ hasPassword: isNotNull(users.passwordHash) }).from(users).where(and(eq(users.workspaceId, ws), eq(users.id, userId))).limit(1),
    db
      .select({ kind: webauthnCredentials.kind, n: count() })
      .from(webauthnCredentials)
      .where(and(eq(webauthnCredentials.workspaceId, ws), eq(webauthnCredentials.userId, userId), isNull(webauthnCredentials.flaggedAt)))
      .groupBy(webauthnCredentials.kind),
    db
      .select({ n: count() })
      .from(totpFactors)
      .where(and(eq(totpFactors.workspaceId, ws), eq(totpFactors.userId, userId), isNotNull(totpFactors.confirmedAt))),
    db
      .select({ n: count() })
      .from(recoveryCodes)
      .where(and(eq(recoveryCodes.workspaceId, ws), eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt))),
  ]);
  if (!user) return null;
  const of = (kind: string) => Number(webauthn.find((w) => w.kind === kind)?.n ?? 0);
  return {
    hasPassword: Boolean(user.hasPassword),
    passkeys: of("passkey"),
    securityKeys: of("security_key"),
    totp: Number(totp?.n ?? 0),
    recoveryCodesLeft: Number(recovery?.n ?? 0),
  };
}

/** Every enrolled factor of the user (confirmed ones only), newest first within each kind. */
export async function listFactors(ctx: Ctx, userId: string): Promise<EnrolledFactor[]> {
  const ws = ctx.workspace.id;
  const db = ctx.service.db;
  const [webauthn, totp, [recovery]] = await Promise.all([
    db
      .select()
      .from(webauthnCredentials)
      .where(and(eq(webauthnCredentials.workspaceId, ws), eq(webauthnCredentials.userId, userId)))
      .orderBy(sql`${webauthnCredentials.createdAt} desc`),
    db
      .select()
      .from(totpFactors)
      .where(and(eq(totpFactors.workspaceId, ws), eq(totpFactors.userId, userId), isNotNull(totpFactors.confirmedAt)))
      .orderBy(sql`${totpFactors.createdAt} desc`),
    db
      .select({
        total: count(),
        remaining: sql<number>`count(*) filter (where ${recoveryCodes.usedAt} is null)`,
        createdAt: sql<Date | string>`min(${recoveryCodes.createdAt})`,
        lastUsedAt: sql<Date | string | null>`max(${recoveryCodes.usedAt})`,
      })
      .from(recoveryCodes)
      .where(and(eq(recoveryCodes.workspaceId, ws), eq(recoveryCodes.userId, userId))),
  ]);
  const out: EnrolledFactor[] = [
    ...webauthn.map((w) => ({ kind: w.kind, id: w.id, name: w.name, createdAt: w.createdAt, lastUsedAt: w.lastUsedAt, flagged: w.flaggedAt !== null })),
    ...totp.map((t) => ({ kind: "totp" as const, id: t.id, name: t.name, createdAt: t.createdAt, lastUsedAt: t.lastUsedAt })),
  ];
  if (recovery && Number(recovery.total) > 0) {
    const date = (v: Date | string | null) => (v === null ? null : new Date(v));
    out.push({
      kind: "recovery_code",
      id: userId,
      name: "Recovery codes",
      createdAt: date(recovery.createdAt)!,
      lastUsedAt: date(recovery.lastUsedAt),
      remaining: Number(recovery.remaining),
    });
  }
  return out;
}

/** Removes one enrolled factor of the user (a recovery-code "factor" is the whole set). True when something was removed. */
export async function removeFactor(ctx: Ctx, userId: string, kind: EnrolledFactor["kind"], id: string): Promise<boolean> {
  const ws = ctx.workspace.id;
  const db = ctx.service.db;
  if (kind === "recovery_code") {
    const gone = await db.delete(recoveryCodes).where(and(eq(recoveryCodes.workspaceId, ws), eq(recoveryCodes.userId, userId))).returning({ id: recoveryCodes.id });
    return gone.length > 0;
  }
  if (kind === "totp") {
    const gone = await db.delete(totpFactors).where(and(eq(totpFactors.workspaceId, ws), eq(totpFactors.userId, userId), eq(totpFactors.id, id))).returning({ id: totpFactors.id });
    return gone.length > 0;
  }
  const gone = await db
    .delete(webauthnCredentials)
    .where(and(eq(webauthnCredentials.workspaceId, ws), eq(webauthnCredentials.userId, userId), eq(webauthnCredentials.id, id), eq(webauthnCredentials.kind, kind)))
    .returning({ id: webauthnCredentials.id });
  return gone.length > 0;
}
