/**
 * What a request was for, in a small fixed vocabulary: the one classification the request log
 * line and the HTTP metrics share (./request-log.ts). Derived from the path alone, never from a
 * value the client chose beyond it: a path outside the vocabulary is `other`, and the workspace is
 * named only when the path names a well-formed one (lib/http/issuer-paths.ts).
 */
import { HEALTH_PATHS } from "../http/health";
import { metadataWorkspace, splitIssuerPath } from "../http/issuer-paths";

export const REQUEST_FAMILIES = [
  "token",
  "authorize",
  "discovery",
  "jwks",
  "userinfo",
  "session_check",
  "introspect",
  "revoke",
  "logout",
  "sign_in",
  "federation",
  "portal",
  "handoff",
  "authorization_check",
  "device",
  "invitation",
  "organization_portal",
  "scim",
  "console",
  "demo",
  "health",
  "static",
  "other",
] as const;

export type RequestFamily = (typeof REQUEST_FAMILIES)[number];

export interface RequestPlace {
  family: RequestFamily;
  /** The workspace the path names (under `/t/{workspace}`, or its RFC 8414 metadata), else null. */
  workspace: string | null;
}

/** The route table's single paths under an issuer (lib/server/router.ts). */
const ISSUER_ENDPOINTS = new Map<string, RequestFamily>([
  ["/.well-known/openid-configuration", "discovery"],
  ["/.well-known/jwks.json", "jwks"],
  ["/oauth2/authorize", "authorize"],
  // A pushed authorization request (lib/oauth/pushed-authorization) is the authorization request's first half.
  ["/oauth2/par", "authorize"],
  ["/oauth2/token", "token"],
  ["/oauth2/revoke", "revoke"],
  ["/oauth2/introspect", "introspect"],
  ["/oidc/userinfo", "userinfo"],
  ["/oidc/session", "session_check"],
  ["/oidc/logout", "logout"],
  ["/authorization/check", "authorization_check"],
  // The device authorization grant (lib/oauth/device-authorization): its endpoint and the device page.
  ["/oauth2/device_authorization", "device"],
  ["/device", "device"],
  // An organization's member invitation (lib/organizations/invitations): its page and its acceptance.
  ["/invitation", "invitation"],
  ["/invitation/accept", "invitation"],
  // An organization's admin portal (lib/organizations/admin-portal): its page; its posts are below it.
  ["/organization-admin", "organization_portal"],
  // The account-security portal's direct link (the handoff's paths are below /auth/account/).
  ["/auth/account", "portal"],
  ["/account", "portal"],
  ["/sign-in", "sign_in"],
  // Signing in through an enterprise connection or a social provider starts here.
  ["/sign-in/federation", "federation"],
  ["/sign-in/federation/cancel", "federation"],
  ["/sign-in/sso", "federation"],
]);

/** Families of the paths below a prefix under an issuer, checked in order. */
const ISSUER_PREFIXES: readonly (readonly [string, RequestFamily])[] = [
  ["/sign-in/", "sign_in"],
  ["/sign-up/", "sign_in"],
  ["/federation/", "federation"],
  ["/auth/account/", "handoff"],
  ["/account/", "portal"],
  ["/branding/", "static"],
  ["/device/", "device"],
  // SCIM provisioning (lib/organizations/scim): every path below the API's prefix.
  ["/scim/", "scim"],
  ["/organization-admin/", "organization_portal"],
];

function issuerFamily(subpath: string): RequestFamily {
  const exact = ISSUER_ENDPOINTS.get(subpath);
  if (exact) return exact;
  for (const [prefix, family] of ISSUER_PREFIXES) if (subpath.startsWith(prefix)) return family;
  return "other";
}

/** Files Next serves at the root (app/ and public/). */
const ROOT_FILES = new Set(["/favicon.ico", "/icon.svg", "/robots.txt"]);

function within(pathname: string, prefix: string): boolean {
  return pathname === prefix || (pathname.startsWith(prefix) && pathname.charCodeAt(prefix.length) === 47 /* / */);
}

/**
 * The path the application routes for a request target: without the query, dot segments and
 * percent-encoding resolved as the URL parser does (only when there are any: the usual path is
 * taken as it is).
 */
function routedPath(target: string): string {
  const query = target.indexOf("?");
  const raw = query === -1 ? target : target.slice(0, query);
  if (!raw.includes("/.") && !raw.includes("%") && !raw.includes("\\")) return raw;
  try {
    return new URL(raw, "http://h").pathname;
  } catch {
    return raw;
  }
}

/** The family and workspace of a request target (path and query, as Node gives it). */
export function requestPlace(target: string): RequestPlace {
  const pathname = routedPath(target);
  if (pathname.startsWith("/t/")) {
    const split = splitIssuerPath(pathname);
    return split ? { family: issuerFamily(split.subpath), workspace: split.workspaceId } : { family: "other", workspace: null };
  }
  if (HEALTH_PATHS.has(pathname)) return { family: "health", workspace: null };
  if (pathname.startsWith("/_next/") || ROOT_FILES.has(pathname)) return { family: "static", workspace: null };
  if (within(pathname, "/console")) return { family: "console", workspace: null };
  if (within(pathname, "/demo")) return { family: "demo", workspace: null };
  if (pathname.startsWith("/.well-known/")) {
    const workspace = metadataWorkspace(pathname);
    if (workspace !== null) return { family: "discovery", workspace };
    // The WebAuthn related origins document (lib/hostnames/related-origins.ts).
    if (pathname === "/.well-known/webauthn") return { family: "discovery", workspace: null };
  }
  return { family: "other", workspace: null };
}
