/**
 * A user's enrolled factors in the console (lib/authn/factors `listFactors`), and their removal by
 * an administrator helping a user who lost one: the user then signs in with what is left and, where
 * the policy requires MFA, enrols a new second factor before the sign-in completes.
 */
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { users } from "../../db/schema";
import { listFactors, removeFactor, type HeldFactor } from "../authn/factors";
import { HELD_KINDS, labelOf, type HeldKind } from "../authn/factors/registry";
import type { Service } from "../service";
import { id } from "./forms";
import { defineOperation, formError } from "./operation";

export type EnrolledFactor = HeldFactor;

/** What the console calls each kind a user can hold, as its factor names it. */
export const FACTOR_KIND_LABELS = Object.fromEntries(HELD_KINDS.map((kind) => [kind, labelOf(kind)])) as Record<HeldKind, string>;

export async function userFactors(service: Service, workspace: { id: string; name: string }, userId: string): Promise<EnrolledFactor[]> {
  return listFactors({ service, workspace, origin: service.config.publicUrl }, userId);
}

/** Removes one factor (recovery codes: the whole set). The user's sessions stay; end them on the same page if the factor was lost or stolen. */
export const removeUserFactor = defineOperation({
  name: "user.factor_removed",
  role: "admin",
  input: z.object({
    user_id: id("user"),
    kind: z.enum(HELD_KINDS as [HeldKind, ...HeldKind[]], { error: "Unknown kind of factor" }),
    factor_id: id("factor"),
  }),
  async run(ctx, input) {
    const workspace = ctx.access.workspace;
    const [user] = await ctx.db
      .select({ id: users.id, email: users.email })
      .from(users)
      .where(and(eq(users.workspaceId, workspace.id), eq(users.id, input.user_id)))
      .limit(1);
    if (!user) throw formError("This user no longer exists");
    // Inside the operation's transaction, so the removal and its audit event are one.
    const scoped = { service: { ...ctx.service, db: ctx.db }, workspace, origin: ctx.service.config.publicUrl };
    const factor = (await listFactors(scoped, user.id)).find((f) => f.kind === input.kind && f.id === input.factor_id);
    if (!factor || !(await removeFactor(scoped, user.id, input.kind, input.factor_id))) throw formError("This factor has already been removed");
    return {
      result: null,
      audit: {
        target: user.email,
        data: { user_id: user.id, kind: factor.kind, factor_id: factor.id, name: factor.name, ...(factor.remaining === undefined ? {} : { remaining: factor.remaining }) },
      },
    };
  },
});
