/**
 * The workspace file's `bot_challenge` (docs/workspace-file.md): `"off"` (the default, as SPEC.md
 * describes), `"adaptive"` or `"always"`. Export writes the workspace's value; a file that leaves
 * the key out turns it off.
 */
import { z } from "zod";
import { defineWorkspaceSection } from "../../surfaces/workspace-file";
import { BOT_CHALLENGE_MODES, loadBotChallengeMode, saveBotChallengeMode } from "./policy";

export const botChallengeSchema = z.enum(BOT_CHALLENGE_MODES, { error: 'must be "off", "adaptive" or "always"' }).default("off");

export const BOT_CHALLENGE_SECTION = defineWorkspaceSection({
  name: "bot_challenge",
  shape: { bot_challenge: botChallengeSchema },
  after: "password_screening",
  async import(ctx) {
    const wanted = ctx.file.bot_challenge;
    if ((await loadBotChallengeMode(ctx.tx, ctx.wid)) === wanted) return;
    await saveBotChallengeMode(ctx.tx, ctx.wid, wanted, ctx.now);
    ctx.changes++;
  },
  async export(db, workspaceId) {
    return { bot_challenge: await loadBotChallengeMode(db, workspaceId) };
  },
});
