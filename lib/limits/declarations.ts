/**
 * Limits are declared, not called: a factor or a route states its limits beside itself as one of
 * the declarations below, and the functions here enforce any declaration with the RateLimiter
 * (./rate-limit.ts). Counter keys come from the declaration's name, so one factor counts on the
 * same counters wherever it is verified (sign-in, step-up, the portal, sign-up). docs/security.md's
 * table of limits is rendered from the declarations (./table.ts) and tested against them. Every
 * refusal is signalled here too, by the declaration's name (`rate_limit_refused`, lib/signals;
 * the metrics count it as `latchkey_rate_limit_refusals_total`).
 */
import { signal } from "../signals";
import type { Decision, RateLimiter } from "./rate-limit";

/** The configured numbers a rate may scale from. */
export interface LimitBase {
  /** RATE_LIMIT_FAILURES: failed attempts per 5 minutes. */
  failuresPer5Minutes: number;
  /** RATE_LIMIT_PER_MINUTE: requests per minute. */
  requestsPerMinute: number;
}

/**
 * A number of events per window: `times` × the setting named by `scale`, or `times` itself when
 * `scale` is null (a fixed number).
 */
export interface Rate {
  times: number;
  scale: keyof LimitBase | null;
  windowMs: number;
}

/** The limit a rate stands for under the configured base (0: unlimited, as the limiter reads it). */
export function limitOf(rate: Rate, base: LimitBase): number {
  return rate.scale === null ? rate.times : rate.times * base[rate.scale];
}

/**
 * The guessing limits of one factor (or any secret checked against an account): failures are
 * counted, and once a limit is reached nothing is checked and the attempt answers like a wrong one.
 */
export interface GuessingLimits {
  /** The counters' name: one per factor, the same in every flow (lowercase letters and dashes). */
  name: string;
  /** What is guessed, as the table of limits names it. */
  label: string;
  /**
   * What limits answers to one challenge (enforced by the factor's own conditional update, from
   * the numbers it declares here); null when nothing is issued per attempt.
   */
  perChallenge: string | null;
  /** Per client address, whatever the account (sends from one address to many). */
  perAddress?: Rate;
  /** Per client address, for an answer that names no account until it verifies (a passkey sign-in). */
  unidentified?: Rate;
  /** Per account and client address. */
  perAccountAndAddress?: Rate;
  /** Per account from every address, session, application and flow together. */
  perAccount?: Rate;
  /**
   * What exempts a device from `perAccount`: a browser whose hosted session of this account
   * (live or ended, within the cookie's lifetime) already passed one of these methods; such a
   * browser is counted on its own counter at `rate` instead. Without it nobody passes the ceiling.
   */
  knownDevice?: { after: readonly string[]; rate: Rate };
}

/** Who an attempt is counted for. */
export interface Attempt {
  workspaceId: string;
  /** The client address's group, IPv6 by its /64 (lib/http/client-address.ts `clientAddress`). */
  address: string;
  /** The account as named by the attempt (an email as typed, a client_id, a user id), or null when it names none. */
  account: string | null;
  /**
   * The id of the hosted session of this account that this browser holds and that passed one of
   * `knownDevice.after`, or null. Asked only when the account ceiling is reached.
   */
  knownDevice?: (after: readonly string[]) => Promise<string | null>;
}

export type Gate =
  | { allowed: false; retryAfterSeconds: number }
  | {
      allowed: true;
      /** Counts a failure (or, for a send limit, a send) on every counter the attempt was checked under. */
      record(): Promise<void>;
    };

interface Counter {
  key: string;
  limit: number;
  windowMs: number;
}

const counter = (key: string, rate: Rate, base: LimitBase): Counter => ({ key, limit: limitOf(rate, base), windowMs: rate.windowMs });

type Refusal = { allowed: false; retryAfterSeconds: number };

/** A refusal by the declaration named `name`, signalled (lib/signals). */
function refusal(name: string, retryAfterSeconds: number): Refusal {
  signal("rate_limit_refused", { limit: name });
  return { allowed: false, retryAfterSeconds };
}

/** The counters an attempt is checked under: those before the account ceiling, then the ceiling's (null: none). */
function countersOf(base: LimitBase, limits: GuessingLimits, attempt: Omit<Attempt, "knownDevice">): { counters: Counter[]; account: Counter | null } {
  const { name } = limits;
  const ws = attempt.workspaceId;
  const named = attempt.account !== null;
  const counters: Counter[] = [];
  // Keys are built only for the counters that apply (the client-secret check is on the token endpoint's hot path).
  const checks: [Rate | undefined, () => string][] = [
    [limits.perAddress, () => `${name}-source:${ws}:${attempt.address}`],
    [named ? undefined : limits.unidentified, () => `${name}-unidentified:${ws}:${attempt.address}`],
    [named ? limits.perAccountAndAddress : undefined, () => `${name}:${ws}:${attempt.account}:${attempt.address}`],
  ];
  for (const [rate, key] of checks) if (rate) counters.push(counter(key(), rate, base));
  const account = named && limits.perAccount ? counter(`${name}-account:${ws}:${attempt.account}`, limits.perAccount, base) : null;
  return { counters, account };
}

/** A refusal when one of the counters before the account ceiling is reached. */
function check(limiter: RateLimiter, name: string, counters: Counter[]): Refusal | null {
  for (const c of counters) {
    const d = limiter.blocked(c.key, c.limit, c.windowMs);
    if (!d.allowed) return refusal(name, d.retryAfterSeconds);
  }
  return null;
}

const allowed = (limiter: RateLimiter, counters: Counter[]): Gate => ({
  allowed: true,
  record: () => Promise.all(counters.map((c) => limiter.recordFailure(c.key, c.limit, c.windowMs))).then(() => undefined),
});

/**
 * The one limiter of a guessing declaration: whether the attempt may be checked now, and if so
 * how to count its failure. The counters' shared counts are read first, so that failures answered
 * by other instances count at once (a guess costs one more query; failures are written before
 * their answer, so guesses one after another never pass a limit, whichever instance answers them).
 * Each declared counter is asked without counting; the account ceiling is passed only by a known
 * device (the declaration's rule), which is then limited on its own counter as well.
 */
export async function guard(limiter: RateLimiter, base: LimitBase, limits: GuessingLimits, attempt: Attempt): Promise<Gate> {
  const { counters, account } = countersOf(base, limits, attempt);
  await limiter.refresh(account ? [...counters, account] : counters);
  const refused = check(limiter, limits.name, counters);
  if (refused) return refused;
  if (!account) return allowed(limiter, counters);
  const ceiling = limiter.blocked(account.key, account.limit, account.windowMs);
  if (ceiling.allowed) return allowed(limiter, [...counters, account]);
  if (!limits.knownDevice || !attempt.knownDevice) return refusal(limits.name, ceiling.retryAfterSeconds);
  const device = await attempt.knownDevice(limits.knownDevice.after);
  if (!device) return refusal(limits.name, ceiling.retryAfterSeconds);
  const own = counter(`${limits.name}-device:${attempt.workspaceId}:${device}`, limits.knownDevice.rate, base);
  await limiter.refresh([own]);
  const d = limiter.blocked(own.key, own.limit, own.windowMs);
  if (!d.allowed) return refusal(limits.name, d.retryAfterSeconds);
  return allowed(limiter, [...counters, account, own]);
}

/**
 * The same limiter, synchronously, for a declaration that exempts no device (a client secret,
 * checked on the token endpoint's hot path before any query).
 */
export function guardNow(limiter: RateLimiter, base: LimitBase, limits: GuessingLimits, attempt: Omit<Attempt, "knownDevice">): Gate {
  if (limits.knownDevice) throw new Error(`${limits.name}: a device exemption needs the asynchronous guard`);
  const { counters, account } = countersOf(base, limits, attempt);
  const refused = check(limiter, limits.name, counters);
  if (refused) return refused;
  if (!account) return allowed(limiter, counters);
  const d = limiter.blocked(account.key, account.limit, account.windowMs);
  return d.allowed ? allowed(limiter, [...counters, account]) : refusal(limits.name, d.retryAfterSeconds);
}

/**
 * What a request limit counts per: the client address (known before the endpoint runs), the
 * authenticated client (known once the endpoint's client authentication succeeds), or the
 * organization directory a SCIM token opened. Also the table's wording.
 */
export type RequestSubject = "client address" | "client" | "organization directory";

/**
 * A limit on requests (every request counts, not only failures), declared beside the routes it
 * applies to (lib/server/router.ts and the feature modules' route lists).
 */
export interface RequestLimits {
  name: string;
  /** What is counted, as the table of limits names it. */
  label: string;
  /** What one counter is per. */
  per: RequestSubject;
  rate: Rate;
}

const requestKey = (limits: RequestLimits, workspaceId: string, subject: string) => `${limits.name}:${workspaceId}:${subject}`;

/**
 * The one enforcement of declared request limits: counts one request for `subject` (a client
 * address, a client id) on each of `declared` that is counted `per` that subject. The first limit
 * reached refuses, with its Retry-After.
 */
export function countRequests(limiter: RateLimiter, base: LimitBase, declared: readonly RequestLimits[], per: RequestSubject, workspaceId: string, subject: string): Decision {
  for (const limits of declared) {
    if (limits.per !== per) continue;
    const decision = limiter.hit(requestKey(limits, workspaceId, subject), limitOf(limits.rate, base), limits.rate.windowMs);
    if (!decision.allowed) return refusal(limits.name, decision.retryAfterSeconds);
  }
  return { allowed: true, retryAfterSeconds: 0 };
}

/** Whether one of `declared`, counted `per` that subject, is reached for `subject`, without counting. */
export function requestsBlocked(limiter: RateLimiter, base: LimitBase, declared: readonly RequestLimits[], per: RequestSubject, workspaceId: string, subject: string): boolean {
  return declared.some((limits) => limits.per === per && !limiter.blocked(requestKey(limits, workspaceId, subject), limitOf(limits.rate, base), limits.rate.windowMs).allowed);
}

const MINUTE = 60_000;
/** The base rate of failures: RATE_LIMIT_FAILURES per 5 minutes. */
export const FAILURES_PER_5_MINUTES: Rate = { times: 1, scale: "failuresPer5Minutes", windowMs: 5 * MINUTE };
/** The usual account ceiling: 3 × RATE_LIMIT_FAILURES per hour, from every address together. */
export const ACCOUNT_FAILURES_PER_HOUR: Rate = { times: 3, scale: "failuresPer5Minutes", windowMs: 60 * MINUTE };
