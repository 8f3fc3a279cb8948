/**
 * A workspace's bot protection (the `bot_challenge_policies` row; none: `off`, as SPEC.md
 * describes): when the hosted sign-in's protected forms ask a proof of work (./challenge.ts).
 */
import { eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { param, reusable } from "../../../db/reusable";
import { botChallengePolicies } from "../../../db/schema";

export const BOT_CHALLENGE_MODES = ["off", "adaptive", "always"] as const;
export type BotChallengeMode = (typeof BOT_CHALLENGE_MODES)[number];

/** Built once: every first step of a sign-in reads it. */
const modeStatement = reusable("latchkey_bot_challenge_mode", (db) =>
  db.select({ mode: botChallengePolicies.mode }).from(botChallengePolicies).where(eq(botChallengePolicies.workspaceId, param("workspaceId"))).limit(1),
);

export async function loadBotChallengeMode(db: Database, workspaceId: string): Promise<BotChallengeMode> {
  const [row] = await modeStatement(db, { workspaceId });
  return row && (BOT_CHALLENGE_MODES as readonly string[]).includes(row.mode) ? row.mode : "off";
}

export async function saveBotChallengeMode(db: Database, workspaceId: string, mode: BotChallengeMode, now: Date): Promise<void> {
  await db
    .insert(botChallengePolicies)
    .values({ workspaceId, mode, updatedAt: now })
    .onConflictDoUpdate({ target: botChallengePolicies.workspaceId, set: { mode, updatedAt: now } });
}
