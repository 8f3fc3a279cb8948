/**
 * The one request-target rule: what the production listener (lib/server/node-server.ts) decides
 * from the request line before any rule looks at the path or the host, so that the listener, the
 * route table and Next judge the same request.
 *
 * - The path must be in normal form: what a URL parser (WHATWG, as browsers and Next parse it)
 *   makes of it is the path itself. A path with dot segments (`/t/a/../b`, also percent-encoded,
 *   `%2e%2e`, `.%2E`), backslashes, a leading `//` or characters a URL would percent-encode is
 *   refused (400): no browser sends one, and no rule is asked to guess which path another part
 *   would resolve it to.
 * - An absolute-form target (`GET http://host/path HTTP/1.1`, RFC 9112 §3.2.2) names its host in
 *   its authority, which is then the request's host (RFC 9112 §3.3), judged by the one host rule
 *   (./request-host.ts) in place of `Host`; the path and query go on in origin form.
 * - Any other form (`*`, `host:port`) is refused (400).
 */

export type RequestTarget =
  | {
      ok: true;
      /** The path, in normal form. */
      path: string;
      /** The query with its `?`, or "". */
      query: string;
      /** The authority of an absolute-form target (not checked here: it is a host to judge), else null. */
      authority: string | null;
    }
  | { ok: false; error: string };

const ABSOLUTE = /^https?:\/\//i;

/** The request target `raw` (as Node gives it in `req.url`) decided, or why it is refused. */
export function requestTargetOf(raw: string): RequestTarget {
  let authority: string | null = null;
  let rest = raw;
  if (raw.charCodeAt(0) !== 47 /* / */) {
    const scheme = ABSOLUTE.exec(raw);
    if (!scheme) return { ok: false, error: "The request target is not valid" };
    const after = raw.slice(scheme[0].length);
    const end = after.search(/[/?#]/);
    authority = end === -1 ? after : after.slice(0, end);
    rest = end === -1 ? "/" : after.slice(end);
    if (rest.charCodeAt(0) !== 47) rest = `/${rest}`;
  }
  const mark = rest.indexOf("?");
  const path = mark === -1 ? rest : rest.slice(0, mark);
  const query = mark === -1 ? "" : rest.slice(mark);
  if (!isNormalPath(path)) return { ok: false, error: "The request path is not in normal form" };
  return { ok: true, path, query, authority };
}

/** Whether a URL parser leaves `path` as it is (no dot segments, no `\`, no leading `//`, nothing it would encode). */
export function isNormalPath(path: string): boolean {
  try {
    return new URL(path, "http://h").pathname === path;
  } catch {
    return false;
  }
}
