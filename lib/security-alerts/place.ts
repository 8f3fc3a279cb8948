/**
 * An approximate place for a client address, for the security alerts, only where the installation
 * configures a lookup (ALERT_PLACE_LOOKUP_URL: the address is sent to that service). The answer is
 * JSON with a city, a region and a country under the names the common services use (ipinfo.io,
 * ipapi.co, ip-api.com); a service that fails, answers late or answers nothing usable leaves the
 * alert with the address alone.
 */
import type { Config } from "../config";
import { logError } from "../http/log";

export const PLACE_LOOKUP_TIMEOUT_MS = 2_000;
const MAX_ANSWER_BYTES = 16 * 1024;
const MAX_PART = 80;

const PARTS = [
  ["city"],
  ["region", "regionName", "region_name"],
  ["country_name", "country"],
] as const;

/** "Berlin, Land Berlin, Germany" from the service's answer; null when it names no place. */
export function placeOf(answer: unknown): string | null {
  if (typeof answer !== "object" || answer === null) return null;
  const record = answer as Record<string, unknown>;
  const parts: string[] = [];
  for (const names of PARTS) {
    const value = names.map((n) => record[n]).find((v): v is string => typeof v === "string" && v.trim() !== "");
    // A service's words go into an email: printable, short, each once.
    const part = value?.trim().replace(/[\p{C}]/gu, "").slice(0, MAX_PART);
    if (part && !parts.includes(part)) parts.push(part);
  }
  return parts.length ? parts.join(", ") : null;
}

/** The place the configured service gives for `address`, or null (none configured, or none known). */
export async function lookUpPlace(service: { config: Pick<Config, "alertPlaceLookupUrl">; fetch: typeof fetch }, address: string): Promise<string | null> {
  const template = service.config.alertPlaceLookupUrl;
  if (!template) return null;
  try {
    const response = await service.fetch(template.replace("{address}", encodeURIComponent(address)), {
      headers: { Accept: "application/json" },
      signal: AbortSignal.timeout(PLACE_LOOKUP_TIMEOUT_MS),
      redirect: "error",
    });
    if (!response.ok) throw new Error(`answered ${response.status}`);
    const text = await response.text();
    if (text.length > MAX_ANSWER_BYTES) throw new Error("answered too much");
    return placeOf(JSON.parse(text));
  } catch (error) {
    logError("the place lookup of a security alert failed; the alert shows the address alone", error instanceof Error ? error.message : String(error));
    return null;
  }
}
