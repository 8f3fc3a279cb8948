/**
 * Every state-changing request Next answers is judged by the one same-origin rule of every form
 * post (`sameOriginRequest`, lib/http/guards.ts) in proxy.ts, before Next handles it, whatever its
 * encoding: a server action sent by Next's client (`Next-Action`), the plain multipart form a
 * browser without JavaScript posts with the page's `$ACTION_ID_*` / `$ACTION_REF_*` /
 * `$ACTION_KEY` fields (no `Next-Action`), an urlencoded post, or any other POST, PUT, PATCH or
 * DELETE to the console, a hosted page or a path under an issuer that no route answers. The rule
 * reads headers only, never the body. The route table's own paths (ISSUER_ROUTE_PATH) are not
 * Next's: their browser forms declare the same rule as a guard.
 *
 * Refused (403): an `Origin` that is not the site's own (another host, a sibling subdomain,
 * another port or scheme), `Origin: null` without `Sec-Fetch-Site: same-origin`, and a request
 * with neither header. Next alone would answer a foreign origin with a 500 and let a missing one,
 * or any post without `Next-Action`, run the action.
 *
 * Accepted: the request goes on to Next with `Origin` set to the origin it was judged against.
 * A browser's own form under `Referrer-Policy: no-referrer` says `Origin: null` (with
 * `Sec-Fetch-Site: same-origin`), which Next compares with the Host and refuses with a 500; once
 * the rule has accepted it, Next sees the site's origin instead.
 */
import { sameOriginRequest } from "./guards";
import { requestHostOf } from "./request-host";

/** Methods that change nothing: never judged. */
const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The origin a state-changing request to `pathname` must come from: under an issuer (`/t/…`, also
 * served at the workspace's own hostnames, lib/hostnames), PUBLIC_URL's scheme with the host the
 * request was sent to (the request-host rule, lib/http/request-host.ts; the production listener has
 * already answered every host that does not serve the path); everywhere else, PUBLIC_URL's origin
 * (the console is served at the default host only).
 */
export function judgedOrigin(pathname: string, headers: { get(name: string): string | null }, publicUrl: string, trustProxy: boolean): string {
  if (!pathname.startsWith("/t/")) return publicUrl;
  const host = requestHostOf(headers, trustProxy);
  return host.kind === "host" ? `${new URL(publicUrl).protocol}//${host.host}` : publicUrl;
}

/**
 * Judges a request Next is about to answer: null when its method changes nothing; a 403 when the
 * rule refuses it; otherwise the origin it came from, which proxy.ts presents to Next as `Origin`.
 */
export function judgeStateChange(request: Request, publicUrl: string, trustProxy: boolean): Response | string | null {
  if (SAFE_METHODS.has(request.method)) return null;
  const origin = judgedOrigin(new URL(request.url).pathname, request.headers, publicUrl, trustProxy);
  if (sameOriginRequest(request, origin)) return origin;
  return new Response("Forbidden: this form was not sent from this site's own pages.\n", {
    status: 403,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" },
  });
}
