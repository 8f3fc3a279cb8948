/**
 * The workspace settings the sign-in page reads at every first step: whether it offers a password
 * reset (lib/authn/passwords) and the bot protection's mode (lib/authn/bot-challenge). Kept per
 * workspace in the process cache (`sign-in-settings:<id>`, lib/service.ts "Caches and changes"):
 * dropped by every console operation, workspace import and announced change, here and in other
 * processes, and bounded at 30 s. Only what the page shows is read this way; the posts (a reset's, a
 * protected form's) decide from the database.
 */
import { SECOND } from "../clock";
import type { EndpointContext } from "../http/context";
import { cacheGeneration, cacheIfCurrent, workspaceCacheKey } from "../service";
import { loadBotChallengeMode, type BotChallengeMode } from "../authn/bot-challenge/policy";
import { loadPasswordPolicy, type PasswordResetMode } from "../authn/passwords/policy";

export interface SignInSettings {
  reset: PasswordResetMode;
  botMode: BotChallengeMode;
}

const TTL_MS = 30 * SECOND;

export async function signInSettings(ctx: Pick<EndpointContext, "service" | "workspace">): Promise<SignInSettings> {
  const key = workspaceCacheKey("sign-in-settings", ctx.workspace.id);
  const now = ctx.service.clock.now().getTime();
  const held = ctx.service.cache.get(key) as { settings: SignInSettings; until: number } | undefined;
  if (held && held.until > now) return held.settings;
  const generation = cacheGeneration(ctx.service);
  const [policy, botMode] = await Promise.all([loadPasswordPolicy(ctx.service.db, ctx.workspace.id), loadBotChallengeMode(ctx.service.db, ctx.workspace.id)]);
  const settings = { reset: policy.reset, botMode };
  cacheIfCurrent(ctx.service, generation, key, { settings, until: now + TTL_MS });
  return settings;
}
