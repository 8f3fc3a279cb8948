/**
 * The workspace file's password policy (docs/workspace-file.md), both keys defaulting to `"off"`
 * as SPEC.md describes:
 * - `password_screening`: `"off"` or `{ "minimum_score": 0–4 }`, screening every new password
 *   (./screening.ts). The file's own users' passwords are screened by the value the file gives
 *   (lib/workspaces' users section asks `fileScreening`).
 * - `password_reset`: `"off"` or `"email"`, self-service reset by proving the mailbox (./change.ts).
 */
import { z } from "zod";
import { defineWorkspaceSection } from "../../surfaces/workspace-file";
import { DEFAULT_MINIMUM_SCORE, loadPasswordPolicy, PASSWORD_RESET_MODES, savePasswordPolicy, type PasswordPolicy } from "./policy";

export const passwordScreeningSchema = z
  .union([
    z.literal("off"),
    z.strictObject({
      /** zxcvbn's score (0 weakest – 4) a new password must reach; 0: the bundled list (and the breach range service) only. */
      minimum_score: z.number().int("must be a whole number from 0 to 4").min(0, "must be from 0 to 4").max(4, "must be from 0 to 4").default(DEFAULT_MINIMUM_SCORE),
    }),
  ])
  .default("off");

export const passwordResetSchema = z.enum(PASSWORD_RESET_MODES, { error: 'must be "off" or "email"' }).default("off");

export type PasswordScreeningValue = z.output<typeof passwordScreeningSchema>;

/** The policy a file's value says. */
export function screeningOf(value: PasswordScreeningValue): PasswordPolicy["screening"] {
  return value === "off" ? null : { minimumScore: value.minimum_score };
}

export const PASSWORDS_SECTION = defineWorkspaceSection({
  name: "password_screening",
  shape: { password_screening: passwordScreeningSchema, password_reset: passwordResetSchema },
  // Before the users, whose passwords it screens.
  after: "organizations",
  async import(ctx) {
    const wanted = { screening: screeningOf(ctx.file.password_screening), reset: ctx.file.password_reset };
    const held = await loadPasswordPolicy(ctx.tx, ctx.wid);
    if (held.screening?.minimumScore === wanted.screening?.minimumScore && held.reset === wanted.reset) return;
    await savePasswordPolicy(ctx.tx, ctx.wid, wanted, ctx.now);
    ctx.changes++;
  },
  async export(db, workspaceId) {
    const { screening, reset } = await loadPasswordPolicy(db, workspaceId);
    return { password_screening: screening ? { minimum_score: screening.minimumScore } : ("off" as const), password_reset: reset };
  },
});
