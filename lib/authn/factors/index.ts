/**
 * The user's enrolled factors, across the factors of ./registry.ts: the summary the policy decides
 * on (lib/authn/policy.ts) and the list the console and the portal show.
 */
import { and, eq, isNotNull } from "drizzle-orm";
import { users } from "../../../db/schema";
import type { EndpointContext } from "../../http/context";
import type { EnrolledSummary } from "../policy";
import type { EnrolledFactor } from "./contract";
import { FACTORS, HELD_KINDS, type HeldKind } from "./registry";

type Ctx = Pick<EndpointContext, "service" | "workspace" | "origin">;

/** A factor the user holds, as the console and the portal list it. */
export type HeldFactor = EnrolledFactor<HeldKind>;

export async function enrolledSummary(ctx: Ctx, userId: string): Promise<EnrolledSummary | null> {
  const [[user], held] = await Promise.all([
    ctx.service.db
      .select({ hasPassword: isNotNull(users.passwordHash) })
      .from(users)
      .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, userId)))
      .limit(1),
    listFactors(ctx, userId),
  ]);
  if (!user) return null;
  // A flagged credential never verifies; a recovery-code set counts its unused codes.
  const usable = (kind: HeldKind) => held.filter((f) => f.kind === kind && !f.flagged).reduce((n, f) => n + (f.remaining ?? 1), 0);
  return { hasPassword: Boolean(user.hasPassword), ...counts(usable) };
}

const counts = (count: (kind: HeldKind) => number) => Object.fromEntries(HELD_KINDS.map((k) => [k, count(k)])) as Record<HeldKind, number>;

/** The summary of an account that has nothing: no password, nothing held. */
export const NOTHING_ENROLLED: EnrolledSummary = { hasPassword: false, ...counts(() => 0) };

/** Every enrolled factor of the user (confirmed ones only), newest first within each kind, in the registry's order. */
export async function listFactors(ctx: Ctx, userId: string): Promise<HeldFactor[]> {
  const lists = await Promise.all(FACTORS.map((f) => (f.held ? f.held.list(ctx, userId) : Promise.resolve([]))));
  return lists.flat();
}

/** Removes one enrolled factor of the user (a recovery-code "factor" is the whole set). True when something was removed. */
export async function removeFactor(ctx: Ctx, userId: string, kind: HeldKind, id: string): Promise<boolean> {
  const factor = FACTORS.find((f) => f.held && f.evidence.some((e) => e.method === kind));
  return factor?.held ? (factor.held.remove as (ctx: Ctx, userId: string, kind: HeldKind, id: string) => Promise<boolean>)(ctx, userId, kind, id) : false;
}
