/**
 * The console's side of the password policy: the Passwords page shows it (`passwordPolicyOf`);
 * admins change it with `setPasswordScreening` (audited as
 * `console.workspace.password_screening_changed`) and `setPasswordReset`
 * (`console.workspace.password_reset_changed`).
 */
import { z } from "zod";
import type { Database } from "../../../db/client";
import { defineOperation } from "../../surfaces/operation";
import { DEFAULT_MINIMUM_SCORE, loadPasswordPolicy, PASSWORD_RESET_MODES, savePasswordPolicy, type PasswordPolicy } from "./policy";

export function passwordPolicyOf(db: Database, workspaceId: string): Promise<PasswordPolicy> {
  return loadPasswordPolicy(db, workspaceId);
}

const asJson = (p: Pick<PasswordPolicy, "screening">) => (p.screening ? { minimum_score: p.screening.minimumScore } : "off");

export const setPasswordScreening = defineOperation({
  name: "workspace.password_screening_changed",
  role: "admin",
  input: z.object({
    screening: z.enum(["off", "on"], { error: "Choose off or on" }),
    minimum_score: z.preprocess(
      (v) => (v === undefined || v === "" ? DEFAULT_MINIMUM_SCORE : Number(v)),
      z.number({ error: "Choose a score from 0 to 4" }).int("Choose a score from 0 to 4").min(0, "Choose a score from 0 to 4").max(4, "Choose a score from 0 to 4"),
    ),
  }),
  async run(ctx, input) {
    const workspaceId = ctx.access.workspace.id;
    const before = await loadPasswordPolicy(ctx.db, workspaceId);
    const after = { screening: input.screening === "on" ? { minimumScore: input.minimum_score } : null };
    if (JSON.stringify(asJson(before)) === JSON.stringify(asJson(after))) return { result: after, audit: null };
    await savePasswordPolicy(ctx.db, workspaceId, after, ctx.now);
    return { result: after, audit: { target: workspaceId, data: { before: asJson(before), after: asJson(after) } } };
  },
});

export const setPasswordReset = defineOperation({
  name: "workspace.password_reset_changed",
  role: "admin",
  input: z.object({ reset: z.enum(PASSWORD_RESET_MODES, { error: "Choose off or email" }) }),
  async run(ctx, input) {
    const workspaceId = ctx.access.workspace.id;
    const before = await loadPasswordPolicy(ctx.db, workspaceId);
    if (before.reset === input.reset) return { result: null, audit: null };
    await savePasswordPolicy(ctx.db, workspaceId, { reset: input.reset }, ctx.now);
    return { result: null, audit: { target: workspaceId, data: { before: before.reset, after: input.reset } } };
  },
});
