/**
 * The one check every protected form makes before it does its work: the password at sign-in, and
 * every form that sends a code (an email code's sign-in, sign-up, password reset). Off: nothing is
 * asked or counted. `always`: every such post carries a solved challenge. `adaptive`: a post is
 * asked one only when its client address, its account or the workspace is past the declared
 * thresholds (./pressure.ts), or this sign-in was asked one already. A post refused for want of
 * one marks its sign-in, so the page shows the challenge from then on (./view.ts).
 *
 * A passkey is never asked: its sign-in cannot be guessed or flooded into mail, and it is the way
 * in for a browser that runs no script.
 */
import { and, eq } from "drizzle-orm";
import { authorizationTransactions } from "../../../db/schema";
import { clientAddress, clientAddressGroup, type HeaderSource } from "../../http/client-address";
import type { EndpointContext } from "../../http/context";
import { signal } from "../../signals";
import { acceptSolution, newChallenge } from "./challenge";
import { loadBotChallengeMode, type BotChallengeMode } from "./policy";
import { countAttempt, underPressure } from "./pressure";

/** The form field a solution is posted in (ALTCHA's name). */
export const BOT_PROOF_FIELD = "altcha";

export type BotCheck =
  /** `count` records the attempt towards the thresholds (a failed password, a code sent). */
  | { ok: true; count(): void }
  | { ok: false };

const NOTHING = () => undefined;

/** Whether this post of the sign-in `tx` may proceed; `account`: the address it names (normalized), when it names one. */
export async function botCheck(
  request: Request,
  ctx: EndpointContext,
  tx: { id: string; botChallenged: boolean },
  form: URLSearchParams,
  account: string | null,
): Promise<BotCheck> {
  const mode = await loadBotChallengeMode(ctx.service.db, ctx.workspace.id);
  if (mode === "off") return { ok: true, count: NOTHING };
  const address = clientAddress(request, ctx.service.config.trustProxy);
  const count = () => countAttempt(ctx, address, account);
  const asked = mode === "always" || tx.botChallenged || (await underPressure(ctx, address, account));
  if (!asked) return { ok: true, count };
  if (await acceptSolution(ctx, tx.id, form.get(BOT_PROOF_FIELD))) return { ok: true, count };
  // Counted with the limits that refuse (`latchkey_rate_limit_refusals_total{policy="bot-challenge"}`).
  signal("rate_limit_refused", { limit: "bot-challenge" });
  if (!tx.botChallenged) {
    const t = authorizationTransactions;
    await ctx.service.db.update(t).set({ botChallenged: true }).where(and(eq(t.workspaceId, ctx.workspace.id), eq(t.id, tx.id)));
  }
  return { ok: false };
}

/**
 * The challenge the sign-in page hands the browser (JSON), or null when its forms ask none: the
 * workspace's mode (as the page reads it), this sign-in's mark, and the pressure on the client
 * address and the workspace (the account is not known until the form is posted).
 */
export async function pageChallenge(ctx: EndpointContext, tx: { id: string; botChallenged: boolean }, headers: HeaderSource | null, mode: BotChallengeMode): Promise<string | null> {
  if (mode === "off") return null;
  const asked = mode === "always" || tx.botChallenged || (await underPressure(ctx, headers ? clientAddressGroup(headers, ctx.service.config.trustProxy) : "unknown", null));
  return asked ? newChallenge(ctx, tx.id) : null;
}
