/**
 * A workspace's password policy (the `password_policies` row; none: the defaults, as SPEC.md
 * describes) and the one entry point every place that sets a password calls before hashing it:
 * `screenNewPassword`.
 */
import { eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { param, reusable } from "../../../db/reusable";
import { passwordPolicies } from "../../../db/schema";
import type { Config } from "../../config";
import { breachRangeCheck } from "./breach-range";
import { PasswordRefused, screeningRefusal } from "./screening";

export const PASSWORD_RESET_MODES = ["off", "email"] as const;
export type PasswordResetMode = (typeof PASSWORD_RESET_MODES)[number];

export interface PasswordPolicy {
  /** Screening of new passwords (./screening.ts): null is off; on, the zxcvbn score a password must reach (0–4). */
  screening: { minimumScore: number } | null;
  /** Self-service reset of a forgotten password (./change.ts): off, or by proving the account's mailbox with an emailed code. */
  reset: PasswordResetMode;
}

export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = { screening: null, reset: "off" };

/** The score a screening policy asks when none is said: zxcvbn's "safely unguessable" (3) is often out of reach of a memorable password; 2 refuses what a few thousand guesses find. */
export const DEFAULT_MINIMUM_SCORE = 2;

/** Built once: the sign-in page reads the policy (whether to offer a reset) on every first step. */
const policyStatement = reusable("latchkey_password_policy", (db) =>
  db
    .select({ score: passwordPolicies.screeningMinimumScore, reset: passwordPolicies.reset })
    .from(passwordPolicies)
    .where(eq(passwordPolicies.workspaceId, param("workspaceId")))
    .limit(1),
);

export async function loadPasswordPolicy(db: Database, workspaceId: string): Promise<PasswordPolicy> {
  const [row] = await policyStatement(db, { workspaceId });
  if (!row) return DEFAULT_PASSWORD_POLICY;
  return { screening: row.score === null ? null : { minimumScore: row.score }, reset: row.reset === "email" ? "email" : "off" };
}

/** Sets the parts of the policy `change` names; the others keep what they hold. */
export async function savePasswordPolicy(db: Database, workspaceId: string, change: Partial<PasswordPolicy>, now: Date): Promise<void> {
  const set = {
    ...("screening" in change ? { screeningMinimumScore: change.screening?.minimumScore ?? null } : {}),
    ...(change.reset ? { reset: change.reset } : {}),
    updatedAt: now,
  };
  await db
    .insert(passwordPolicies)
    .values({ workspaceId, screeningMinimumScore: null, reset: "off", ...set })
    .onConflictDoUpdate({ target: passwordPolicies.workspaceId, set });
}

/**
 * Refuses (PasswordRefused) a new password the workspace's policy screens out; returns when it may
 * be set. `userInputs`: the account's own words (its address, its name). `field`: the form field a
 * console refusal is shown beside.
 */
export async function screenNewPassword(
  service: { db: Database; config: Pick<Config, "passwordBreachRangeUrl">; fetch: typeof fetch },
  workspaceId: string,
  password: string,
  options: { userInputs?: readonly string[]; field?: string } = {},
): Promise<void> {
  const policy = await loadPasswordPolicy(service.db, workspaceId);
  if (policy.screening) await screen(service, password, policy.screening.minimumScore, options.userInputs ?? [], options.field);
}

async function screen(service: { config: Pick<Config, "passwordBreachRangeUrl">; fetch: typeof fetch }, password: string, minimumScore: number, userInputs: readonly string[], field?: string): Promise<void> {
  const refusal = await screeningRefusal(password, { minimumScore, userInputs, knownBreached: breachRangeCheck(service) });
  if (refusal) throw new PasswordRefused(refusal, field);
}

/**
 * Operators' passwords (the system workspace's accounts: setup, an invitation, their own account
 * page) are always screened, whatever any workspace says: they hold every workspace's keys.
 */
export const OPERATOR_SCREENING = { minimumScore: DEFAULT_MINIMUM_SCORE } as const;

/** Refuses (PasswordRefused) an operator's new password that the operators' screening refuses. */
export async function screenOperatorPassword(
  service: { config: Pick<Config, "passwordBreachRangeUrl">; fetch: typeof fetch },
  password: string,
  userInputs: readonly string[] = [],
): Promise<void> {
  await screen(service, password, OPERATOR_SCREENING.minimumScore, userInputs);
}
