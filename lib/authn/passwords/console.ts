/**
 * The console's side of the password policy: the Passwords page shows it (`passwordPolicyOf`) and
 * `setPasswordScreening` changes it (admins), audited as
 * `console.workspace.password_screening_changed`.
 */
import { z } from "zod";
import type { Database } from "../../../db/client";
import { defineOperation } from "../../surfaces/operation";
import { DEFAULT_MINIMUM_SCORE, loadPasswordPolicy, savePasswordPolicy, type PasswordPolicy } from "./policy";

export function passwordPolicyOf(db: Database, workspaceId: string): Promise<PasswordPolicy> {
  return loadPasswordPolicy(db, workspaceId);
}

const asJson = (p: PasswordPolicy) => (p.screening ? { minimum_score: p.screening.minimumScore } : "off");

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
    const after: PasswordPolicy = { screening: input.screening === "on" ? { minimumScore: input.minimum_score } : null };
    if (JSON.stringify(asJson(before)) === JSON.stringify(asJson(after))) return { result: after, audit: null };
    await savePasswordPolicy(ctx.db, workspaceId, after, ctx.now);
    return { result: after, audit: { target: workspaceId, data: { before: asJson(before), after: asJson(after) } } };
  },
});
