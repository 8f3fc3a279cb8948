// What Next never sees: requests that its own handling would answer with a 500 or an unexpected
// redirect, refused (or cleaned) by the production listener before Next runs. Next serves pages,
// static files and the server actions of the console and of an organization's admin portal; everything under an issuer that is not a page is
// the route table's (lib/server/router.ts), which answers every method itself.

import { isIssuerRoutePath } from "./issuer-paths";

/** Pages under an issuer, by path relative to it: GET and HEAD only. */
const HOSTED_PAGES = new Set(["/sign-in"]);

/**
 * The one page under an issuer whose forms are server actions and which navigates client-side: an
 * organization's admin portal (lib/organizations/admin-portal), the console's cards for an
 * organization's own IT. Its actions are judged by the same-origin rule in proxy.ts, as the
 * console's are; Next's internal headers are kept for this exact path only.
 */
const ACTION_PAGES = new Set(["/organization-admin"]);

/**
 * Headers that make Next treat a request as a client-side navigation (RSC payload, prefetch) or
 * a server action. Nothing under an issuer uses either, and with them Next answers the issuer's
 * routes with a redirect to `?_rsc=…` or fails parsing an action body.
 */
const NEXT_INTERNAL_HEADERS = ["rsc", "next-router-state-tree", "next-router-prefetch", "next-router-segment-prefetch", "next-action", "next-url", "next-hmr-refresh"];

export type GateAnswer = { status: 400 | 403 | 404 | 405; error: string; allow?: string };

const READ_ONLY = "GET, HEAD";

const NEXT_IMAGE_PATH = "/_next/image";

function decodable(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks a request the listener is about to hand to Next (after health, the direct path and
 * unserved methods), by its path in normal form (the listener decided it:
 * ./request-target.ts, so this is the path Next routes). Returns the refusal to send instead, or
 * null; may remove Next's internal headers from `headers` under an issuer.
 */
export function gateForNext(method: string, pathname: string, headers: Record<string, string | string[] | undefined>): GateAnswer | null {
  // Next decodes dynamic segments and throws on a malformed escape (%FF, %C3%28). Under an issuer
  // such a path names no route: the generic 404 every unknown path gets.
  const issuer = isIssuerRoutePath(pathname);
  if (!decodable(pathname)) return issuer ? { status: 404, error: "Not found" } : { status: 400, error: "The request path is not valid percent-encoded UTF-8" };
  // Next's image optimizer: no page uses it, and given a page's path as its `url` it renders that
  // page internally (past every host and path rule) and fails with a 500.
  if (pathname === NEXT_IMAGE_PATH) return { status: 404, error: "Not found" };
  const readOnly = method === "GET" || method === "HEAD";
  // An issuer's paths (RFC 8414's metadata path included): the route table answers every method itself.
  if (issuer) {
    const subpath = /^\/t\/[^/]+(\/.*)$/.exec(pathname)?.[1];
    if (subpath !== undefined && ACTION_PAGES.has(subpath)) return null;
    for (const name of NEXT_INTERNAL_HEADERS) delete headers[name];
    if (!readOnly && subpath !== undefined && HOSTED_PAGES.has(subpath)) return { status: 405, error: "Method not allowed", allow: READ_ONLY };
    return null;
  }
  // The console's changes, however encoded, are judged by the same-origin rule in proxy.ts
  // (./server-action-origin.ts), which refuses any Origin that is not the site's own before Next
  // parses it.
  if (pathname === "/console" || pathname.startsWith("/console/")) return null;
  // The landing page and static files take no other method.
  if (!readOnly) return { status: 405, error: "Method not allowed", allow: READ_ONLY };
  return null;
}
