import { hostedErrorPageCss } from "../branding/css";

import { DEFAULT_LOCALE, type Locale } from "../i18n/locales";
import { translate } from "../i18n/translate";

/** Headers every hosted page sends: no framing, no referrer, no sniffing, nothing from third parties. */
export const HOSTED_PAGE_HEADERS: Record<string, string> = {
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Cache-Control": "no-store",
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/**
 * A line under a hosted error page's message that helps whoever wrote the request fix it: a
 * translated sentence, then the values it names (each shown as code), or a link. All of it text,
 * escaped here.
 */
export interface HostedErrorDetail {
  text: string;
  values?: readonly string[];
  /** An absolute URL on this server (the console), never one taken from the request. */
  link?: { href: string; text: string };
}

function detailHtml(detail: HostedErrorDetail): string {
  const values = detail.values?.length ? `<ul>${detail.values.map((v) => `<li><code>${escapeHtml(v)}</code></li>`).join("")}</ul>` : "";
  const text = detail.link ? `<a href="${escapeHtml(detail.link.href)}">${escapeHtml(detail.link.text)}</a>` : escapeHtml(detail.text);
  return `<p>${text}</p>${values}`;
}

/**
 * A self-contained hosted error page (the authorize endpoint answers with it before the client is
 * verified). Title, message, details and next line come translated (lib/hosted/errors.ts); the
 * page's own words ("Error code:", the default next line) and its `lang` follow `locale`.
 */
export function hostedErrorPage(
  status: number,
  title: string,
  message: string,
  code?: string,
  next?: string,
  locale: Locale = DEFAULT_LOCALE,
  details: readonly HostedErrorDetail[] = [],
): Response {
  next ??= translate(locale, "error.next.default");
  const body = `<!doctype html>
<html lang="${locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Latchkey</title>
<style>
${hostedErrorPageCss()}
</style></head>
<body><main role="alert"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${details.map(detailHtml).join("")}${
    code ? `<p>${escapeHtml(translate(locale, "error.page.code"))} <code>${escapeHtml(code)}</code></p>` : ""
  }<p>${escapeHtml(next)}</p></main></body></html>`;
  return new Response(body, { status, headers: { "Content-Type": "text/html; charset=utf-8", ...HOSTED_PAGE_HEADERS } });
}
