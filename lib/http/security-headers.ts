// The security headers of every answer, in one place for the three writers: next.config.ts
// (static headers on every path), proxy.ts (the Content-Security-Policy of everything Next
// answers) and the production listener's direct path (lib/server/node-server.ts).

/** Every answer, pages and API alike: no referrer leaks, no type sniffing, never framed (older browsers). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
};

/**
 * The console's pages (/console and beneath) instead of `no-referrer`: still no referrer to any
 * other origin, while the browser names our own origin in `Origin` on the console's own form
 * posts (under `no-referrer` it sends `Origin: null`), with or without JavaScript. Hosted pages
 * and everything else keep `no-referrer`.
 */
export const CONSOLE_REFERRER_POLICY = "same-origin";

/**
 * The CSP of the route table's answers under an issuer: JSON, redirects and the self-contained
 * hosted error pages of lib/hosted/html.ts (one inline stylesheet, no script). Nothing else may
 * load. Next keeps the first CSP it is given over the one a route handler sets, so this one must
 * suit those error pages too.
 */
export const ISSUER_ROUTE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/**
 * Paths under an issuer that the route table answers (its endpoints, the reserved API families
 * and the catch-all 404 beneath them, the sign-in's form posts: every path below /sign-in/, all
 * bound to the table by the catch-all app/t/[tenant]/sign-in/[...step]/route.ts, which answers a
 * path the table lacks as the issuer's unknown paths are answered, so a factor's new step needs no
 * line here; the account-security routes under /auth/account, the portal's form posts: every path
 * below /account/, bound the same way, its verifications by .../account/verify/[...method]; the upstream providers' callback
 * /federation/callback and a SAML connection's ACS and SP metadata, the workspace's logo under /branding/logo/, the SCIM API below /scim/, and the admin portal's setup-link posts and sign-out below /organization-admin/), as opposed to the hosted pages
 * Next renders there (the portal page itself is /account); and the issuer's RFC 8414 metadata
 * path, /.well-known/oauth-authorization-server/t/{workspace} (lib/http/issuer-paths.ts); and
 * the WebAuthn related origins document, /.well-known/webauthn (lib/hostnames/related-origins.ts),
 * which the production listener answers directly too.
 * tests/dispatch/security-headers.test.ts checks it against the table.
 */
export const ISSUER_ROUTE_PATH =
  /^(?:\/\.well-known\/oauth-authorization-server\/t\/[^/]+$|\/\.well-known\/webauthn$|\/t\/[^/]+\/(?:\.well-known\/|oauth2\/|oidc\/|authorization\/|v1(?:\/|$)|sign-in\/.+$|sign-up\/(?:email|verify|account)$|device\/(?:code|sign-in|decision)$|invitation\/accept$|organization-admin\/(?:code|start|sign-out)$|federation\/(?:callback|saml\/acs|saml\/metadata)$|auth\/account(?:\/.+)?$|account\/.+$|branding\/logo(?:\/.*)?$|scim\/.+$))/;

/**
 * The CSP of a page Next renders: scripts only with this response's nonce (and what they load,
 * 'strict-dynamic'), styles from the app's own files, nothing from third parties, never framed.
 * Hosted pages under /t/ leave `form-action` open: the sign-in form's answer redirects to the
 * application's registered callback on another origin, which `form-action` would block.
 */
/** The nonce a page's policy (pageContentSecurityPolicy, on the request too) gives this response, for an inline stylesheet. */
export function policyNonce(policy: string | null): string | undefined {
  return /'nonce-([A-Za-z0-9+/=]+)'/.exec(policy ?? "")?.[1];
}

export function pageContentSecurityPolicy(nonce: string, options: { hosted: boolean; dev?: boolean }): string {
  const dev = options.dev ?? false;
  return [
    "default-src 'self'",
    // 'self' only for browsers without 'strict-dynamic' (which ignore it otherwise). React's
    // development build needs eval for its debugging aids; production never does.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    // The development overlay injects styles without the nonce.
    dev ? "style-src 'self' 'unsafe-inline'" : `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    ...(options.hosted ? [] : ["form-action 'self'"]),
    "frame-ancestors 'none'",
  ].join("; ");
}
