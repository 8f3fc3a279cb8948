import { hostedErrorPageCss } from "../branding/css";
import type { Locale } from "../i18n/locales";
import { currentLocale } from "../i18n/request-locale";
import { translate } from "../i18n/translate";
import { escapeHtml, HOSTED_PAGE_HEADERS } from "./html";

/**
 * A self-contained hosted page that tells the user where they stand and offers one link onward,
 * never following it by itself (hosted logout's "already signed out of this application" page).
 * Same look and headers as the hosted error page; `href` must be a destination the caller has
 * verified (a registered one), since the page offers it to the user.
 */
export function hostedNoticePage(status: number, locale: Locale, page: { title: string; message: string; next: string; link: { href: string; text: string } }): Response {
  const body = `<!doctype html>
<html lang="${locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)} · Latchkey</title>
<style>
${hostedErrorPageCss()}
a{color:#4338ca;font-weight:600}@media (prefers-color-scheme: dark){a{color:#a5b4fc}}
</style></head>
<body><main><h1>${escapeHtml(page.title)}</h1><p>${escapeHtml(page.message)}</p><p>${escapeHtml(page.next)}</p><p><a href="${escapeHtml(page.link.href)}">${escapeHtml(page.link.text)}</a></p></main></body></html>`;
  return new Response(body, { status, headers: { "Content-Type": "text/html; charset=utf-8", ...HOSTED_PAGE_HEADERS } });
}

/**
 * Hosted logout for an application whose sign-in in this browser session had already ended (its
 * grant revoked first, as SPEC.md warns): the user is signed out of it, the hosted session stays
 * (logout needs the grant to end it), and the application's registered destination is offered as
 * a link rather than followed. 400: the logout itself was not carried out.
 */
export function signedOutOfApplicationPage(input: { application: string; destination: string }): Response {
  const locale = currentLocale();
  const application = { application: input.application };
  return hostedNoticePage(400, locale, {
    title: translate(locale, "logout.signed_out.title", application),
    message: translate(locale, "logout.signed_out.message", application),
    next: translate(locale, "logout.signed_out.next"),
    link: { href: input.destination, text: translate(locale, "logout.signed_out.continue", application) },
  });
}
