/**
 * The language of the request being answered. The route table (lib/server/router.ts) runs every
 * endpoint inside `withLocale(negotiateLocale(Accept-Language))`, so the hosted error pages and
 * the emails an endpoint sends speak the browser's language without each caller passing it.
 * Outside a request (the console, the CLI, tests calling a function directly) it is English.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { DEFAULT_LOCALE, negotiateLocale, type Locale } from "./locales";

const storage = new AsyncLocalStorage<Locale>();

export function withLocale<T>(locale: Locale, run: () => T): T {
  return storage.run(locale, run);
}

/** Runs `run` in the language the request's Accept-Language asks for. */
export function withRequestLocale<T>(request: Request, run: () => T): T {
  return withLocale(negotiateLocale(request.headers.get("accept-language")), run);
}

export function currentLocale(): Locale {
  return storage.getStore() ?? DEFAULT_LOCALE;
}
