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

/** A self-contained hosted error page (the authorize endpoint answers with it before the client is verified). */
export function hostedErrorPage(
  status: number,
  title: string,
  message: string,
  code?: string,
  next = "Return to the application you came from and start signing in again.",
): Response {
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Latchkey</title>
<style>
body{margin:0;font-family:ui-sans-serif,system-ui,-apple-system,"Segoe UI",sans-serif;background:#f8fafc;color:#0f172a;display:flex;min-height:100vh;align-items:center;justify-content:center}
main{max-width:28rem;margin:1rem;padding:2rem;background:#fff;border:1px solid #e2e8f0;border-radius:.75rem;box-shadow:0 1px 2px rgba(0,0,0,.05)}
h1{font-size:1.25rem;margin:0 0 .75rem}p{line-height:1.5;color:#334155;margin:0 0 .75rem}code{font-size:.85rem;background:#f1f5f9;padding:.1rem .3rem;border-radius:.25rem}
</style></head>
<body><main role="alert"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${
    code ? `<p>Error code: <code>${escapeHtml(code)}</code></p>` : ""
  }<p>${escapeHtml(next)}</p></main></body></html>`;
  return new Response(body, { status, headers: { "Content-Type": "text/html; charset=utf-8", ...HOSTED_PAGE_HEADERS } });
}
