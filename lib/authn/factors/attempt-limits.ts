/**
 * Guessing limits on second factors (authenticator codes, recovery codes), the same shape as the
 * password's (lib/authn/sign-in-limits.ts): failures per account and address (failuresPer5Minutes
 * per 5 minutes) and per account from every address together (ACCOUNT_LIMIT_FACTOR times that per
 * hour). A limited attempt is not checked and answers like a wrong code.
 *
 * Whoever reaches a second factor already proved the account's first factor, so the account limit
 * is the one a stolen password meets. It must not lock the owner out: a browser holding the cookie
 * of a hosted session of this user (live or ended, within the cookie's lifetime) passes it, limited
 * per device instead. After the hour anyone may try again.
 */
import { and, eq } from "drizzle-orm";
import { hostedSessions } from "../../../db/schema";
import { clientAddress } from "../../http/client-address";
import type { EndpointContext } from "../../http/context";
import { readSessionCookie, SESSION_ABSOLUTE_MS } from "../hosted-session";
import { verifySessionSecret } from "../session-token";
import { ACCOUNT_LIMIT_FACTOR, ACCOUNT_WINDOW_MS, type GuessingGate } from "../sign-in-limits";

const ADDRESS_WINDOW_MS = 5 * 60_000;

export type SecondFactorKind = "totp" | "recovery_code";

export async function secondFactorGate(ctx: EndpointContext, request: Request, userId: string, kind: SecondFactorKind): Promise<GuessingGate> {
  const { limiter, config } = ctx.service;
  const limit = config.rateLimits.failuresPer5Minutes;
  const accountLimit = limit * ACCOUNT_LIMIT_FACTOR;
  const ws = ctx.workspace.id;
  const addressKey = `mfa-${kind}:${ws}:${userId}:${clientAddress(request, config.trustProxy)}`;
  const accountKey = `mfa-${kind}-account:${ws}:${userId}`;
  if (!limiter.blocked(addressKey, limit, ADDRESS_WINDOW_MS).allowed) return { allowed: false };

  let deviceKey: string | null = null;
  if (!limiter.blocked(accountKey, accountLimit, ACCOUNT_WINDOW_MS).allowed) {
    const device = await knownDevice(ctx, request.headers.get("cookie"), userId);
    if (!device) return { allowed: false };
    deviceKey = `mfa-${kind}-device:${ws}:${device}`;
    if (!limiter.blocked(deviceKey, limit, ADDRESS_WINDOW_MS).allowed) return { allowed: false };
  }
  return {
    allowed: true,
    async recordFailure() {
      await Promise.all([
        limiter.recordFailure(addressKey, limit, ADDRESS_WINDOW_MS),
        limiter.recordFailure(accountKey, accountLimit, ACCOUNT_WINDOW_MS),
        deviceKey ? limiter.recordFailure(deviceKey, limit, ADDRESS_WINDOW_MS) : undefined,
      ]);
    },
  };
}

/** The id of the hosted session of `userId` whose cookie this browser holds, begun within the cookie's lifetime (ended sessions count). */
async function knownDevice(ctx: EndpointContext, cookieHeader: string | null, userId: string): Promise<string | null> {
  const cookie = readSessionCookie(cookieHeader);
  if (!cookie) return null;
  const [row] = await ctx.service.db
    .select({ id: hostedSessions.id, secretHash: hostedSessions.secretHash, createdAt: hostedSessions.createdAt })
    .from(hostedSessions)
    .where(and(eq(hostedSessions.workspaceId, ctx.workspace.id), eq(hostedSessions.id, cookie.id), eq(hostedSessions.userId, userId)))
    .limit(1);
  if (!row || !verifySessionSecret(row, cookie.secret)) return null;
  return ctx.service.clock.now().getTime() - row.createdAt.getTime() < SESSION_ABSOLUTE_MS ? row.id : null;
}
