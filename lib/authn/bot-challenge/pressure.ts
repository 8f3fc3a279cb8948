/**
 * When an adaptive workspace asks the proof of work: the declared thresholds of attempts at the
 * protected forms (a password that failed, a code sent for a sign-in, a sign-up or a reset), per
 * client address (IPv6 by its /64), per account (the address typed) and for the whole workspace.
 * One past its threshold, the forms that attempt names ask the proof until the window ends. The
 * counters are the rate limiter's (lib/limits), shared by every instance; they refuse nothing:
 * the guessing and sending limits do that.
 */
import { MINUTE } from "../../clock";
import type { EndpointContext } from "../../http/context";
import type { RateLimiter } from "../../limits/rate-limit";

export interface PressureThreshold {
  /** Attempts in the window at which the proof is asked. */
  times: number;
  windowMs: number;
}

/** The thresholds, declared once (docs/security.md lists them). */
export const BOT_PRESSURE = {
  /** From one client address (/64), whatever the account: a script going through addresses. */
  perAddress: { times: 10, windowMs: 15 * MINUTE },
  /** For one account (the address typed), from every client address: a distributed guess at one account. */
  perAccount: { times: 5, windowMs: 15 * MINUTE },
  /** The whole workspace: a flood from many addresses at many accounts. */
  perWorkspace: { times: 300, windowMs: 5 * MINUTE },
} as const satisfies Record<string, PressureThreshold>;

interface Counter {
  key: string;
  limit: number;
  windowMs: number;
}

/** The counters an attempt is counted on and judged by (the account's only when it names one). */
function countersOf(workspaceId: string, address: string, account: string | null): Counter[] {
  const at = (key: string, t: PressureThreshold): Counter => ({ key, limit: t.times, windowMs: t.windowMs });
  return [
    at(`bot-address:${workspaceId}:${address}`, BOT_PRESSURE.perAddress),
    ...(account ? [at(`bot-account:${workspaceId}:${account}`, BOT_PRESSURE.perAccount)] : []),
    at(`bot-workspace:${workspaceId}`, BOT_PRESSURE.perWorkspace),
  ];
}

type Ctx = Pick<EndpointContext, "workspace"> & { service: { limiter: RateLimiter } };

/** Whether an attempt from `address` naming `account` (null: none yet, as on the page) is past a threshold: one query for the shared counts. */
export async function underPressure(ctx: Ctx, address: string, account: string | null): Promise<boolean> {
  const counters = countersOf(ctx.workspace.id, address, account);
  await ctx.service.limiter.refresh(counters);
  return counters.some((c) => !ctx.service.limiter.blocked(c.key, c.limit, c.windowMs).allowed);
}

/** Counts an attempt at a protected form (synced in the background, as the limiter's requests are). */
export function countAttempt(ctx: Ctx, address: string, account: string | null): void {
  for (const c of countersOf(ctx.workspace.id, address, account)) ctx.service.limiter.hit(c.key, c.limit, c.windowMs);
}
