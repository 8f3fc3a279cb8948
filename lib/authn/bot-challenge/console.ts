/**
 * The console's side of bot protection: its page shows the mode (`botChallengeModeOf`) and admins
 * change it with `setBotChallenge`, audited as `console.workspace.bot_challenge_changed`.
 */
import { z } from "zod";
import type { Database } from "../../../db/client";
import { defineOperation } from "../../surfaces/operation";
import { BOT_CHALLENGE_MODES, loadBotChallengeMode, saveBotChallengeMode, type BotChallengeMode } from "./policy";

export function botChallengeModeOf(db: Database, workspaceId: string): Promise<BotChallengeMode> {
  return loadBotChallengeMode(db, workspaceId);
}

export const setBotChallenge = defineOperation({
  name: "workspace.bot_challenge_changed",
  role: "admin",
  input: z.object({ mode: z.enum(BOT_CHALLENGE_MODES, { error: "Choose off, adaptive or always" }) }),
  async run(ctx, input) {
    const workspaceId = ctx.access.workspace.id;
    const before = await loadBotChallengeMode(ctx.db, workspaceId);
    if (before === input.mode) return { result: null, audit: null };
    await saveBotChallengeMode(ctx.db, workspaceId, input.mode, ctx.now);
    return { result: null, audit: { target: workspaceId, data: { before, after: input.mode } } };
  },
});
