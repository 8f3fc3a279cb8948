/**
 * Screening of a new password (NIST SP 800-63B §5.1.1.2): wherever a password is set (sign-up,
 * the console, the workspace file, the command line), a workspace whose policy screens
 * (./policy.ts) refuses one that
 * - is on the bundled list of common passwords, drawn from breach corpora (zxcvbn-ts's common
 *   list, ~49,000 passwords, compared without case);
 * - the breach range service knows, where the installation configures one (./breach-range.ts:
 *   only the first 5 hex characters of its SHA-1 leave the server);
 * - zxcvbn scores below the policy's minimum (0–4), against the account's own words too (its
 *   address, its name): "guessable".
 * The length rule (lib/authn/password-rules.ts) is checked before, by every form.
 *
 * zxcvbn and its lists (~4 MB of heap) are loaded on the first screening, never by a process that
 * does not screen. Scoring is bounded to the first SCORED_LENGTH characters: its cost grows with
 * the length (~100 ms for 256 repeated characters), and a longer password is not weak for its
 * tail.
 */
import type { ZxcvbnFactory } from "@zxcvbn-ts/core";
import { CodedError } from "../../coded-error";
import { DEFAULT_LOCALE } from "../../i18n/locales";
import { translate } from "../../i18n/translate";

/** Why a password is refused: its code, which every surface words in its own language. */
export type ScreeningRefusal = "password_common" | "password_breached" | "password_guessable";

/** The refusal of a screened password; `field` is the console form's. */
export class PasswordRefused extends CodedError<ScreeningRefusal> {
  constructor(code: ScreeningRefusal, field = "password") {
    // The console and the command line speak English; the hosted pages word the code in the page's language.
    super(code, translate(DEFAULT_LOCALE, `error.${code}`), { field });
  }
}

/** zxcvbn scores at most this many characters of a password. */
export const SCORED_LENGTH = 64;

export interface ScreeningOptions {
  /** zxcvbn's score (0–4) a password must reach. */
  minimumScore: number;
  /** The account's own words (its address, its name): a password built from them is guessable. */
  userInputs?: readonly string[];
  /** Whether the breach range service knows the password (./breach-range.ts); absent: not asked. */
  knownBreached?: ((password: string) => Promise<boolean>) | undefined;
}

let factory: Promise<{ zxcvbn: ZxcvbnFactory; common: Set<string> }> | undefined;

function scorer() {
  factory ??= (async () => {
    const [{ ZxcvbnFactory }, language] = await Promise.all([import("@zxcvbn-ts/core"), import("@zxcvbn-ts/language-common")]);
    const dictionary = language.dictionary as Record<string, string[]>;
    const zxcvbn = new ZxcvbnFactory({ dictionary, graphs: language.adjacencyGraphs, maxLength: SCORED_LENGTH });
    return { zxcvbn, common: new Set(dictionary["passwords-common"]) };
  })().catch((error) => {
    factory = undefined;
    throw error;
  });
  return factory;
}

/** Whether `password` is on the bundled list of common passwords (without case, surrounding spaces ignored). */
export async function isCommonPassword(password: string): Promise<boolean> {
  return (await scorer()).common.has(password.trim().toLowerCase());
}

/** zxcvbn's score of `password` (0–4), with the account's own words as known to an attacker. */
export async function passwordScore(password: string, userInputs: readonly string[] = []): Promise<number> {
  const words = userInputs.flatMap((w) => [w, ...w.toLowerCase().split(/[^a-z0-9]+/)]).filter((w) => w.length >= 3);
  return (await scorer()).zxcvbn.check(password.slice(0, SCORED_LENGTH), words).score;
}

/** The refusal for `password` under `options`, or null when it may be set. The list first, then the range service, then the score. */
export async function screeningRefusal(password: string, options: ScreeningOptions): Promise<ScreeningRefusal | null> {
  if (await isCommonPassword(password)) return "password_common";
  if (options.knownBreached && (await options.knownBreached(password))) return "password_breached";
  if ((await passwordScore(password, options.userInputs)) < options.minimumScore) return "password_guessable";
  return null;
}
