/**
 * "Not now" on the optional passkey offer holds on this device for 30 days: the skip sets a cookie
 * under the workspace's path (`lk_passkey_later`, `Secure; HttpOnly; SameSite=Lax`), bound to the
 * workspace and the account that said it and to when it did (an HMAC under a key derived from the
 * master key), and the sign-in does not offer a passkey again to that account in this browser
 * until it is 30 days old. A required passkey (the policy's `require`, or a sign-up with a
 * passkey) is asked for whatever the cookie says. One cookie per browser and workspace: the last
 * account that said "Not now" there.
 */
import { deriveKey, hmacBase64Url, safeEqual } from "../crypto";
import { DAY } from "../clock";
import { parseCookieHeader, serializeCookie } from "../http/cookies";
import type { EndpointContext } from "../http/context";

export const PASSKEY_LATER_COOKIE = "lk_passkey_later";
export const PASSKEY_OFFER_QUIET_MS = 30 * DAY;

type Ctx = Pick<EndpointContext, "service" | "workspace">;

const mac = (ctx: Ctx, userId: string, at: number) =>
  hmacBase64Url(deriveKey(ctx.service.config.masterKey, "passkey-offer-later"), `${ctx.workspace.id}\n${userId}\n${at}`);

/** The Set-Cookie of a "Not now" by `userId`, now. */
export function passkeyLaterCookie(ctx: Ctx & Pick<EndpointContext, "basePath">, userId: string): string {
  const at = Math.floor(ctx.service.clock.now().getTime() / 1000);
  return serializeCookie(PASSKEY_LATER_COOKIE, `${at}.${mac(ctx, userId, at)}`, ctx.basePath, PASSKEY_OFFER_QUIET_MS / 1000);
}

/** Whether this browser holds `userId`'s "Not now" in this workspace, said less than 30 days ago. */
export function passkeyOfferDeclinedHere(ctx: Ctx, cookieHeader: string | null, userId: string): boolean {
  const value = parseCookieHeader(cookieHeader).get(PASSKEY_LATER_COOKIE);
  const match = value ? /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value) : null;
  if (!match) return false;
  const at = Number(match[1]);
  const age = ctx.service.clock.now().getTime() - at * 1000;
  if (age < 0 || age >= PASSKEY_OFFER_QUIET_MS) return false;
  return safeEqual(match[2]!, mac(ctx, userId, at));
}
