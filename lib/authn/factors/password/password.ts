/**
 * The account's password as a factor: no challenge (the user types the secret), verified by
 * argon2id (lib/authn/password.ts). Its guessing limits are declared here and counted on the same
 * counters in the sign-in and in the portal's re-verification.
 */
import { ACCOUNT_FAILURES_PER_HOUR, FAILURES_PER_5_MINUTES, type GuessingLimits } from "../../../limits/declarations";
import { knownAfter } from "../limits";

export const PASSWORD_LIMITS: GuessingLimits = {
  name: "password",
  label: "Password",
  perChallenge: null,
  perAccountAndAddress: FAILURES_PER_5_MINUTES,
  perAccount: ACCOUNT_FAILURES_PER_HOUR,
  knownDevice: { after: knownAfter("password"), rate: FAILURES_PER_5_MINUTES },
};
