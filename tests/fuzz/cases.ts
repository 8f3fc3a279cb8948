/**
 * What the fuzzer sends: per route, a recipe (fast-check shrinks recipes, not bytes) made of a
 * base request (a valid one built from live values, or none), mutations of its parameters,
 * method, workspace and path variants, header changes, the parameter encoding and the body's
 * encoding, size and framing. `materialize` turns a recipe into the bytes of one request.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { routes as tableRoutes } from "../../lib/server/router";
import { API, M2M, SPA, WEB, MINIMAL, ADA, BOB, ACME } from "../helpers/fixtures";
import { sha256Base64Url } from "../../lib/crypto";
import { basic, PUBLIC_URL } from "../helpers/harness";
import { HOST, workspaceHostname, type Live } from "./world";
import type { WireRequest } from "./wire";

export type Param = [string, string];

export interface RouteSpec {
  name: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path relative to the issuer, as in lib/server/router.ts (a route file's dynamic segment filled in). */
  path: string;
  /**
   * For a route that answers the paths below its own (`Route.below`: the SCIM API): the path
   * requested, `{scim-user}` standing for a user the world's directory provisioned.
   */
  target?: string;
  /** SPEC.md's statuses for this route's own method (success and its errors table). */
  statuses: number[];
  body?: "form" | "json";
  /** Body limit in bytes (SPEC.md limits table). */
  limit?: number;
  names: string[];
  bases: string[];
  /** The route's own fields, added to a `form:*`, `handoff:*` or `get:*` base (live references such as `@access` allowed). */
  fields?: Param[];
  /** The statuses of the table's other routes on the same path, by method (the federation callback's GET and POST). */
  siblings?: Record<string, number[]>;
}

const FORM = "application/x-www-form-urlencoded";
const JSON_TYPE = "application/json";

/** A case per route: the table's routes (lib/server/router.ts) by `METHOD /path`. */
export type RouteCase = Omit<RouteSpec, "method" | "path">;

/** Every hosted form post: its step's answer or redirect, a hosted error page (bad form, cross-site, expired, not found, conflict), 413 and 415. */
const HOSTED_FORM = [200, 303, 400, 401, 403, 404, 409, 413, 415];
/** The hosted GET routes (portal entry, handoff steps, the federation callback): a page or a redirect, or a hosted error page. */
const HOSTED_GET = [200, 303, 400, 401, 403, 404, 409];
/** The account-security handoff (SPEC.md "POST /auth/account/…"): its JSON answer or error body. */
const HANDOFF = [200, 400, 401, 403, 404, 409, 413, 415];

/** Whether a method's parameters travel in the body (else in the query). */
export const carriesBody = (method: string) => method === "POST" || method === "PUT" || method === "PATCH";

/** The SCIM API (lib/organizations/scim), as an organization's directory calls it with its token: SCIM's statuses, 405 with Allow for a method a resource path does not take. */
const scim = (name: string, target: string, statuses: number[], fields: Param[]): RouteCase => ({
  name,
  target,
  statuses: [...statuses, 401, 404, 405],
  body: "json",
  limit: 256 * 1024,
  names: fields.map(([n]) => n),
  bases: ["scim:token", "none"],
  fields,
});

const signInStep = (name: string, fields: Param[] = []): RouteCase => ({
  name,
  statuses: HOSTED_FORM,
  body: "form",
  limit: 8 * 1024,
  names: ["tx", "csrf", ...fields.map(([n]) => n)],
  bases: ["form:tx", "form:session", "none"],
  fields,
});

const portalForm = (name: string, fields: Param[] = []): RouteCase => ({
  name,
  statuses: HOSTED_FORM,
  body: "form",
  limit: 8 * 1024,
  names: ["csrf", ...fields.map(([n]) => n)],
  bases: ["form:session", "form:tx", "none"],
  fields,
});

const handoff = (name: string, fields: Param[]): RouteCase => ({
  name,
  statuses: HANDOFF,
  body: "json",
  limit: 2 * 1024,
  names: fields.map(([n]) => n),
  bases: ["handoff:web", "handoff:m2m", "none"],
  fields,
});

const hostedGet = (name: string, fields: Param[]): RouteCase => ({ name, statuses: HOSTED_GET, names: fields.map(([n]) => n), bases: ["get:query", "none"], fields });

const STATE = "s".repeat(43);

export const CASES: Record<string, RouteCase> = {
  // 304: a generated If-None-Match of `*` (or the document's own ETag) holds (RFC 9110 §13.1.2).
  "GET /.well-known/openid-configuration": { name: "discovery", statuses: [200, 304, 400, 404], names: ["client_id"], bases: ["none", "discovery"] },
  "GET /.well-known/jwks.json": { name: "jwks", statuses: [200, 304, 400, 404], names: ["client_id"], bases: ["none", "discovery"] },
  "GET /oauth2/authorize": {
    name: "authorize",
    statuses: [303, 400, 404],
    names: ["client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method", "resource", "prompt", "response_mode", "request", "request_uri"],
    bases: ["authorize:spa", "authorize:spa-api", "authorize:web", "authorize:m2m", "authorize:minimal", "authorize:pushed"],
  },
  // Pushed authorization requests (RFC 9126): 201 with a request_uri, or the token endpoint's errors.
  "POST /oauth2/par": {
    name: "pushed authorization request",
    statuses: [201, 400, 401, 403, 413, 415],
    body: "form",
    limit: 8 * 1024,
    names: ["client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method", "resource", "prompt", "request_uri", "request", "client_secret"],
    bases: ["par:spa", "par:web", "par:m2m", "none"],
  },
  "POST /oauth2/token": {
    name: "token",
    statuses: [200, 400, 401, 403, 413, 415],
    body: "form",
    limit: 8 * 1024,
    names: ["grant_type", "code", "redirect_uri", "code_verifier", "client_id", "refresh_token", "scope", "resource", "client_secret", "device_code"],
    bases: ["code:spa", "code:web", "refresh:spa", "refresh:web", "cc:m2m", "devicecode:spa", "devicecode:web", "none"],
  },
  // The device authorization grant (lib/oauth/device-authorization): its endpoint and the device page's form posts.
  "POST /oauth2/device_authorization": {
    name: "device authorization",
    statuses: [200, 400, 401, 403, 413, 415],
    body: "form",
    limit: 8 * 1024,
    names: ["client_id", "scope", "resource", "client_secret"],
    bases: ["device:spa", "device:spa-api", "device:web", "device:minimal", "none"],
  },
  "POST /device/code": { name: "device page: code", statuses: HOSTED_FORM, body: "form", limit: 8 * 1024, names: ["user_code"], bases: ["devicepage:code", "none"] },
  "POST /device/sign-in": { name: "device page: sign in", statuses: HOSTED_FORM, body: "form", limit: 8 * 1024, names: ["d", "csrf"], bases: ["devicepage:sign-in", "none"] },
  "POST /device/decision": { name: "device page: decision", statuses: HOSTED_FORM, body: "form", limit: 8 * 1024, names: ["d", "csrf", "decision"], bases: ["devicepage:decision", "none"] },
  // An organization invitation's acceptance (lib/organizations/invitations): the page's form post.
  "POST /invitation/accept": { name: "invitation acceptance", statuses: HOSTED_FORM, body: "form", limit: 8 * 1024, names: ["token", "csrf", "password"], bases: ["invitation:accept", "none"] },
  // An organization's admin portal (lib/organizations/admin-portal): the setup link's two posts, and leaving the portal.
  "POST /organization-admin/code": { name: "admin portal: send code", statuses: HOSTED_FORM, body: "form", limit: 8 * 1024, names: ["link", "csrf"], bases: ["portal:link", "none"] },
  "POST /organization-admin/start": { name: "admin portal: start", statuses: HOSTED_FORM, body: "form", limit: 8 * 1024, names: ["link", "csrf", "code"], bases: ["portal:link", "none"] },
  "POST /organization-admin/sign-out": { name: "admin portal: leave", statuses: HOSTED_FORM, body: "form", limit: 8 * 1024, names: ["csrf"], bases: ["portal:link", "none"] },
  "GET /oidc/userinfo": { name: "userinfo", statuses: [200, 401, 403], names: ["access_token", "client_id"], bases: ["bearer:spa", "bearer:web", "bearer:m2m", "none"] },
  "GET /oidc/session": { name: "session check", statuses: [200, 401, 403, 404], names: ["access_token", "client_id"], bases: ["bearer:spa", "bearer:web", "bearer:m2m", "none"] },
  "POST /oauth2/revoke": {
    name: "revoke",
    statuses: [200, 400, 401, 403, 413, 415],
    body: "form",
    limit: 8 * 1024,
    names: ["token", "token_type_hint", "client_id", "client_secret"],
    bases: ["revoke:spa-access", "revoke:spa-refresh", "revoke:web", "revoke:m2m", "none"],
  },
  "POST /oauth2/introspect": {
    name: "introspect",
    statuses: [200, 400, 401, 403, 413, 415],
    body: "form",
    limit: 8 * 1024,
    names: ["token", "token_type_hint", "client_id", "client_secret"],
    bases: ["introspect:web", "introspect:m2m", "introspect:spa", "none"],
  },
  "GET /oidc/logout": {
    name: "logout",
    statuses: [303, 400, 404],
    names: ["client_id", "post_logout_redirect_uri", "id_token_hint", "state", "logout_hint"],
    bases: ["logout:spa", "logout:web", "logout:no-grant", "none"],
  },
  "POST /sign-in/password": {
    name: "sign-in form post",
    statuses: [303, 400, 403, 413, 415],
    body: "form",
    limit: 8 * 1024,
    names: ["tx", "csrf", "email", "password"],
    bases: ["signin:right", "signin:wrong", "signin:unknown"],
  },
  "POST /authorization/check": {
    name: "permission check",
    statuses: [200, 400, 401, 413, 415],
    body: "json",
    limit: 2 * 1024,
    names: ["resource", "permission", "organization_id"],
    bases: ["check:spa", "check:m2m", "check:org", "none"],
  },
  // The sign-in steps (lib/sign-in/steps/*), sign-up and password reset: hosted form posts on a pending sign-in.
  "POST /sign-in/email": signInStep("email code: send", [["email", ADA.email]]),
  "POST /sign-in/email/verify": signInStep("email code: verify", [["code", "123456"]]),
  "POST /sign-in/email/cancel": signInStep("email code: cancel"),
  "POST /sign-up/email": signInStep("sign-up: email", [["email", "new-user@example.test"]]),
  "POST /sign-up/verify": signInStep("sign-up: verify", [["code", "123456"]]),
  "POST /sign-up/account": signInStep("sign-up: account", [["name", "New User"], ["password", "a long enough password 123"]]),
  "POST /sign-in/reset/email": signInStep("password reset: send", [["email", ADA.email]]),
  "POST /sign-in/reset/verify": signInStep("password reset: verify", [["code", "123456"]]),
  "POST /sign-in/reset/cancel": signInStep("password reset: cancel"),
  "POST /sign-in/new-password": signInStep("new password", [["password", "a long enough password 123"]]),
  "POST /sign-in/password-changed": signInStep("password changed: continue"),
  "POST /sign-in/totp": signInStep("TOTP", [["code", "123456"]]),
  "POST /sign-in/recovery-code": signInStep("recovery code", [["code", "ABCD-EFGH-IJKL"]]),
  "POST /sign-in/totp/enroll/start": signInStep("TOTP enrolment: start"),
  "POST /sign-in/totp/enroll": signInStep("TOTP enrolment: confirm", [["code", "123456"]]),
  "POST /sign-in/recovery-codes/saved": signInStep("recovery codes saved"),
  "POST /sign-in/passkey": signInStep("passkey", [["response", "{}"]]),
  "POST /sign-in/passkey/skip": signInStep("passkey offer: skip"),
  "POST /sign-in/webauthn": signInStep("WebAuthn second factor", [["response", "{}"]]),
  "POST /sign-in/webauthn/register": signInStep("WebAuthn registration", [["response", "{}"], ["name", "Key"]]),
  // Federation (lib/sign-in/steps/federation.ts): social providers, single sign-on, the callback.
  "POST /sign-in/federation": signInStep("federation: start", [["provider", "github"]]),
  "POST /sign-in/federation/cancel": signInStep("federation: cancel"),
  "POST /sign-in/sso": signInStep("single sign-on", [["email", "someone@acme.example.test"]]),
  "GET /federation/callback": hostedGet("federation callback", [["state", STATE], ["code", "upstream-code"], ["iss", "https://upstream.example.test"]]),
  "POST /federation/callback": { ...signInStep("federation callback (form post)", [["state", STATE], ["code", "upstream-code"]]), bases: ["form:session", "none"] },
  // A SAML connection's ACS (the identity provider's cross-site POST: a valid response to a pending round trip, mutated) and its SP metadata.
  "POST /federation/saml/acs": { name: "SAML ACS", statuses: [303, 400, 413, 415], body: "form", limit: 256 * 1024, names: ["SAMLResponse", "RelayState"], bases: ["saml:acs", "none"] },
  "GET /federation/saml/metadata": { name: "SAML SP metadata", statuses: [200, 400, 404], names: ["connection"], bases: ["saml:metadata", "none"] },
  // The account-security handoff (JSON, client authentication) and its browser steps.
  "POST /auth/account/configuration": handoff("handoff: configuration", [["callback_uri", "https://web.example.test/account/callback"], ["return_uri", "https://web.example.test/settings"], ["version", "0"]]),
  "POST /auth/account/launch": handoff("handoff: launch", [["user_token", "@access"], ["state", STATE]]),
  "POST /auth/account/approve": handoff("handoff: approve", [["user_token", "@access"], ["challenge", "c".repeat(43)], ["state", STATE]]),
  "GET /auth/account/handoff": hostedGet("handoff: launch URL", [["launch", "l".repeat(43)]]),
  "GET /auth/account/handoff/continue": hostedGet("handoff: continue", [["launch", "l".repeat(43)]]),
  "GET /auth/account/complete": hostedGet("handoff: completion", [["completion", "c".repeat(43)]]),
  // The portal (lib/account-security/*-routes.ts): hosted form posts on a portal session.
  "GET /auth/account": hostedGet("portal: direct link", [["client_id", WEB.client_id]]),
  "POST /account/verify/password": portalForm("portal: verify password", [["password", ADA.password]]),
  "POST /account/verify/totp": portalForm("portal: verify TOTP", [["code", "123456"]]),
  "POST /account/verify/recovery-code": portalForm("portal: verify recovery code", [["code", "ABCD-EFGH-IJKL"]]),
  "POST /account/verify/email": portalForm("portal: send email code"),
  "POST /account/verify/email/code": portalForm("portal: verify email code", [["code", "123456"]]),
  "POST /account/verify/webauthn": portalForm("portal: verify WebAuthn", [["response", "{}"]]),
  "POST /account/close": portalForm("portal: close"),
  "POST /account/credentials/rename": portalForm("portal: rename credential", [["id", "credential-id"], ["name", "Key"]]),
  "POST /account/credentials/remove": portalForm("portal: remove credential", [["id", "credential-id"]]),
  "POST /account/authenticator-app/start": portalForm("portal: authenticator app start"),
  "POST /account/authenticator-app/confirm": portalForm("portal: authenticator app confirm", [["code", "123456"]]),
  "POST /account/authenticator-app/cancel": portalForm("portal: authenticator app cancel"),
  "POST /account/webauthn/register": portalForm("portal: WebAuthn registration", [["response", "{}"], ["name", "Key"], ["kind", "passkey"]]),
  "POST /account/recovery-codes": portalForm("portal: new recovery codes"),
  "POST /account/recovery-codes/saved": portalForm("portal: recovery codes saved"),
  "POST /account/applications/sign-out": portalForm("portal: sign an application out", [["grant", "grant-id"]]),
  // SCIM provisioning: one table route per method for every path below /scim/v2, fuzzed at an organization's resources.
  "GET /scim/v2": scim("SCIM: list users", "/scim/v2/o/acme/Users", [200, 400], [["filter", 'userName sw "fuzz"'], ["startIndex", "1"], ["count", "5"], ["attributes", "userName"]]),
  "POST /scim/v2": scim("SCIM: create a user", "/scim/v2/o/acme/Users", [201, 400, 409, 413, 415], [["userName", "fuzz@acme.test"], ["externalId", "fuzz-subject"], ["displayName", "Fuzz"], ["active", "true"]]),
  "PUT /scim/v2": scim("SCIM: replace a user", "/scim/v2/o/acme/Users/{scim-user}", [200, 400, 409, 412, 413, 415], [["userName", "fuzz-put@acme.test"], ["externalId", "fuzz-put"], ["title", "Fuzzer"]]),
  "PATCH /scim/v2": scim("SCIM: patch a user", "/scim/v2/o/acme/Users/{scim-user}", [200, 400, 409, 412, 413, 415], [["schemas", "urn:ietf:params:scim:api:messages:2.0:PatchOp"], ["Operations", "replace"]]),
  "DELETE /scim/v2": scim("SCIM: delete a user", "/scim/v2/o/acme/Users/{scim-user}", [204, 400, 412], []),
  // The workspace's logo at its content address: one table route answers every path below /branding/logo.
  "GET /branding/logo": { name: "logo", target: `/branding/logo/${"0".repeat(64)}`, statuses: [200, 304, 404], names: ["v"], bases: ["get:query", "none"] },
};

/** A route file's path relative to the issuer (`app/t/[tenant]/oauth2/token/route.ts` → `/oauth2/token`); null for a catch-all's. */
export function routeFilePath(file: string): string | null {
  const match = /^app\/t\/\[tenant\](\/.*)\/route\.ts$/.exec(file);
  if (!match || match[1].includes("[...")) return null;
  return match[1];
}

/**
 * What the fuzzer runs: one spec per route of the table (lib/server/router.ts), each with its
 * case. `routeFiles` are the app/t/[tenant]/…/route.ts paths (see `routeFilePath`). `missing`
 * names every route without a case, every case that matches no route (a stale one), and every
 * route file outside the table (whose methods the table's edge rule would not answer), so the
 * suite fails rather than skip a route.
 */
export function fuzzedRoutes(table: readonly { method: string; path: string }[], routeFiles: string[]): { routes: RouteSpec[]; missing: string[] } {
  const routes: RouteSpec[] = [];
  const missing: string[] = [];
  const used = new Set<string>();
  for (const route of table) {
    const key = `${route.method} ${route.path}`;
    const found = CASES[key];
    if (!found) missing.push(`no fuzz case for the route ${key}`);
    else routes.push({ ...found, method: route.method as RouteSpec["method"], path: route.path });
    used.add(key);
  }
  for (const spec of routes) {
    const others = routes.filter((r) => r.path === spec.path && r.method !== spec.method);
    if (others.length) spec.siblings = Object.fromEntries(others.map((r) => [r.method, r.statuses]));
  }
  const tablePaths = new Set(table.map((r) => r.path));
  for (const path of routeFiles) if (!tablePaths.has(path)) missing.push(`the route file of ${path} is outside the route table`);
  for (const key of Object.keys(CASES)) if (!used.has(key)) missing.push(`a fuzz case for ${key}, which is no route`);
  return { routes, missing };
}

/** The route files under app/t/[tenant] (paths relative to the issuer), read from the tree. */
export function routeFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name === "route.ts") {
        const p = routeFilePath(rel);
        if (p) out.push(p);
      }
    }
  };
  walk("app/t/[tenant]");
  return out.sort();
}

const generated = fuzzedRoutes(tableRoutes, routeFiles(path.resolve(import.meta.dirname, "..", "..")));
/** The routes fuzzed, generated from the route table and the route files. */
export const ROUTES: RouteSpec[] = generated.routes;
/** Routes without a case (and cases without a route): tests/fuzz/coverage.test.ts fails on any. */
export const MISSING_CASES: string[] = generated.missing;

/** Values that stand for live ones, resolved when the request is built. */
const LIVE_REFS = ["@access", "@refresh", "@m2m", "@code", "@id", "@tx", "@csrf", "@session"] as const;

/** Interesting literal values: the workspace's own, near-misses, and classic troublemakers. */
const DICTIONARY = [
  SPA.client_id, WEB.client_id, M2M.client_id, MINIMAL.client_id, "unknown-client", "SPA", "spa ", "spa\u0000",
  SPA.redirect_uri, WEB.redirect_uri, `${SPA.redirect_uri}/`, "https://evil.example/callback", "https://app.example.test/", "https://web.example.test/signed-out",
  API, `${API}/`, "https://other.example.test", "https://inactive.example.test", "https://wide.example.test",
  "openid", "openid email profile", "openid read:things", "read:things", "write:things", "admin:things", "openid openid", "offline_access",
  "code", "token", "S256", "plain", "authorization_code", "refresh_token", "client_credentials", "password",
  "access_token", "refresh_token", ADA.email, ADA.password, BOB.email, "ADA@EXAMPLE.TEST", ACME, "@null",
  "", " ", "+", "%", "%00", "\u0000", "a\u0000b", "\uFFFD", "\uD800", "\u202E", "🔑", "null", "undefined", "NaN", "[]", "{}", "true", "0", "-1", "1e309",
  "__proto__", "constructor", "toString", "' OR '1'='1", "\"; --", "$1", "\\", "\\u0000", "<script>x</script>", "../../etc/passwd", "%2e%2e%2f",
  "A".repeat(43), "A".repeat(128), "A".repeat(129), "_".repeat(24),
  ...LIVE_REFS,
];

const PROTO_NAMES = ["__proto__", "toString", "constructor", "hasOwnProperty", "valueOf", "prototype", "isPrototypeOf", "__defineGetter__"];

const text = (maxLength = 40): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...DICTIONARY) },
    { weight: 2, arbitrary: fc.string({ maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength }) },
    { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })).map(([a, b]) => `${a}\u0000${b}`) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom("x", "a", "%", "\u00e9", "\u0000"), fc.integer({ min: 100, max: 10_000 })).map(([c, n]) => c.repeat(n)) },
  );

const paramName = (spec: RouteSpec | null): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...(spec?.names.length ? spec.names : ["tx", "x"])) },
    { weight: 2, arbitrary: fc.constantFrom(...PROTO_NAMES) },
    { weight: 1, arbitrary: text(12) },
  );

export type Mutation =
  | { op: "drop"; i: number }
  | { op: "dup"; i: number; same: boolean; value: string }
  | { op: "set"; i: number; value: string }
  | { op: "rename"; i: number; name: string }
  | { op: "add"; name: string; value: string }
  | { op: "nul"; i: number; at: number }
  | { op: "huge"; i: number; size: number };

const mutation = (spec: RouteSpec | null): fc.Arbitrary<Mutation> =>
  fc.oneof(
    fc.record({ op: fc.constant("drop" as const), i: fc.nat() }),
    fc.record({ op: fc.constant("dup" as const), i: fc.nat(), same: fc.boolean(), value: text() }),
    fc.record({ op: fc.constant("set" as const), i: fc.nat(), value: text() }),
    fc.record({ op: fc.constant("rename" as const), i: fc.nat(), name: paramName(spec) }),
    fc.record({ op: fc.constant("add" as const), name: paramName(spec), value: text() }),
    fc.record({ op: fc.constant("nul" as const), i: fc.nat(), at: fc.nat() }),
    fc.record({ op: fc.constant("huge" as const), i: fc.nat(), size: fc.constantFrom(1_000, 2_100, 8_300, 12_000) }),
  );

/** A workspace as the path names it. `odd` ones are not valid workspace ids; `path` ones change the path's shape. */
export type WorkspaceVariant = { kind: "real" } | { kind: "unknown" } | { kind: "odd"; raw: string } | { kind: "path"; raw: string };
const workspace: fc.Arbitrary<WorkspaceVariant> = fc.oneof(
  { weight: 20, arbitrary: fc.constant({ kind: "real" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "unknown" as const }) },
  { weight: 2, arbitrary: fc.constantFrom("DEMO", "a%00b", "%00", "w".repeat(70), "%E2%82%AC", "a%20b", "-x", "_x", "a.b", "%FF", "\u00ff", "a%25", "t%2Fx").map((raw) => ({ kind: "odd" as const, raw })) },
  { weight: 1, arbitrary: fc.constantFrom("..", ".", "a%2Fb", "", "%2e%2e").map((raw) => ({ kind: "path" as const, raw })) },
);

/**
 * The host a request names: the default host, the world's verified workspace hostname, or a
 * `Host` that is not a valid host name (served like an unknown host: the generic 404).
 */
export type HostVariant = { kind: "default" } | { kind: "hostname" } | { kind: "malformed"; raw: string };
export const MALFORMED_HOSTS = [
  `a_b.${HOST}`,
  "x_y.evil.test",
  `${HOST}/x`,
  "evil.test/x",
  "evil test",
  `${HOST} x`,
  `${HOST}:100000`,
  `${HOST}:0443`,
  `${HOST}:`,
  "",
  "[::1",
  `${HOST}, evil.test`,
  `${"a".repeat(64)}.${HOST}`,
  `${HOST}\u00e9`,
  "@",
];
const hostVariant: fc.Arbitrary<HostVariant> = fc.oneof(
  { weight: 14, arbitrary: fc.constant({ kind: "default" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "hostname" as const }) },
  { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_HOSTS).map((raw) => ({ kind: "malformed" as const, raw })) },
);

/** How the route's path is written. Only `exact` is held to the route's own statuses. */
export const PATH_VARIANTS = ["exact", "slash", "upper", "double-slash", "dot-segment", "dot-escape", "dot-mixed", "climb", "backslash", "percent", "semicolon", "nul"] as const;
export type PathVariant = (typeof PATH_VARIANTS)[number];
const pathVariant: fc.Arbitrary<PathVariant> = fc.oneof(
  { weight: 14, arbitrary: fc.constant("exact" as const) },
  { weight: 2, arbitrary: fc.constantFrom(...PATH_VARIANTS.slice(1)) },
);

const ODD_METHODS = ["TRACE", "PROPFIND", "PURGE", "QUERY", "SEARCH", "LOCK", "MKCOL", "FOO", "get", "G\u00c9T"];
const method = (own: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 16, arbitrary: fc.constant(own) },
    { weight: 2, arbitrary: fc.constantFrom("HEAD", "OPTIONS") },
    { weight: 1, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE") },
    { weight: 1, arbitrary: fc.constantFrom(...ODD_METHODS) },
  );

/** `keep` leaves the base request's header as it is. */
type HeaderChoice = { keep: true } | { keep: false; value: string | null };
const keepOr = (alternatives: fc.Arbitrary<string | null>, keepWeight = 8): fc.Arbitrary<HeaderChoice> =>
  fc.oneof({ weight: keepWeight, arbitrary: fc.constant({ keep: true as const }) }, { weight: 1, arbitrary: alternatives.map((value) => ({ keep: false as const, value })) });

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const authorization = fc.oneof(
  fc.constant(null),
  fc.constantFrom(basic(WEB.client_id, WEB.secret), basic(M2M.client_id, M2M.secret), basic(SPA.client_id, ""), basic(WEB.client_id, "wrong"), "Basic", "Bearer", "Basic ====", "Basic *", "Digest x", "bearer lka_x", "Bearer @access", "Bearer @m2m", "Bearer @id", "Bearer @refresh", "DPoP @access", "DPoP @m2m", "DPoP", "dpop lka_x"),
  text().map((t) => `Basic ${b64(t)}`),
  fc.tuple(text(), text()).map(([id, secret]) => `Basic ${b64(`${id}:${secret}`)}`),
  fc.tuple(fc.constantFrom("a\u0000b", "w\u0000", "%00", "spa%00"), fc.constantFrom("x", WEB.secret)).map(([id, secret]) => `Basic ${b64(`${id}:${secret}`)}`),
  fc.integer({ min: 1_000, max: 10_240 }).map((n) => `Basic ${b64(`${"i".repeat(n)}:x`)}`),
  text().map((t) => `Bearer ${t}`),
  text().map((t) => `DPoP ${t}`),
  text(),
);
const origin = fc.oneof(fc.constant(null), fc.constantFrom("https://app.example.test", PUBLIC_URL, "null", "https://evil.example", "https://app.example.test/", "http://app.example.test"), text());
const contentType = fc.oneof(
  fc.constant(null),
  fc.constantFrom(FORM, `${FORM}; charset=utf-8`, `${FORM}; charset=ISO-8859-1`, "APPLICATION/X-WWW-FORM-URLENCODED", JSON_TYPE, `${JSON_TYPE}; charset=utf-8`, "application/problem+json", "text/plain", "multipart/form-data; boundary=x", "", ";", "application/json\u0000"),
  text(),
);
const cookie = fc.oneof(
  fc.constant(null),
  fc.constantFrom("@session", "lk_session=@session", "lk_session=", "lk_session=.", "lk_session=a.b", "lk_session=x; lk_session=@session", "__proto__=1; toString=2", "=; ;;", "lk_tx_@tx=x"),
  text().map((t) => `lk_session=${t}`),
  fc.integer({ min: 1_000, max: 12_000 }).map((n) => `c=${"z".repeat(n)}`),
  text(),
);
/**
 * A DPoP proof signed by its embedded key for another workspace, long ago: it gets as far as the
 * claims' checks (lib/oauth/dpop/proof.ts).
 */
const SIGNED_PROOF =
  "eyJhbGciOiJFUzI1NiIsInR5cCI6ImRwb3Arand0IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Ik5yQk45bTlpY3NuQjZlLVM5Nm85MGctYmxRemhsY0ZSNXdfZ1ZxWG5PanciLCJ5IjoiRU02dDhaN1dVeWc1dWZBcHBGb20zdFpuY3JmbFBJTzJ4MmlfaUhqT0pWSSIsImNydiI6IlAtMjU2In19.eyJodG0iOiJQT1NUIiwiaHR1IjoiaHR0cHM6Ly9hdXRoLmV4YW1wbGUudGVzdC90L3gvb2F1dGgyL3Rva2VuIiwiaWF0IjoxNzAwMDAwMDAwLCJqdGkiOiJmdXp6In0.Wo-L_PHwkLu6e1hEmlDFXG8w-orvLSOYXi0jiZuRF54KrGCTt916JYT4o0nwjBhDeA0LgHbB7DgjawlyLDHNUg";
const dpopHeader: fc.Arbitrary<[string, string]> = fc.tuple(
  fc.constant("DPoP"),
  fc.oneof(
    fc.constantFrom(SIGNED_PROOF, `${SIGNED_PROOF}, ${SIGNED_PROOF}`, SIGNED_PROOF.replace(/\.[^.]+$/, ".AAAA"), "a.b.c", "e30.e30.", "eyJhbGciOiJub25lIn0.e30.", ""),
    fc.tuple(text(), text(), text()).map((parts) => parts.map((p) => Buffer.from(p).toString("base64url")).join(".")),
    text(),
  ),
);
const extraHeader: fc.Arbitrary<[string, string]> = fc.oneof({ weight: 1, arbitrary: dpopHeader }, { weight: 4, arbitrary: fc.tuple(
  fc.oneof(
    fc.constantFrom("X-Forwarded-For", "Accept", "Accept-Encoding", "Content-Encoding", "Sec-Fetch-Site", "X-Latchkey-Client-Address", "Forwarded", "Next-Action", "RSC", "Next-Router-State-Tree", "X-Middleware-Subrequest", "Range", "If-None-Match", "Authorization", "Content-Type", "Origin", "Cookie", "Expect"),
    fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/),
  ),
  fc.oneof(text(), fc.constantFrom("same-origin", "cross-site", "1", "gzip", "bytes=0-1", "100-continue", "for=1.2.3.4", "1.2.3.4, 5.6.7.8")),
) });

export interface HeaderRecipe {
  authorization: HeaderChoice;
  origin: HeaderChoice;
  contentType: HeaderChoice;
  cookie: HeaderChoice;
  extra: [string, string][];
}

const headers: fc.Arbitrary<HeaderRecipe> = fc.record({
  authorization: keepOr(authorization),
  origin: keepOr(origin),
  contentType: keepOr(contentType),
  cookie: keepOr(cookie),
  extra: fc.array(extraHeader, { maxLength: 2 }),
});

export type Encoding = "standard" | "raw";
/** Inserted into an encoded query or form body: broken percent escapes, raw bytes, stray separators. */
const BREAKAGES = ["%", "%Z", "%zz", "%C3%28", "%FF", "%FE%FF", "%00", "%ED%A0%80", "%C0%80", "&", "&&=", "=", "==", "\u00ff\u00fe", "\u00c3", "+", "#", ";", "\u0000"];

export interface BodyRecipe {
  kind: "params" | "raw" | "none";
  encoding: "route" | "form" | "json";
  /** JSON type per parameter (by index): how each value is written. */
  typing: ("string" | "null" | "number" | "object" | "array" | "bool")[];
  raw: number[];
  padTo: number | null;
  chunked: boolean;
}

const body = (spec: RouteSpec | null): fc.Arbitrary<BodyRecipe> =>
  fc.record({
    kind: spec && carriesBody(spec.method) ? fc.oneof({ weight: 10, arbitrary: fc.constant("params" as const) }, { weight: 1, arbitrary: fc.constantFrom("raw" as const, "none" as const) }) : fc.oneof({ weight: 10, arbitrary: fc.constant("none" as const) }, { weight: 1, arbitrary: fc.constantFrom("raw" as const, "params" as const) }),
    encoding: fc.oneof({ weight: 12, arbitrary: fc.constant("route" as const) }, { weight: 1, arbitrary: fc.constantFrom("form" as const, "json" as const) }),
    typing: fc.array(fc.oneof({ weight: 8, arbitrary: fc.constant("string" as const) }, { weight: 1, arbitrary: fc.constantFrom("null" as const, "number" as const, "object" as const, "array" as const, "bool" as const) }), { maxLength: 4 }),
    raw: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 64 }),
    padTo: fc.oneof({ weight: 12, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: fc.constantFrom(2047, 2048, 2049, 8191, 8192, 8193, 65_536, 65_537, 200_000) }),
    chunked: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  });

export interface Recipe {
  method: string;
  host: HostVariant;
  workspace: WorkspaceVariant;
  path: PathVariant;
  base: string;
  flip: boolean;
  mutations: Mutation[];
  /** Query parameters of a POST route (its own parameters travel in the body). */
  query: Param[];
  encoding: Encoding;
  breakage: { at: number; text: string } | null;
  headers: HeaderRecipe;
  body: BodyRecipe;
}

/**
 * Every dimension perturbed at once rarely leaves a request valid enough to reach deep code: one
 * case in three is a valid request (its own method, the real workspace, the exact path, the base's
 * headers and body) with at most one parameter mutation.
 */
export function recipe(spec: RouteSpec): fc.Arbitrary<Recipe> {
  return fc.oneof({ weight: 2, arbitrary: anyRecipe(spec) }, { weight: 1, arbitrary: nearlyValid(spec) });
}

const KEEP = { keep: true as const };
function nearlyValid(spec: RouteSpec): fc.Arbitrary<Recipe> {
  return fc.record({
    method: fc.constant(spec.method),
    host: fc.constant({ kind: "default" as const }),
    workspace: fc.constant({ kind: "real" as const }),
    path: fc.constant("exact" as const),
    base: fc.constantFrom(...spec.bases.filter((b) => b !== "none")),
    flip: fc.boolean(),
    mutations: fc.array(mutation(spec), { maxLength: 1 }),
    query: fc.constant<Param[]>([]),
    encoding: fc.constant("standard" as const),
    breakage: fc.constant(null),
    headers: fc.constant({ authorization: KEEP, origin: KEEP, contentType: KEEP, cookie: KEEP, extra: [] }),
    body: fc.record({
      kind: fc.constant(carriesBody(spec.method) ? ("params" as const) : ("none" as const)),
      encoding: fc.constant("route" as const),
      typing: fc.constant([]),
      raw: fc.constant([]),
      padTo: fc.constant(null),
      chunked: fc.boolean(),
    }),
  });
}

function anyRecipe(spec: RouteSpec): fc.Arbitrary<Recipe> {
  return fc.record({
    method: method(spec.method),
    host: hostVariant,
    workspace,
    path: pathVariant,
    base: fc.oneof({ weight: 1, arbitrary: fc.constant("none") }, { weight: 5, arbitrary: fc.constantFrom(...spec.bases) }),
    flip: fc.boolean(),
    mutations: fc.oneof({ weight: 2, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 3, arbitrary: fc.array(mutation(spec), { minLength: 1, maxLength: 3 }) }),
    query: fc.oneof({ weight: 6, arbitrary: fc.constant<Param[]>([]) }, { weight: 1, arbitrary: fc.array(fc.tuple(paramName(spec), text()), { maxLength: 2 }) }),
    encoding: fc.oneof({ weight: 5, arbitrary: fc.constant("standard" as const) }, { weight: 1, arbitrary: fc.constant("raw" as const) }),
    breakage: fc.option(fc.record({ at: fc.nat(), text: fc.constantFrom(...BREAKAGES) }), { freq: 10 }),
    headers,
    body: body(spec),
  });
}

/** Paths that are not in the route table: hosted pages, unknown and reserved paths, paths outside any issuer. */
export type PagePath =
  | { kind: "sign-in page"; tx: "live" | "none" | "garbage" }
  | { kind: "unknown"; rest: string }
  | { kind: "reserved"; rest: string }
  | { kind: "outside"; path: string }
  /** Dot segments (also percent-encoded, and backslashes) climbing out of an issuer or the static files; `{ws}` is the world's workspace. */
  | { kind: "dotted"; path: string }
  /** An absolute-form request target naming another site (`OFF_SITE_TARGETS`). */
  | { kind: "off-site"; path: string };

/** Paths a workspace hostname must never be led out of its issuer by. */
export const DOTTED_PATHS = [
  "/t/{ws}/../../console",
  "/t/{ws}/../../console/setup",
  "/t/{ws}/../../demo",
  "/t/{ws}/../../",
  "/t/{ws}/..",
  "/_next/../console",
  "/_next/static/../../console/setup",
  "/t/{ws}/%2e%2e/%2e%2e/console",
  "/t/{ws}/%2E%2e/.%2E/console",
  "/t/{ws}/%2e./%2E./demo",
  "/_next/%2e%2e/console",
  "/t/{ws}/./sign-in",
  "/t/{ws}/..\\..\\console",
  "/_next\\..\\console",
  "//console",
  "/t/no-such-workspace/../{ws}/.well-known/openid-configuration",
  "/t/{ws}/../no-such-workspace/sign-in",
  "/.well-known/oauth-authorization-server/t/{ws}/../x",
];

/** Request lines in absolute form naming another site: its authority is the request's host (an unknown one). */
export const OFF_SITE_TARGETS = [
  "http://evil.test/t/{ws}/.well-known/openid-configuration",
  "https://evil.test/t/{ws}/oauth2/authorize",
  "http://evil.test/t/{ws}/sign-in",
  "http://evil.test/console",
  "http://evil.test",
  "https://a_b.auth.example.test/t/{ws}/.well-known/jwks.json",
  "http://user@auth.example.test/console",
  "http://evil.test/t/{ws}/../../console",
];

const pageSegment = fc.constantFrom("a", "oauth2", "oidc", ".well-known", "sign-in", "authorization", "token", "x.json", "%00", "%FF", "%2F", "_next", "t", "api", "favicon.ico", "\u00e9", "~", "@", "v1");
export const pagePath: fc.Arbitrary<PagePath> = fc.oneof(
  fc.record({ kind: fc.constant("sign-in page" as const), tx: fc.constantFrom("live" as const, "none" as const, "garbage" as const) }),
  fc.record({
    kind: fc.constant("unknown" as const),
    // Not a reserved family, not the sign-in page, not a route of the table.
    rest: fc
      .array(pageSegment, { minLength: 1, maxLength: 4 })
      .map((s) => s.join("/"))
      .filter((rest) => !rest.startsWith("v1/") && rest !== "sign-in" && !ROUTES.some((r) => r.path === `/${rest}`)),
  }),
  fc.record({ kind: fc.constant("reserved" as const), rest: fc.tuple(fc.constantFrom("v1/access", "v1/audit", "v1/management"), fc.constantFrom("", "/x", "/users/1", "/")).map(([a, b]) => a + b) }),
  fc.record({ kind: fc.constant("dotted" as const), path: fc.constantFrom(...DOTTED_PATHS) }),
  fc.record({ kind: fc.constant("off-site" as const), path: fc.constantFrom(...OFF_SITE_TARGETS) }),
  fc.record({ kind: fc.constant("outside" as const), path: fc.constantFrom("/", "/console", "/console/sign-in", "/console/setup", "/favicon.ico", "/robots.txt", "/_next/static/none.js", "/_next/image?url=%2Fconsole&w=64&q=75", "/_next/image?url=/t/x/sign-in&w=16&q=1", "/t", "/t/", "/api", "/%00", "/\u00ff", "//x", "/.well-known/openid-configuration", "/.well-known/webauthn", "/console/w/x/audit/export", "/console/auth/start", "/console/auth/callback", "/console/auth/sign-out") }),
);

export interface PageRecipe {
  method: string;
  host: HostVariant;
  workspace: WorkspaceVariant;
  page: PagePath;
  params: Param[];
  encoding: Encoding;
  headers: HeaderRecipe;
  body: BodyRecipe;
}

export const pageRecipe: fc.Arbitrary<PageRecipe> = fc.record({
  method: fc.oneof({ weight: 6, arbitrary: fc.constant("GET") }, { weight: 2, arbitrary: fc.constantFrom("POST", "HEAD", "OPTIONS") }, { weight: 1, arbitrary: fc.constantFrom("PUT", "PATCH", "DELETE", ...ODD_METHODS) }),
  host: hostVariant,
  workspace,
  page: pagePath,
  params: fc.array(fc.tuple(paramName(null), text()), { maxLength: 3 }),
  encoding: fc.oneof({ weight: 5, arbitrary: fc.constant("standard" as const) }, { weight: 1, arbitrary: fc.constant("raw" as const) }),
  headers,
  body: body(null),
});

// ---------------------------------------------------------------------------------------------
// Building the request

interface Base {
  params: Param[];
  headers: Record<string, string>;
  /** Query parameters of a POST route's base (the handoff's `client_id`). */
  query?: Param[];
}

const form = FORM;
/** `flip` varies a base where a valid request has two shapes (with or without a session, a narrowing scope). */
async function baseRequest(name: string, live: Live, spec: RouteSpec, flip = false): Promise<Base> {
  const ct: Record<string, string> = spec.body === "json" ? { "content-type": JSON_TYPE } : spec.body === "form" ? { "content-type": form } : {};
  switch (name) {
    case "none":
      return { params: [], headers: ct };
    case "discovery":
      return { params: [["client_id", SPA.client_id]], headers: {} };
    case "scim:token": {
      // A new user's userName each time, so that a creation can succeed.
      const own = fields(spec, live).map(([n, v]) => (n === "userName" && spec.method === "POST" ? [n, live.fresh("fuzz", "@acme.test")] : [n, v]) as Param);
      return { params: own, headers: { ...ct, authorization: `Bearer ${await live.scimToken()}` } };
    }
    case "authorize:spa":
    case "authorize:spa-api":
    case "authorize:web":
    case "authorize:m2m":
    case "authorize:minimal": {
      const client = { "authorize:spa": SPA, "authorize:spa-api": SPA, "authorize:web": WEB, "authorize:m2m": { client_id: M2M.client_id, redirect_uri: SPA.redirect_uri }, "authorize:minimal": MINIMAL }[name];
      const api = name === "authorize:spa-api";
      const verifier = "v".repeat(43);
      const params: Param[] = [
        ["client_id", client.client_id],
        ["redirect_uri", client.redirect_uri],
        ["response_type", "code"],
        ["scope", api ? "openid email read:things" : name === "authorize:minimal" ? "openid" : "openid email profile"],
        ["state", "state-0123456789-abcdefghij"],
        ["nonce", "nonce-0123456789-abcdefghij"],
        ["code_challenge", sha256Base64Url(verifier)],
        ["code_challenge_method", "S256"],
      ];
      if (api) params.push(["resource", API]);
      // Half of these carry a live hosted session, so the code is issued right here.
      return { params, headers: flip ? { cookie: await live.session() } : {} };
    }
    case "authorize:pushed": {
      const params: Param[] = [["client_id", SPA.client_id], ["request_uri", flip ? live.earlier("request_uri", 0) : await live.pushedRequest()]];
      return { params, headers: {} };
    }
    case "par:spa":
    case "par:web":
    case "par:m2m": {
      const client = name === "par:web" ? WEB : SPA;
      const verifier = "v".repeat(43);
      const params: Param[] = [
        ["redirect_uri", client.redirect_uri],
        ["response_type", "code"],
        ["scope", "openid email"],
        ["state", "state-0123456789-abcdefghij"],
        ["nonce", "nonce-0123456789-abcdefghij"],
        ["code_challenge", sha256Base64Url(verifier)],
        ["code_challenge_method", "S256"],
      ];
      if (name === "par:spa") return { params: [["client_id", SPA.client_id], ...params], headers: { ...ct, origin: "https://app.example.test" } };
      const auth = name === "par:web" ? basic(WEB.client_id, WEB.secret) : basic(M2M.client_id, M2M.secret);
      return { params, headers: { ...ct, authorization: auth } };
    }
    case "code:spa":
    case "code:web": {
      const client = name === "code:spa" ? "spa" : "web";
      const { code, verifier, redirectUri } = await live.code(client);
      const params: Param[] = [["grant_type", "authorization_code"], ["code", code], ["redirect_uri", redirectUri], ["code_verifier", verifier]];
      if (client === "spa") params.push(["client_id", SPA.client_id]);
      const auth: Record<string, string> = client === "web" ? { authorization: basic(WEB.client_id, WEB.secret) } : { origin: "https://app.example.test" };
      return { params, headers: { ...ct, ...auth } };
    }
    case "refresh:spa":
    case "refresh:web": {
      const client = name === "refresh:spa" ? "spa" : "web";
      const { refresh } = await live.tokens(client);
      const params: Param[] = [["grant_type", "refresh_token"], ["refresh_token", refresh]];
      if (client === "spa") params.push(["client_id", SPA.client_id]);
      if (flip) params.push(["scope", "openid"]);
      return { params, headers: { ...ct, ...(client === "web" ? { authorization: basic(WEB.client_id, WEB.secret) } : {}) } };
    }
    case "devicecode:spa":
    case "devicecode:web": {
      const client = name === "devicecode:spa" ? "spa" : "web";
      const { deviceCode } = await live.deviceAuthorization(client);
      const params: Param[] = [["grant_type", "urn:ietf:params:oauth:grant-type:device_code"], ["device_code", deviceCode]];
      if (client === "spa") params.push(["client_id", SPA.client_id]);
      return { params, headers: { ...ct, ...(client === "web" ? { authorization: basic(WEB.client_id, WEB.secret) } : {}) } };
    }
    case "device:spa":
    case "device:spa-api":
    case "device:minimal":
      return {
        params: [["client_id", name === "device:minimal" ? MINIMAL.client_id : SPA.client_id], ["scope", name === "device:spa-api" ? "openid read:things" : "openid"], ...(name === "device:spa-api" ? ([["resource", API]] as Param[]) : [])],
        headers: ct,
      };
    case "device:web":
      return { params: [["scope", "openid"]], headers: { ...ct, authorization: basic(WEB.client_id, WEB.secret) } };
    case "devicepage:code": {
      const { userCode } = await live.deviceAuthorization("spa");
      return { params: [["user_code", userCode]], headers: { ...ct, origin: PUBLIC_URL, ...(flip ? { cookie: await live.session() } : {}) } };
    }
    case "devicepage:sign-in": {
      const { d, cookie, csrf } = await live.deviceOnPage(false);
      return { params: [["d", d], ["csrf", csrf]], headers: { ...ct, cookie, origin: PUBLIC_URL } };
    }
    case "invitation:accept": {
      const { token, csrf } = await live.invitation();
      return { params: [["token", token], ["csrf", csrf], ["password", "an invitee's long password"]], headers: { ...ct, origin: PUBLIC_URL } };
    }
    case "portal:link": {
      const { token, csrf } = await live.portalLink();
      return { params: [["link", token], ["csrf", csrf], ["code", "123456"]], headers: { ...ct, origin: PUBLIC_URL } };
    }
    case "devicepage:decision": {
      const { d, cookie, csrf } = await live.deviceOnPage(true);
      return { params: [["d", d], ["csrf", csrf], ["decision", flip ? "deny" : "approve"]], headers: { ...ct, cookie, origin: PUBLIC_URL } };
    }
    case "cc:m2m":
      return { params: [["grant_type", "client_credentials"], ["resource", API], ["scope", "read:things"]], headers: { ...ct, authorization: basic(M2M.client_id, M2M.secret) } };
    case "bearer:spa":
    case "bearer:web": {
      const { access } = await live.reusableTokens(name === "bearer:spa" ? "spa" : "web");
      return { params: [], headers: { authorization: `Bearer ${access}`, ...(name === "bearer:spa" ? { origin: "https://app.example.test" } : {}) } };
    }
    case "bearer:m2m":
      return { params: [], headers: { authorization: `Bearer ${await live.reusableM2mToken()}` } };
    case "revoke:spa-access":
    case "revoke:spa-refresh": {
      const { access, refresh } = await live.tokens("spa");
      const hint = name === "revoke:spa-access" ? "access_token" : "refresh_token";
      return { params: [["token", hint === "access_token" ? access : refresh], ["token_type_hint", hint], ["client_id", SPA.client_id]], headers: { ...ct, origin: "https://app.example.test" } };
    }
    case "revoke:web":
      return { params: [["token", (await live.tokens("web")).refresh]], headers: { ...ct, authorization: basic(WEB.client_id, WEB.secret) } };
    case "revoke:m2m":
      return { params: [["token", await live.m2mToken()]], headers: { ...ct, authorization: basic(M2M.client_id, M2M.secret) } };
    case "introspect:web":
      return { params: [["token", (await live.reusableTokens("web")).access], ["token_type_hint", "access_token"]], headers: { ...ct, authorization: basic(WEB.client_id, WEB.secret) } };
    case "introspect:m2m":
      return { params: [["token", await live.reusableM2mToken()]], headers: { ...ct, authorization: basic(M2M.client_id, M2M.secret) } };
    case "introspect:spa":
      return { params: [["token", live.earlier("access", 0)], ["client_id", SPA.client_id]], headers: { ...ct } };
    case "logout:spa":
    case "logout:web":
    case "logout:no-grant": {
      const session = await live.freshSession();
      const client = name === "logout:web" ? "web" : "spa";
      if (name !== "logout:no-grant") await live.tokens(client, session);
      const destination = client === "web" ? "https://web.example.test/signed-out" : "https://app.example.test/";
      return { params: [["client_id", client], ["post_logout_redirect_uri", destination]], headers: { cookie: session } };
    }
    case "signin:right":
    case "signin:wrong":
    case "signin:unknown": {
      const { tx, cookie, csrf } = await live.signInTransaction();
      const email = name === "signin:unknown" ? "nobody@example.test" : ADA.email;
      const password = name === "signin:right" ? ADA.password : "not the password";
      return { params: [["tx", tx], ["csrf", csrf], ["email", email], ["password", password]], headers: { ...ct, cookie, origin: PUBLIC_URL } };
    }
    case "check:spa":
    case "check:org":
      return {
        params: [["resource", API], ["permission", "read:things"], ["organization_id", name === "check:org" ? ACME : "@null"]],
        headers: { ...ct, authorization: `Bearer ${(await live.reusableTokens("spa")).access}` },
      };
    case "check:m2m":
      return { params: [["resource", API], ["permission", "read:things"], ["organization_id", "@null"]], headers: { ...ct, authorization: `Bearer ${await live.reusableM2mToken()}` } };
    case "form:tx": {
      // A live pending sign-in: its id, the browser-binding cookie and the form's CSRF token.
      const { tx, cookie, csrf } = await live.signInTransactionFor(spec.path);
      const session = flip ? `; ${await live.session()}` : "";
      return { params: [["tx", tx], ["csrf", csrf], ...fields(spec, live)], headers: { ...ct, cookie: cookie + session, origin: PUBLIC_URL } };
    }
    case "form:session":
      return { params: [["csrf", live.earlier("csrf", 0)], ...fields(spec, live)], headers: { ...ct, cookie: await live.session(), origin: PUBLIC_URL } };
    case "handoff:web":
    case "handoff:m2m": {
      if (spec.fields?.some(([, v]) => v === "@access")) await live.reusableTokens("web");
      const auth = name === "handoff:web" ? basic(WEB.client_id, WEB.secret) : basic(M2M.client_id, M2M.secret);
      return { params: fields(spec, live), headers: { ...ct, authorization: auth }, query: [["client_id", name === "handoff:web" ? WEB.client_id : M2M.client_id]] };
    }
    case "get:query":
      return { params: fields(spec, live), headers: flip ? { cookie: await live.session() } : {} };
    case "saml:acs": {
      // Cross-site, as the identity provider's auto-submitted form: no cookie, no Origin of ours.
      const { connectionId, SAMLResponse, RelayState } = await live.samlResponse();
      return { params: [["SAMLResponse", SAMLResponse], ["RelayState", RelayState]], headers: ct, query: [["connection", connectionId]] };
    }
    case "saml:metadata":
      return { params: [["connection", await live.samlConnection()]], headers: {} };
  }
  throw new Error(`unknown base ${name}`);
}

/** The route's own fields with their live references resolved. */
function fields(spec: RouteSpec, live: Live): Param[] {
  return (spec.fields ?? []).map(([n, v]) => [n, resolve(v, live, 0)] as Param);
}

/** Resolves a live reference to a value minted earlier; anything else is itself. */
function resolve(value: string, live: Live, pick: number): string {
  const refs: Record<string, string> = { "@access": "access", "@refresh": "refresh", "@m2m": "m2m", "@code": "code", "@id": "id", "@tx": "tx", "@csrf": "csrf", "@session": "session" };
  return value.replace(/@(access|refresh|m2m|code|id|tx|csrf|session)\b/g, (ref) => {
    const v = live.earlier(refs[ref], pick);
    return ref === "@session" ? v.replace(/^lk_session=/, "") : v;
  });
}

function applyMutations(params: Param[], mutations: Mutation[], live: Live): Param[] {
  const out = params.map(([n, v]) => [n, v] as Param);
  for (const m of mutations) {
    const i = out.length ? ("i" in m ? m.i % out.length : 0) : -1;
    switch (m.op) {
      case "drop":
        if (i >= 0) out.splice(i, 1);
        break;
      case "dup":
        if (i >= 0) out.push([out[i][0], m.same ? out[i][1] : resolve(m.value, live, m.i)]);
        break;
      case "set":
        if (i >= 0) out[i] = [out[i][0], resolve(m.value, live, m.i)];
        break;
      case "rename":
        if (i >= 0) out[i] = [m.name, out[i][1]];
        break;
      case "add":
        out.push([m.name, resolve(m.value, live, m.name.length)]);
        break;
      case "nul":
        if (i >= 0) {
          const v = out[i][1];
          const at = m.at % (v.length + 1);
          out[i] = [out[i][0], `${v.slice(0, at)}\u0000${v.slice(at)}`];
        }
        break;
      case "huge":
        if (i >= 0) out[i] = [out[i][0], (out[i][1] || "x").repeat(Math.ceil(m.size / Math.max(1, out[i][1].length)))];
        break;
    }
  }
  return out;
}

/** UTF-8 bytes of `s` as a latin1 string (the wire form). */
const bytes = (s: string) => Buffer.from(s, "utf8").toString("latin1");

/** Encodes parameters as a query string or form body. */
export function encodeParams(params: Param[], encoding: Encoding, breakage: { at: number; text: string } | null): string {
  let out =
    encoding === "standard"
      ? new URLSearchParams(params).toString()
      : params.map(([n, v]) => `${bytes(n)}=${bytes(v)}`.replace(/[\s\u0000]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`)).join("&");
  if (breakage) {
    const at = breakage.at % (out.length + 1);
    out = out.slice(0, at) + breakage.text + out.slice(at);
  }
  return out;
}

function jsonValue(value: string, type: BodyRecipe["typing"][number] | undefined): string {
  if (value === "@null") return "null";
  switch (type) {
    case "null":
      return "null";
    case "number":
      return /^-?\d+(\.\d+)?$/.test(value) ? value : String(value.length);
    case "object":
      return `{${JSON.stringify(value)}:${JSON.stringify(value)}}`;
    case "array":
      return `[${JSON.stringify(value)}]`;
    case "bool":
      return value.length % 2 ? "true" : "false";
    default:
      return JSON.stringify(value);
  }
}

/** A JSON object written member by member, so duplicated names stay duplicated. */
export function encodeJson(params: Param[], typing: BodyRecipe["typing"]): string {
  return `{${params.map(([n, v], i) => `${JSON.stringify(n)}:${jsonValue(v, typing[i])}`).join(",")}}`;
}

function pad(text: string, to: number | null, json: boolean): string {
  if (to === null || text.length >= to) return text;
  // Padding that keeps the meaning: empty form pairs are skipped, JSON allows trailing blanks.
  return text + (json ? " " : "&").repeat(to - Buffer.byteLength(text, "latin1"));
}

export interface Built {
  request: WireRequest;
  /** For a route's request: the route's own path below the issuer as a valid request names it (`spec.target` filled in, or `spec.path`). */
  routePath?: string;
  /** The `Host` it is sent with. */
  host: string;
  /** Text the answer may legitimately echo back (parameter names and values, the target). */
  echoes: string[];
  bodyBytes: number;
}

function applyHeaders(base: Record<string, string>, recipe: HeaderRecipe, live: Live): [string, string][] {
  const out: [string, string][] = [];
  const choose = (name: string, choice: HeaderChoice) => {
    const value = choice.keep ? base[name] : choice.value;
    if (value !== undefined && value !== null) out.push([name, value]);
  };
  choose("authorization", recipe.authorization);
  choose("origin", recipe.origin);
  choose("content-type", recipe.contentType);
  choose("cookie", recipe.cookie);
  for (const [name, value] of Object.entries(base)) if (!["authorization", "origin", "content-type", "cookie"].includes(name)) out.push([name, value]);
  out.push(...recipe.extra);
  // Header values travel as UTF-8 bytes; CR and LF would end the header (request smuggling is not this test's subject).
  return out.map(([n, v]) => [n, bytes(resolve(v, live, v.length)).replace(/[\r\n]/g, " ")]);
}

function buildBody(recipe: BodyRecipe, params: Param[], routeEncoding: "form" | "json" | undefined, breakage: Recipe["breakage"], encoding: Encoding): Buffer | undefined {
  if (recipe.kind === "none") return undefined;
  if (recipe.kind === "raw") return Buffer.from(pad(Buffer.from(recipe.raw).toString("latin1"), recipe.padTo, true), "latin1");
  const asJson = recipe.encoding === "json" || (recipe.encoding === "route" && routeEncoding === "json");
  const text = asJson ? bytes(encodeJson(params, recipe.typing)) : encodeParams(params, encoding, breakage);
  return Buffer.from(pad(text, recipe.padTo, asJson), "latin1");
}

function workspaceSegment(variant: WorkspaceVariant, ws: string): string {
  if (variant.kind === "real") return ws;
  if (variant.kind === "unknown") return "no-such-workspace";
  return bytes(variant.raw);
}

function pathFor(variant: PathVariant, routePath: string): string {
  switch (variant) {
    case "exact":
      return routePath;
    case "slash":
      return `${routePath}/`;
    case "upper":
      return routePath.toUpperCase();
    case "double-slash":
      return routePath.replace("/", "//");
    case "dot-segment":
      return `/x/..${routePath}`;
    case "dot-escape":
      return `/x/%2e%2e${routePath}`;
    case "dot-mixed":
      return `/x/.%2E${routePath}`;
    case "climb":
      return `/../..${routePath}`;
    case "backslash":
      return `\\..${routePath}`;
    case "percent":
      return routePath.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
    case "semicolon":
      return `${routePath};x=1`;
    case "nul":
      return `${routePath}%00`;
  }
}

/** The `Host` a request is sent with. */
function hostOf(variant: HostVariant, live: Live): string {
  if (variant.kind === "default") return HOST;
  if (variant.kind === "hostname") return workspaceHostname(live.ws);
  return bytes(variant.raw);
}

function echoesOf(params: Param[], request: WireRequest): string[] {
  const out = new Set<string>([request.target]);
  for (const [n, v] of params) {
    out.add(n);
    out.add(v);
  }
  for (const [, v] of request.headers) out.add(v);
  return [...out].filter((e) => e.length >= 3);
}

export async function materialize(r: Recipe, spec: RouteSpec, live: Live): Promise<Built> {
  const base = await baseRequest(r.base, live, spec, r.flip);
  const params = applyMutations(base.params, r.mutations, live);
  const inBody = carriesBody(spec.method);
  const onQuery = inBody ? [...(base.query ?? []), ...r.query.map(([n, v]) => [n, resolve(v, live, n.length)] as Param)] : params;
  const query = encodeParams(onQuery, r.encoding, inBody ? null : r.breakage);
  const routePath = spec.target ? spec.target.replace("{scim-user}", await live.scimUser()) : spec.path;
  const target = `/t/${workspaceSegment(r.workspace, live.ws)}${pathFor(r.path, routePath)}${query ? `?${query}` : ""}`;
  const body = buildBody(r.body, inBody ? params : onQuery, spec.body, inBody ? r.breakage : null, r.encoding);
  const request: WireRequest = { method: r.method, target, headers: applyHeaders(base.headers, r.headers, live), body, chunked: body !== undefined && r.body.chunked };
  return { request, routePath, host: hostOf(r.host, live), echoes: echoesOf([...params, ...onQuery], request), bodyBytes: body?.length ?? 0 };
}

export async function materializePage(r: PageRecipe, live: Live): Promise<Built> {
  let params = r.params.map(([n, v]) => [n, resolve(v, live, n.length)] as Param);
  const ws = workspaceSegment(r.workspace, live.ws);
  let path: string;
  const headers: Record<string, string> = {};
  switch (r.page.kind) {
    case "sign-in page": {
      path = `/t/${ws}/sign-in`;
      if (r.page.tx === "live") {
        const { tx, cookie } = await live.signInTransaction();
        params = [["tx", tx], ...params];
        headers.cookie = cookie;
      } else if (r.page.tx === "garbage") params = [["tx", "garbage"], ...params];
      break;
    }
    case "unknown":
      path = `/t/${ws}/${bytes(r.page.rest)}`;
      break;
    case "reserved":
      path = `/t/${ws}/${r.page.rest}`;
      break;
    case "outside":
      path = bytes(r.page.path);
      break;
    case "dotted":
    case "off-site":
      path = r.page.path.replaceAll("{ws}", live.ws);
      break;
  }
  const query = encodeParams(params, r.encoding, null);
  const target = `${path}${query ? `?${query}` : ""}`;
  const body = buildBody(r.body, params, "form", null, r.encoding);
  const request: WireRequest = { method: r.method, target, headers: applyHeaders(headers, r.headers, live), body, chunked: body !== undefined && r.body.chunked };
  return { request, host: hostOf(r.host, live), echoes: echoesOf(params, request), bodyBytes: body?.length ?? 0 };
}
