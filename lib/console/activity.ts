/**
 * The workspace overview's activity, per day over the last 30 days, from what the service already
 * records: sign-ins (hosted sessions created), failed sign-ins (audit `sign_in.failed`), token
 * sets issued (refresh tokens written: each code exchange and each refresh issues one; workload
 * tokens are kept only an hour past expiry, so they are not counted), refresh-token reuse alerts
 * (audit `refresh.reuse_detected`); and factor adoption now (users with each factor, out of all).
 * Days are UTC days: the workspace's reporting time zone is UTC.
 */
import { and, count, countDistinct, eq, gte, isNotNull, isNull, lt, sql, type SQL } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import { auditEvents, hostedSessions, recoveryCodes, refreshTokens, totpFactors, users, webauthnCredentials } from "../../db/schema";
import type { AuditEventType } from "../audit/catalogue";
import { DAY } from "../clock";
import type { Service } from "../service";

export const ACTIVITY_DAYS = 30;

export interface DayCount {
  /** YYYY-MM-DD, UTC. */
  day: string;
  count: number;
}

export interface ActivitySeries {
  key: "signIns" | "failedSignIns" | "tokensIssued" | "reuseAlerts";
  label: string;
  days: DayCount[];
  total: number;
}

export interface FactorAdoption {
  users: number;
  passkey: number;
  totp: number;
  securityKey: number;
  recoveryCodes: number;
}

export interface WorkspaceActivity {
  /** First and last day shown (UTC), inclusive. */
  from: string;
  to: string;
  series: ActivitySeries[];
  factors: FactorAdoption;
}

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

/** The 30 UTC days ending with today's, oldest first. */
export function activityDays(now: Date): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: ACTIVITY_DAYS }, (_, i) => dayOf(new Date(today - (ACTIVITY_DAYS - 1 - i) * DAY)));
}

async function perDay(service: Service, table: PgTable, createdAt: PgColumn, where: SQL | undefined, start: Date, end: Date): Promise<Map<string, number>> {
  const day = sql<string>`to_char(${createdAt} at time zone 'UTC', 'YYYY-MM-DD')`;
  const rows = await service.db
    .select({ day, n: count() })
    .from(table)
    .where(and(where, gte(createdAt, start), lt(createdAt, end)))
    .groupBy(day);
  return new Map(rows.map((r) => [r.day, Number(r.n)]));
}

export async function workspaceActivity(service: Service, workspaceId: string): Promise<WorkspaceActivity> {
  const now = service.clock.now();
  const days = activityDays(now);
  const start = new Date(`${days[0]}T00:00:00Z`);
  const end = new Date(new Date(`${days[days.length - 1]}T00:00:00Z`).getTime() + DAY);
  const audit = (type: AuditEventType) => perDay(service, auditEvents, auditEvents.createdAt, and(eq(auditEvents.workspaceId, workspaceId), eq(auditEvents.type, type)), start, end);
  const [signIns, failed, tokens, reuse, factors] = await Promise.all([
    perDay(service, hostedSessions, hostedSessions.createdAt, eq(hostedSessions.workspaceId, workspaceId), start, end),
    audit("sign_in.failed"),
    perDay(service, refreshTokens, refreshTokens.createdAt, eq(refreshTokens.workspaceId, workspaceId), start, end),
    audit("refresh.reuse_detected"),
    factorAdoption(service, workspaceId),
  ]);
  const series = (key: ActivitySeries["key"], label: string, counts: Map<string, number>): ActivitySeries => {
    const out = days.map((day) => ({ day, count: counts.get(day) ?? 0 }));
    return { key, label, days: out, total: out.reduce((s, d) => s + d.count, 0) };
  };
  return {
    from: days[0],
    to: days[days.length - 1],
    series: [
      series("signIns", "Sign-ins", signIns),
      series("failedSignIns", "Failed sign-ins", failed),
      series("tokensIssued", "Tokens issued", tokens),
      series("reuseAlerts", "Refresh-token reuse alerts", reuse),
    ],
    factors,
  };
}

/** How many of the workspace's users hold each factor now (confirmed TOTP, unused recovery codes). */
export async function factorAdoption(service: Service, workspaceId: string): Promise<FactorAdoption> {
  const db = service.db;
  const webauthn = (kind: "passkey" | "security_key") =>
    db
      .select({ n: countDistinct(webauthnCredentials.userId) })
      .from(webauthnCredentials)
      .where(and(eq(webauthnCredentials.workspaceId, workspaceId), eq(webauthnCredentials.kind, kind)));
  const [[u], [passkey], [securityKey], [totp], [codes]] = await Promise.all([
    db.select({ n: count() }).from(users).where(eq(users.workspaceId, workspaceId)),
    webauthn("passkey"),
    webauthn("security_key"),
    db
      .select({ n: countDistinct(totpFactors.userId) })
      .from(totpFactors)
      .where(and(eq(totpFactors.workspaceId, workspaceId), isNotNull(totpFactors.confirmedAt))),
    db
      .select({ n: countDistinct(recoveryCodes.userId) })
      .from(recoveryCodes)
      .where(and(eq(recoveryCodes.workspaceId, workspaceId), isNull(recoveryCodes.usedAt))),
  ]);
  return { users: Number(u?.n ?? 0), passkey: Number(passkey?.n ?? 0), securityKey: Number(securityKey?.n ?? 0), totp: Number(totp?.n ?? 0), recoveryCodes: Number(codes?.n ?? 0) };
}
