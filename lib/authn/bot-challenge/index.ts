/**
 * Bot protection without a third party: every surface of it declared here and read by the
 * registries (lib/features/registry.ts): its console operation and page (./console.ts,
 * app/console/(app)/w/[workspace]/bot-protection), its section of the workspace file
 * (./workspace-file.ts) and the retention of solved challenges. Its rules: ./policy.ts (the mode),
 * ./pressure.ts (the adaptive thresholds), ./challenge.ts (ALTCHA's proof of work) and ./gate.ts
 * (the one check every protected form makes, and the page's challenge).
 */
import { botChallengeSolutions } from "../../../db/schema";
import { defineFeature } from "../../surfaces/feature";
import { defineRetention } from "../../surfaces/retention";
import { setBotChallenge } from "./console";
import { BOT_CHALLENGE_SECTION } from "./workspace-file";

/** A solved challenge is kept until it expires (its sign-in has ended by then): until then it cannot be used again. */
export const BOT_CHALLENGE_SOLUTIONS = defineRetention({
  name: "bot_challenge_solutions",
  table: botChallengeSolutions,
  key: botChallengeSolutions.challenge,
  expiresAt: botChallengeSolutions.expiresAt,
  grace: 0,
  workspaceId: botChallengeSolutions.workspaceId,
});

export const BOT_CHALLENGE_FEATURE = defineFeature({
  name: "bot-challenge",
  operations: { setBotChallenge },
  workspaceFile: BOT_CHALLENGE_SECTION,
  retention: [BOT_CHALLENGE_SOLUTIONS],
  consolePage: { path: "/bot-protection", label: "Bot protection", after: "/alerts" },
});
