/**
 * Recognising a browser, for the "new browser" alert: a long-lived random `lk_browser` cookie under
 * the workspace's path (`Secure; HttpOnly; SameSite=Lax`), of which only the SHA-256 is kept, per
 * account, in `known_browsers`. A sign-in is from a new browser when the account completed sign-ins
 * before, never from this one: an account's first sign-in (just signed up, or the first since
 * this feature arrived) teaches its browser without alerting.
 *
 * A completed sign-in costs one statement here, which also keeps the account's language (the
 * page's, lib/i18n) for the alerts it is sent.
 */
import { sql } from "drizzle-orm";
import { DAY } from "../clock";
import { randomToken, sha256Base64Url } from "../crypto";
import { negotiateLocale } from "../i18n/locales";
import { parseCookieHeader, serializeCookie } from "../http/cookies";
import type { EndpointContext } from "../http/context";
import { parseUserAgent } from "../user-agent";

export const BROWSER_COOKIE = "lk_browser";
/** As long as browsers keep a cookie (Chrome caps Max-Age at 400 days); a browser unseen this long is forgotten. */
export const BROWSER_REMEMBERED_MS = 400 * DAY;

const VALUE = /^[A-Za-z0-9_-]{43}$/;

/** This browser's mark: the one its cookie holds, else a new one; `cookie` sets it (again) for another BROWSER_REMEMBERED_MS. */
export function browserMark(ctx: Pick<EndpointContext, "basePath">, cookieHeader: string | null): { value: string; cookie: string } {
  const held = parseCookieHeader(cookieHeader).get(BROWSER_COOKIE);
  const value = held && VALUE.test(held) ? held : randomToken(32);
  return { value, cookie: serializeCookie(BROWSER_COOKIE, value, ctx.basePath, BROWSER_REMEMBERED_MS / 1000) };
}

/** What a completed sign-in's event says of its browser: `new_browser` and its description when the account had not used it before. */
export type BrowserNote = { new_browser: true; browser: string } | Record<never, never>;

/**
 * Records the sign-in's browser for the account, and the page's language as the account's, in one
 * statement; says whether the browser is new to an account that had signed in elsewhere before.
 */
export async function noteSignInBrowser(ctx: Pick<EndpointContext, "service" | "workspace">, request: Request, userId: string, mark: string): Promise<BrowserNote> {
  const ws = ctx.workspace.id;
  const hash = sha256Base64Url(mark);
  const now = ctx.service.clock.now().toISOString();
  const locale = negotiateLocale(request.headers.get("accept-language"));
  const result = await ctx.service.db.execute(sql`
    with language as (
      update users set locale = ${locale} where workspace_id = ${ws} and id = ${userId} and locale is distinct from ${locale}
    ), seen as (
      insert into known_browsers (workspace_id, user_id, browser_hash, first_seen_at, last_seen_at)
      values (${ws}, ${userId}, ${hash}, ${now}::timestamptz, ${now}::timestamptz)
      on conflict (workspace_id, user_id, browser_hash) do update set last_seen_at = excluded.last_seen_at
      returning (xmax = 0) as inserted
    )
    select seen.inserted, exists (select 1 from known_browsers k where k.workspace_id = ${ws} and k.user_id = ${userId} and k.browser_hash <> ${hash}) as others
    from seen`);
  // postgres.js returns the rows; PGlite returns { rows }.
  const [row] = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { inserted: boolean; others: boolean }[];
  if (!row?.inserted || !row.others) return {};
  return { new_browser: true, browser: parseUserAgent(request.headers.get("user-agent")).label };
}
