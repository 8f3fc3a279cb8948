/**
 * The limits of the device flow, declared (lib/limits/declarations.ts) and enforced by the one
 * limiter; docs/security.md's table lists them (lib/server/limits.ts).
 */
import { FAILURES_PER_5_MINUTES, type GuessingLimits } from "../../limits/declarations";

const HOUR = 60 * 60_000;

/**
 * Wrong user codes on the device page: per client address, and per workspace from every address
 * together (the "account" counted is the workspace: a user code names no account until it matches).
 * Once reached, nothing is looked up and the page says to wait.
 */
export const USER_CODE_LIMITS: GuessingLimits = {
  name: "device-user-code",
  label: "Device user code (RFC 8628) on the device page, the account being the whole workspace",
  perChallenge: null,
  perAddress: FAILURES_PER_5_MINUTES,
  perAccount: { times: 10, scale: "failuresPer5Minutes", windowMs: HOUR },
};

/** The account USER_CODE_LIMITS counts under: the workspace itself. */
export const WHOLE_WORKSPACE = "*";
