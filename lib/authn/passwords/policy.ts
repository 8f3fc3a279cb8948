/**
 * A workspace's password policy (the `password_policies` row; none: the defaults, as SPEC.md
 * describes) and the one entry point every place that sets a password calls before hashing it:
 * `screenNewPassword`.
 */
import { eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { passwordPolicies } from "../../../db/schema";
import type { Config } from "../../config";
import { breachRangeCheck } from "./breach-range";
import { PasswordRefused, screeningRefusal } from "./screening";

export interface PasswordPolicy {
  /** Screening of new passwords (./screening.ts): null is off; on, the zxcvbn score a password must reach (0–4). */
  screening: { minimumScore: number } | null;
}

export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = { screening: null };

/** The score a screening policy asks when none is said: zxcvbn's "safely unguessable" (3) is often out of reach of a memorable password; 2 refuses what a few thousand guesses find. */
export const DEFAULT_MINIMUM_SCORE = 2;

export async function loadPasswordPolicy(db: Database, workspaceId: string): Promise<PasswordPolicy> {
  const [row] = await db.select({ score: passwordPolicies.screeningMinimumScore }).from(passwordPolicies).where(eq(passwordPolicies.workspaceId, workspaceId)).limit(1);
  if (!row) return DEFAULT_PASSWORD_POLICY;
  return { screening: row.score === null ? null : { minimumScore: row.score } };
}

export async function savePasswordPolicy(db: Database, workspaceId: string, policy: PasswordPolicy, now: Date): Promise<void> {
  const score = policy.screening?.minimumScore ?? null;
  await db
    .insert(passwordPolicies)
    .values({ workspaceId, screeningMinimumScore: score, updatedAt: now })
    .onConflictDoUpdate({ target: passwordPolicies.workspaceId, set: { screeningMinimumScore: score, updatedAt: now } });
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
