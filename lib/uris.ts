/**
 * Registration rules for client URIs (redirect, post-logout) and browser origins. Pure functions
 * returning an error message or null, shared by the workspace file and anything else that
 * registers clients. Matching at request time is exact string comparison, so registered values
 * must already be in the canonical form the URL parser produces.
 */
import { isLoopbackHost } from "./config";

/** Schemes that are never a place to send an authorization response, even for native apps. */
const FORBIDDEN_SCHEMES = new Set(["javascript:", "data:", "file:", "vbscript:", "blob:", "about:", "ftp:", "ws:", "wss:"]);

export { isLoopbackHost };

/**
 * A redirect or post-logout redirect URI: absolute, no fragment, no credentials, no wildcards,
 * canonical; https, or http on a loopback host; a private-use (reverse-domain) scheme such as
 * `com.example.app:/callback` only when `allowCustomScheme` (public native clients, RFC 8252).
 */
export function redirectUriProblem(value: string, allowCustomScheme: boolean): string | null {
  if (value.length === 0) return "must not be empty";
  if (value.length > 2000) return "must be at most 2000 characters";
  if (/\s/.test(value)) return "must not contain whitespace";
  if (value.includes("#")) return "must not contain a fragment (#)";
  if (value.includes("*")) return "must be an exact URI; wildcards are not allowed";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute URI";
  }
  if (url.username || url.password) return "must not contain user credentials";
  const scheme = url.protocol;
  if (scheme === "https:" || scheme === "http:") {
    if (scheme === "http:" && !isLoopbackHost(url.hostname)) {
      return "must use https (http is allowed only for localhost, 127.0.0.1 and [::1])";
    }
  } else {
    if (FORBIDDEN_SCHEMES.has(scheme)) return `must not use the ${scheme} scheme`;
    if (!allowCustomScheme) {
      return "must use https (custom URI schemes are allowed only for PUBLIC native clients)";
    }
    if (!scheme.slice(0, -1).includes(".")) {
      return "a custom scheme must be a reverse domain name you control, such as com.example.app:/callback";
    }
  }
  if (url.href !== value) return `must be written in canonical form: ${url.href}`;
  return null;
}

/** A browser origin: `scheme://host[:port]` only, https or loopback http. */
export function originProblem(value: string): string | null {
  if (value.length === 0) return "must not be empty";
  if (value.includes("*")) return "must be an exact origin; wildcards are not allowed";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an origin such as https://app.example.com";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an https origin";
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    return "must use https (http is allowed only for localhost, 127.0.0.1 and [::1])";
  }
  if (url.origin !== value) {
    return `must be an origin only (scheme://host[:port], no path, no trailing slash): ${url.origin}`;
  }
  return null;
}

/** An API audience (the `resource` value, RFC 8707): an absolute URI without a fragment. */
export function audienceProblem(value: string): string | null {
  if (value.length === 0) return "must not be empty";
  if (value.length > 255) return "must be at most 255 characters";
  if (/\s/.test(value)) return "must not contain whitespace";
  if (value.includes("#")) return "must not contain a fragment (#)";
  try {
    new URL(value);
  } catch {
    return "must be an absolute URI such as https://api.example.com";
  }
  return null;
}

/** The origin of a URI, or null when it has none (a custom scheme) or does not parse. */
export function originOf(uri: string): string | null {
  try {
    const origin = new URL(uri).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
}

/**
 * An application's home page (where the account-security portal's way back goes): a redirect-URI
 * shaped https address on the origin of the application's first redirect URI; M2M clients have none.
 */
export function homeUriProblem(value: string, type: "PUBLIC" | "WEB_CONFIDENTIAL" | "M2M", firstRedirectUri: string | undefined): string | null {
  if (type === "M2M") return "M2M clients have no users to send home; leave it out";
  const problem = redirectUriProblem(value, false);
  if (problem) return problem;
  if (firstRedirectUri === undefined || new URL(value).origin !== originOf(firstRedirectUri)) return "must be on the origin of the application's first redirect URI";
  return null;
}

/** The origin of the application's registered OAuth callback (its first redirect URI), or null. */
export function applicationOrigin(client: { redirectUris: string[] }): string | null {
  const first = client.redirectUris[0];
  return first ? originOf(first) : null;
}

/**
 * Where to send a user back to an application when no flow names a destination (the portal's way
 * back after the direct link, a sign-in started at an identity provider): its registered home page
 * (`home_uri`, on the origin of its first redirect URI) when it has one, else that origin; null
 * for an application without a redirect URI.
 */
export function applicationHome(client: { redirectUris: string[]; homeUri: string | null }): string | null {
  const origin = applicationOrigin(client);
  if (origin === null) return null;
  return client.homeUri && originOf(client.homeUri) === origin ? client.homeUri : `${origin}/`;
}
