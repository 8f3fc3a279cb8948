// The request paths that belong to an issuer `{PUBLIC_URL}/t/{workspace}`, for the three that must
// agree on them: the route table (lib/server/router.ts), the production listener's fast check
// (lib/server/node-server.ts) and what Next is shielded from (./next-gate.ts).

/** A workspace id as it may appear in a path (every id the workspace file allows, and one-character ones). */
const WORKSPACE = "[a-z0-9][a-z0-9-]{0,62}";
const UNDER_ISSUER = new RegExp(`^/t/(${WORKSPACE})(/.*)$`);

/**
 * RFC 8414 §3.1: for an issuer with a path component, the authorization server metadata is at the
 * well-known segment inserted between the host and that path:
 * `/.well-known/oauth-authorization-server/t/{workspace}`.
 */
export const AUTHORIZATION_SERVER_METADATA_PREFIX = "/.well-known/oauth-authorization-server/t/";
const METADATA = new RegExp(`^/\\.well-known/oauth-authorization-server/t/(${WORKSPACE})$`);

/** Splits `/t/{workspace}/{rest}`; null when the path is not under an issuer. */
export function splitIssuerPath(pathname: string): { workspaceId: string; subpath: string } | null {
  const match = UNDER_ISSUER.exec(pathname);
  return match ? { workspaceId: match[1], subpath: match[2] } : null;
}

/** The workspace whose RFC 8414 metadata `pathname` names, or null. */
export function metadataWorkspace(pathname: string): string | null {
  return METADATA.exec(pathname)?.[1] ?? null;
}

/**
 * Whether a request target (path and query) may be an issuer's: under `/t/`, or its RFC 8414
 * metadata. Two prefix tests: the production listener makes it on every request.
 */
export function mayBeIssuerPath(target: string): boolean {
  return target.startsWith("/t/") || target.startsWith(AUTHORIZATION_SERVER_METADATA_PREFIX);
}

/**
 * The paths Next's route files answer for an issuer, whatever the method: everything under `/t/`
 * (a catch-all included) and the metadata path of any one segment
 * (app/.well-known/oauth-authorization-server/t/[tenant]/route.ts).
 */
export function isIssuerRoutePath(pathname: string): boolean {
  return pathname.startsWith("/t/") || /^\/\.well-known\/oauth-authorization-server\/t\/[^/]+$/.test(pathname);
}
