/**
 * Destructive console operations (delete, disable) are confirmed by typing what is being removed:
 * the form posts `confirm`, and the operation refuses unless it is exactly the subject's
 * identifier. The check is here, on the server, so a form without its dialog still cannot delete.
 */
import { z } from "zod";
import { fieldError } from "./operation";

/** The typed confirmation: optional in the schema, so its absence is reported beside the field. */
export const confirmField = () => z.preprocess((v) => (typeof v === "string" ? v.trim() : undefined), z.string().max(300).optional());

/** Refuses unless `typed` is exactly `expected` (the client id, audience, role name or workspace id). */
export function requireConfirmation(typed: string | undefined, expected: string, what: string): void {
  if (typed !== expected) throw fieldError("confirm", `Type ${what} exactly to confirm`);
}
