/**
 * The invitations' limits and lifetimes, declared (lib/limits/declarations.ts) and enforced by the
 * one limiter; docs/security.md's tables list them (lib/server/limits.ts).
 */
import { DAY, HOUR } from "../../clock";
import type { GuessingLimits, RequestLimits } from "../../limits/declarations";

/** An invitation's link is valid for 7 days from when it was (last) sent. */
export const INVITATION_TTL_MS = 7 * DAY;

/**
 * Invitations sent (or sent again) per organization: 50 an hour, from every inviter together, so
 * nobody mails strangers in bulk under an organization's name. The "account" counted is the
 * organization; a send over the limit is refused before anything is stored or mailed.
 */
export const INVITATIONS_SENT: GuessingLimits = {
  name: "org-invites",
  label: "Organization invitations sent (or sent again) per organization, the account being the organization",
  perChallenge: null,
  perAccount: { times: 50, scale: null, windowMs: HOUR },
};

/**
 * Posts of the acceptance page per client address: each is a lookup of a link's secret (256 bits,
 * so not guessable) and may hash a password, so the address is limited like a sign-in step.
 */
export const ACCEPTANCE_ATTEMPTS: RequestLimits = {
  name: "invite-accept",
  label: "Organization invitation acceptances (the acceptance page's posts)",
  per: "client address",
  rate: { times: 1, scale: "failuresPer5Minutes", windowMs: 5 * 60_000 },
};
