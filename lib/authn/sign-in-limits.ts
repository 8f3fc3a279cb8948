import { and, eq } from "drizzle-orm";
import { hostedSessions, users } from "../../db/schema";
import { safeEqual, sha256Hex } from "../crypto";
import { clientAddress } from "../http/client-address";
import type { EndpointContext } from "../http/context";
import { readSessionCookie, SESSION_ABSOLUTE_MS } from "./hosted-session";

const ADDRESS_WINDOW_MS = 5 * 60_000;
/** The per-account window: failures from every address together. */
export const ACCOUNT_WINDOW_MS = 60 * 60_000;
/** Failed sign-ins per account per hour, from all addresses: this multiple of the per-address limit per 5 minutes. */
export const ACCOUNT_LIMIT_FACTOR = 3;

export type GuessingGate =
  | { allowed: false }
  | {
      allowed: true;
      /** Counts a failed attempt against every limit this attempt was checked under. */
      recordFailure(): Promise<void>;
    };

/**
 * The limits on password guessing, checked before any password is: failures per account and
 * address (failuresPer5Minutes per 5 minutes), and per account from every address together
 * (ACCOUNT_LIMIT_FACTOR times that, per hour), so new addresses do not bring new guesses.
 *
 * The account limit must not lock its owner out: a browser that holds the cookie of a hosted
 * session of this account (live or ended, within the cookie's lifetime) is a known device and
 * passes it, limited instead per device like an address. After the hour anyone may try again.
 *
 * The account is named by the email as typed (normalized), known or not, so an unknown email is
 * counted and answered exactly as a known one.
 *
 * `scope` names the method whose guesses are counted (each first factor has its own counters:
 * "signin" for the password, "email-otp" for email codes).
 */
export async function guessingGate(ctx: EndpointContext, request: Request, email: string, scope = "signin"): Promise<GuessingGate> {
  const { limiter, config } = ctx.service;
  const limit = config.rateLimits.failuresPer5Minutes;
  const ws = ctx.workspace.id;
  const address: Counter = { key: `${scope}:${ws}:${email}:${clientAddress(request, config.trustProxy)}`, limit, windowMs: ADDRESS_WINDOW_MS };
  if (!limiter.blocked(address.key, address.limit, address.windowMs).allowed) return { allowed: false };
  const account = await accountLimitWithOwnerPass(
    ctx,
    request,
    email,
    { key: `${scope}-account:${ws}:${email}`, limit: limit * ACCOUNT_LIMIT_FACTOR, windowMs: ACCOUNT_WINDOW_MS },
    (device) => ({ key: `${scope}-device:${ws}:${device}`, limit, windowMs: ADDRESS_WINDOW_MS }),
  );
  if (!account) return { allowed: false };
  return { allowed: true, recordFailure: () => countAll(ctx, [address, ...account]) };
}

/** One rate-limit counter: its key, its limit and its window. */
export interface Counter {
  key: string;
  limit: number;
  windowMs: number;
}

/** Counts one hit on every counter. */
export async function countAll(ctx: EndpointContext, counters: readonly Counter[]): Promise<void> {
  await Promise.all(counters.map((c) => ctx.service.limiter.recordFailure(c.key, c.limit, c.windowMs)));
}

/**
 * A limit on an account (`email`, as typed) from every address together that must not lock its
 * owner out: while it holds, a browser holding the cookie of a hosted session of this account
 * (knownDevice) passes it, counted on its own `device` counter instead. Null when the attempt is
 * limited; otherwise the counters the attempt is to be counted on.
 */
export async function accountLimitWithOwnerPass(
  ctx: EndpointContext,
  request: Request,
  email: string,
  account: Counter,
  device: (deviceId: string) => Counter,
): Promise<Counter[] | null> {
  const { limiter } = ctx.service;
  if (limiter.blocked(account.key, account.limit, account.windowMs).allowed) return [account];
  const id = await knownDevice(ctx, request.headers.get("cookie"), email);
  if (!id) return null;
  const own = device(id);
  if (!limiter.blocked(own.key, own.limit, own.windowMs).allowed) return null;
  return [account, own];
}

/**
 * The id of the hosted session whose cookie this browser holds, when that session belongs to
 * the account `email` names in this workspace and began within the cookie's lifetime; ended and
 * expired sessions count (the browser proved it signed in as this account before).
 */
async function knownDevice(ctx: EndpointContext, cookieHeader: string | null, email: string): Promise<string | null> {
  const cookie = readSessionCookie(cookieHeader);
  if (!cookie) return null;
  const [row] = await ctx.service.db
    .select({ id: hostedSessions.id, secretHash: hostedSessions.secretHash, createdAt: hostedSessions.createdAt })
    .from(hostedSessions)
    .innerJoin(users, eq(users.id, hostedSessions.userId))
    .where(and(eq(hostedSessions.workspaceId, ctx.workspace.id), eq(hostedSessions.id, cookie.id), eq(users.emailNormalized, email)))
    .limit(1);
  if (!row || !safeEqual(row.secretHash, sha256Hex(cookie.secret))) return null;
  return ctx.service.clock.now().getTime() - row.createdAt.getTime() < SESSION_ABSOLUTE_MS ? row.id : null;
}
