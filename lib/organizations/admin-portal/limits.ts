/**
 * The admin portal's lifetimes and declared limits (lib/limits/declarations.ts), enforced by the
 * one limiter; docs/security.md's tables list them (lib/server/limits.ts).
 */
import { HOUR } from "../../clock";
import { FAILURES_PER_5_MINUTES, type GuessingLimits, type RequestLimits } from "../../limits/declarations";

/** A setup link is valid for 7 days unless its maker chooses otherwise: 1 hour to 30 days. */
export const LINK_TTL_DEFAULT_HOURS = 7 * 24;
export const LINK_TTL_MAX_HOURS = 30 * 24;

/** A portal session started from a link: at most 8 hours, and it ends after an idle hour. */
export const PORTAL_SESSION_ABSOLUTE_MS = 8 * HOUR;
export const PORTAL_SESSION_IDLE_MS = HOUR;
/** How often a live session's last use is written (its idle clock). */
export const PORTAL_SEEN_WRITE_MS = 60_000;

/**
 * Setup links made per organization: 20 an hour, from every operator together; the "account"
 * counted is the organization. Over it, the console refuses before anything is stored.
 */
export const PORTAL_LINKS_MADE: GuessingLimits = {
  name: "portal-links",
  label: "Admin portal setup links made per organization, the account being the organization",
  perChallenge: null,
  perAccount: { times: 20, scale: null, windowMs: HOUR },
};

/**
 * Posts of the setup link's page per client address (asking for a code, entering it): each looks
 * a link's secret up (256 bits, not guessable); the code itself is the email-code factor's (its
 * sends and guesses are limited there).
 */
export const PORTAL_ENTRY_ATTEMPTS: RequestLimits = {
  name: "portal-entry",
  label: "Admin portal setup link posts (a code asked for or entered)",
  per: "client address",
  rate: FAILURES_PER_5_MINUTES,
};
