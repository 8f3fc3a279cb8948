/**
 * Which Content-Security-Policy each answer gets (proxy.ts, next.config.ts, the direct path's
 * ISSUER_PATH_HEADERS, all built from lib/http/security-headers.ts): pages a strict nonce-based
 * policy, fresh per response; the route table's answers one fixed policy, the same on both paths.
 * The browser side (no violation while signing in and using the console, `/` not framable) is
 * e2e/security-headers.spec.ts.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { NextRequest } from "next/server";
import { describe, expect, it } from "vitest";
import nextConfig from "../../next.config";
import { proxy } from "../../proxy";
import { ISSUER_PATH_HEADERS } from "../../lib/server/node-server";
import { routes } from "../../lib/server/router";
import { CONSOLE_REFERRER_POLICY, ISSUER_ROUTE_CSP, ISSUER_ROUTE_PATH, pageContentSecurityPolicy, SECURITY_HEADERS } from "../../lib/http/security-headers";
import { HOSTED_PAGE_HEADERS } from "../../lib/hosted/html";

const ISSUER_APP = path.join(import.meta.dirname, "..", "..", "app", "t", "[tenant]");

const PAGES = ["/", "/console", "/console/w/demo/applications", "/console/setup", "/t/demo/sign-in", "/no-such-page"];

/** The directives of a policy, by name. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name, values]),
  );
}

function run(path: string) {
  const response = proxy(new NextRequest(`https://auth.example.test${path}`));
  return { policy: response.headers.get("content-security-policy") ?? "", forwarded: response.headers.get("x-middleware-request-content-security-policy") };
}

describe("pages", () => {
  for (const path of PAGES) {
    it(`${path}: scripts only with this response's nonce, nothing framed, nothing from elsewhere`, () => {
      const { policy, forwarded } = run(path);
      const d = directives(policy);
      const nonce = /'nonce-([A-Za-z0-9+/=]+)'/.exec(policy)?.[1];
      expect(nonce).toBeTruthy();
      expect(Buffer.from(nonce!, "base64").length).toBeGreaterThanOrEqual(16);
      expect(d.get("default-src")).toEqual(["'self'"]);
      expect(d.get("script-src")).toEqual(["'self'", `'nonce-${nonce}'`, "'strict-dynamic'"]);
      expect(d.get("style-src")).toEqual(["'self'", `'nonce-${nonce}'`]);
      expect(d.get("object-src")).toEqual(["'none'"]);
      expect(d.get("base-uri")).toEqual(["'none'"]);
      expect(d.get("frame-ancestors")).toEqual(["'none'"]);
      expect(policy).not.toContain("unsafe-inline");
      expect(policy).not.toContain("unsafe-eval");
      expect(policy).not.toMatch(/https?:|\*/);
      // Next reads the nonce from the request's policy when it renders the page.
      expect(forwarded).toBe(policy);
    });
  }

  it("a fresh nonce for every response", () => {
    const nonces = new Set(Array.from({ length: 50 }, () => /'nonce-([^']+)'/.exec(run("/").policy)![1]));
    expect(nonces.size).toBe(50);
  });

  it("form-action stays open only on hosted pages, whose sign-in answer redirects to the application", () => {
    expect(directives(run("/t/demo/sign-in").policy).has("form-action")).toBe(false);
    for (const path of ["/", "/console", "/console/setup"]) expect(directives(run(path).policy).get("form-action")).toEqual(["'self'"]);
  });

  it("development adds only what React's development build needs", () => {
    const dev = directives(pageContentSecurityPolicy("abc", { hosted: false, dev: true }));
    expect(dev.get("script-src")).toEqual(["'self'", "'nonce-abc'", "'strict-dynamic'", "'unsafe-eval'"]);
  });
});

describe("the route table's answers", () => {
  it("every table path, the reserved families and unknown paths beneath them are route paths; hosted pages are not", () => {
    for (const route of routes) expect(ISSUER_ROUTE_PATH.test(`/t/demo${route.path}`), route.path).toBe(true);
    for (const path of ["/v1/access", "/v1/audit/x", "/v1/management/a/b", "/.well-known/nope", "/oauth2/nope"]) {
      expect(ISSUER_ROUTE_PATH.test(`/t/demo${path}`), path).toBe(true);
    }
    for (const path of ["/t/demo/sign-in", "/t/demo/account", "/", "/console/oauth2/x"]) {
      expect(ISSUER_ROUTE_PATH.test(path), path).toBe(false);
    }
  });

  it("every path below the sign-in's and the portal's folders is a route path (a factor's new step included); the pages beside them and paths outside are not", () => {
    // Next renders no page below them: their only route files are the table's (the catch-alls
    // app/t/[tenant]/sign-in/[...step] and account/verify/[...method], and the portal's own posts),
    // which answer a path the table lacks as an unknown path (tests/integration/route-bindings.test.ts).
    const below = (folder: string): string[] =>
      readdirSync(path.join(ISSUER_APP, folder), { recursive: true, encoding: "utf8" }).filter((f) => /(^|\/)(page|layout)\.tsx?$/.test(f));
    expect(below("sign-in").filter((f) => f !== "page.tsx")).toEqual([]);
    expect(below("account").filter((f) => f !== "page.tsx")).toEqual([]);
    for (const path of ["/sign-in/hotp", "/sign-in/hotp/enroll", "/sign-in/passwordless", "/account/verify/hotp", "/account/verify/hotp/x"]) {
      expect(ISSUER_ROUTE_PATH.test(`/t/demo${path}`), path).toBe(true);
      expect(run(`/t/demo${path}`).policy, path).toBe(ISSUER_ROUTE_CSP);
    }
    for (const path of ["/t/demo/sign-in", "/t/demo/sign-in/", "/t/demo/sign-inx", "/t/demo/sign-in-x/totp", "/t/demo/x/sign-in/totp", "/sign-in/totp", "/t/sign-in/totp", "/t/demo/account/", "/t/demo/accounts/verify/totp", "/t/demo/sign-up/hotp"]) {
      expect(ISSUER_ROUTE_PATH.test(path), path).toBe(false);
    }
  });

  it("RFC 8414's metadata path of an issuer and the WebAuthn related origins document are route paths; nothing else below /.well-known at the root is", () => {
    for (const path of ["/.well-known/oauth-authorization-server/t/demo", "/.well-known/webauthn"]) {
      expect(ISSUER_ROUTE_PATH.test(path), path).toBe(true);
      expect(run(path).policy, path).toBe(ISSUER_ROUTE_CSP);
    }
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/t/demo/x", "/.well-known/openid-configuration", "/.well-known/oauth-authorization-server/demo", "/.well-known/webauthn/x", "/.well-known/webauthnx"]) {
      expect(ISSUER_ROUTE_PATH.test(path), path).toBe(false);
    }
  });

  it("get one fixed policy through Next, the same the direct path sends, with no script allowed", () => {
    for (const route of routes) {
      const { policy } = run(`/t/demo${route.path}`);
      expect(policy).toBe(ISSUER_ROUTE_CSP);
      expect(policy).toBe(ISSUER_PATH_HEADERS["content-security-policy"]);
    }
    // Through Next this policy replaces the one a hosted error page sets itself: they must agree.
    expect(ISSUER_ROUTE_CSP).toBe(HOSTED_PAGE_HEADERS["Content-Security-Policy"]);
    const d = directives(ISSUER_ROUTE_CSP);
    expect(d.get("default-src")).toEqual(["'none'"]);
    expect(d.has("script-src")).toBe(false);
    expect(d.get("frame-ancestors")).toEqual(["'none'"]);
  });
});

describe("headers on every answer", () => {
  it("next.config.ts sends Referrer-Policy, nosniff and X-Frame-Options on every path, and the direct path the same; the console's pages name our own origin to our own forms", async () => {
    const rules = await nextConfig.headers!();
    expect(rules).toEqual([
      { source: "/:path*", headers: Object.entries(SECURITY_HEADERS).map(([key, value]) => ({ key, value })) },
      { source: "/console/:path*", headers: [{ key: "Referrer-Policy", value: "same-origin" }] },
    ]);
    expect(CONSOLE_REFERRER_POLICY).toBe("same-origin");
    expect(SECURITY_HEADERS).toEqual({ "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY" });
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(ISSUER_PATH_HEADERS[name.toLowerCase()]).toBe(value);
    expect(Object.keys(ISSUER_PATH_HEADERS).sort()).toEqual(["content-security-policy", "referrer-policy", "x-content-type-options", "x-frame-options"]);
  });
});
