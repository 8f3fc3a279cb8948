/**
 * The breach range service (the k-anonymity "range" API Have I Been Pwned's Pwned Passwords
 * serves, and mirrors of it), off unless the installation sets PASSWORD_BREACH_RANGE_URL: only
 * the first 5 hex characters of the password's SHA-1 leave the server, with `Add-Padding: true`
 * so the answer's size says nothing either; the service answers every suffix it knows under that
 * prefix (`SUFFIX:COUNT` lines, padding entries with a count of 0), and the rest is compared here.
 *
 * It fails open: a service that cannot be reached, answers late or answers something else lets
 * the password through, with a log line, as the bundled list and the score still apply.
 */
import { createHash } from "node:crypto";
import type { Config } from "../../config";
import { logError } from "../../http/log";

/** How long a range request may take before the password is let through. */
export const BREACH_RANGE_TIMEOUT_MS = 2_000;

/** The range service's answer to a prefix: at most this much is read. */
const MAX_ANSWER_BYTES = 512 * 1024;

/**
 * Whether the service at `baseUrl` (the prefix is appended: `…/range/` + `ABCDE`) knows `password`
 * from a breach; false when it cannot say.
 */
export async function breachedPerRange(fetcher: typeof fetch, baseUrl: string, password: string): Promise<boolean> {
  const hash = createHash("sha1").update(password, "utf8").digest("hex").toUpperCase();
  const prefix = hash.slice(0, 5);
  const suffix = hash.slice(5);
  try {
    const response = await fetcher(`${baseUrl}${prefix}`, {
      headers: { "Add-Padding": "true", Accept: "text/plain" },
      signal: AbortSignal.timeout(BREACH_RANGE_TIMEOUT_MS),
      redirect: "error",
    });
    if (!response.ok) throw new Error(`answered ${response.status}`);
    const text = await response.text();
    if (text.length > MAX_ANSWER_BYTES) throw new Error("answered too much");
    for (const line of text.split("\n")) {
      const [candidate, count] = line.trim().split(":");
      if (candidate?.toUpperCase() === suffix && Number(count) > 0) return true;
    }
    return false;
  } catch (error) {
    logError("the breach range service could not be asked; the password was screened without it", error instanceof Error ? error.message : String(error));
    return false;
  }
}

/** The installation's range-service check (PASSWORD_BREACH_RANGE_URL), or undefined when it configures none. */
export function breachRangeCheck(service: { config: Pick<Config, "passwordBreachRangeUrl">; fetch: typeof fetch }): ((password: string) => Promise<boolean>) | undefined {
  const url = service.config.passwordBreachRangeUrl;
  return url ? (password) => breachedPerRange(service.fetch, url, password) : undefined;
}
