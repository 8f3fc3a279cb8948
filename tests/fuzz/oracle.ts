/**
 * What every answer must satisfy: no 5xx (501 for an unknown method is the one allowed), nothing
 * of the server's inside on the wire (stack traces, file paths, SQL, database or JavaScript error
 * text), and a status that SPEC.md's errors table allows for that route and method.
 */
import { hostnameServesPath } from "../../lib/hostnames/directory";
import { requestTargetOf } from "../../lib/http/request-target";
import type { HostVariant, PagePath, RouteSpec, WorkspaceVariant } from "./cases";
import { header, type WireAnswer } from "./wire";

/** Every status but 5xx; 501 is how an unknown method may be refused. Used where the path's shape decides nothing. */
const ANY_CLIENT_ERROR = new Set<number>([...Array.from({ length: 300 }, (_, i) => 200 + i), 501]);

/** SPEC.md: "429 from edge limits" may answer any request. */
const EDGE = [429];

/** Methods Node's HTTP parser knows; others are refused by the parser itself (400) before any listener. */
const NODE_METHODS = new Set(["DELETE", "GET", "HEAD", "POST", "PUT", "CONNECT", "OPTIONS", "TRACE", "COPY", "LOCK", "MKCOL", "MOVE", "PROPFIND", "PROPPATCH", "SEARCH", "UNLOCK", "BIND", "REBIND", "UNBIND", "ACL", "REPORT", "MKACTIVITY", "CHECKOUT", "MERGE", "M-SEARCH", "NOTIFY", "SUBSCRIBE", "UNSUBSCRIBE", "PATCH", "PURGE", "MKCALENDAR", "LINK", "UNLINK", "SOURCE", "QUERY"]);

export interface Expectation {
  allowed: Set<number>;
  /** The body the answer must have (the generic 404), when one is decided. */
  body?: string;
  /** The request reaches the route itself (its path, method and a real workspace): its body limit applies. */
  reachesRoute?: boolean;
  /** Why this set: printed with a failure. */
  rule: string;
}

/** The generic 404 (SPEC.md): an unknown workspace, path or host. */
export const GENERIC_NOT_FOUND = JSON.stringify({ error: "invalid_request", error_description: "Not found" });

/**
 * The request target as the server decides it: the one rule of the production listener
 * (lib/http/request-target.ts), imported, so that the oracle matches paths to routes exactly as
 * the server does. A target it refuses is answered 400 at every host.
 */
const decided = (target: string) => requestTargetOf(target);

/** A target's path in normal form, after an absolute form's authority ("/" when it has none), before the query; null when the server refuses it. */
function pathOf(target: string): string | null {
  const decision = decided(target);
  return decision.ok ? decision.path : null;
}

/**
 * What a workspace hostname serves (docs/hostnames.md): its workspace's issuer, RFC 8414's metadata
 * path of it, the pages' static files and the WebAuthn related-origins document. The server's own
 * rule (lib/hostnames/directory.ts), imported: seed 1348533552 found a copy here that had missed
 * `/.well-known/webauthn`.
 */
function servedAtHostname(target: string, ws: string): boolean {
  return hostnameServesPath(ws, pathOf(target) ?? "");
}

/**
 * What the host and the path's form decide before the route does, or null when they decide
 * nothing: a path not in normal form is refused with 400 at every host; a Host that is not a
 * valid host name is an unknown host (the generic 404, never the default host's answer); a
 * workspace hostname answers the generic 404 outside its own issuer.
 */
export function expectAtHost(host: HostVariant, target: string, ws: string): Expectation | null {
  const decision = decided(target);
  if (!decision.ok) return { allowed: new Set([400]), rule: "a path not in normal form: 400 at every host" };
  // An absolute-form target's authority is the request's host, in place of Host (RFC 9112 §3.3); these name another site.
  const authority = decision.authority;
  if (authority !== null) return { allowed: new Set([404]), body: GENERIC_NOT_FOUND, rule: `a request line naming ${JSON.stringify(authority)}: an unknown host, the generic 404` };
  if (host.kind === "malformed") return { allowed: new Set([404]), body: GENERIC_NOT_FOUND, rule: `Host ${JSON.stringify(host.raw)} is no valid host name: the generic 404` };
  if (host.kind === "hostname" && !servedAtHostname(target, ws)) return { allowed: new Set([404]), body: GENERIC_NOT_FOUND, rule: "a workspace hostname outside its own issuer: the generic 404" };
  return null;
}

/**
 * Whether a request target names the route's own path under one workspace segment, the path
 * in the server's normal form (`decided`): `/t/{segment}{routePath}`. A segment that is no
 * workspace id (`a%2Fb` is one segment, not two) still names the route's path.
 */
export function namesRoute(target: string, routePath: string): boolean {
  const path = pathOf(target);
  if (path === null || !path.startsWith("/t/")) return false;
  const slash = path.indexOf("/", 3);
  return slash > 3 && path.slice(slash) === routePath;
}

/** The statuses allowed for one request (`target`) to a route of the table whose own path is `routePath`. */
export function expectRoute(spec: RouteSpec, method: string, workspace: WorkspaceVariant, target: string, routePath: string): Expectation {
  if (!namesRoute(target, routePath)) return { allowed: ANY_CLIENT_ERROR, rule: "path of another shape: any non-5xx" };
  const own = method === spec.method || (method === "HEAD" && spec.method === "GET");
  if (own) {
    if (workspace.kind === "real") return { allowed: new Set([...spec.statuses, ...EDGE]), rule: `${spec.name}: SPEC.md statuses ${spec.statuses.join(", ")}`, reachesRoute: true };
    // A name that cannot be a workspace id may also be refused as malformed (400, SPEC.md: "encoding").
    if (workspace.kind === "odd" || workspace.kind === "path") return { allowed: new Set([400, 404, ...EDGE]), rule: "invalid workspace name: 404, or 400 for its encoding" };
    return { allowed: new Set([404, ...EDGE]), rule: "unknown workspace: the generic 404" };
  }
  // Another route of the table on the same path (HEAD being GET's): that route's statuses.
  const sibling = spec.siblings?.[method === "HEAD" ? "GET" : method];
  if (sibling) return { allowed: new Set([...sibling, ...(workspace.kind === "real" ? [] : [400, 404]), ...EDGE]), rule: `${spec.name}: the same path's ${method} route` };
  // The table answers other methods of its paths (405 with Allow); a CORS preflight is 204 (or 400/403 refusing it).
  // Under a name that is no workspace id the path is not the table's: 404 like any unknown path.
  const unknown = workspace.kind === "odd" || workspace.kind === "path" ? [400, 404] : [];
  if (method === "OPTIONS") return { allowed: new Set([204, 400, 403, 404, 405, ...EDGE]), rule: "OPTIONS on a table path: preflight or 405" };
  return { allowed: new Set([405, 501, ...unknown, ...EDGE]), rule: "known path, wrong method: 405 (or 501 for a method the server does not implement)" };
}

/** The statuses allowed for a path outside the route table. */
export function expectPage(page: PagePath, method: string, workspace: WorkspaceVariant): Expectation {
  if (workspace.kind === "path" || page.kind === "outside" || page.kind === "dotted" || page.kind === "off-site") return { allowed: ANY_CLIENT_ERROR, rule: "page or path outside the issuers: any non-5xx" };
  // Under a name that is no workspace id, Next routes the path (and may redirect a trailing slash).
  if (workspace.kind === "odd" && page.kind === "reserved") {
    const options = method === "OPTIONS" ? [204] : [];
    return { allowed: new Set([308, 400, 404, 405, 501, ...options, ...EDGE]), rule: "reserved path under an invalid workspace name: an unknown path" };
  }
  if (page.kind === "reserved") return { allowed: new Set([404, ...EDGE]), rule: "reserved API family: fails closed with 404" };
  if (page.kind === "sign-in page") {
    if ((method === "GET" || method === "HEAD") && workspace.kind === "real") return { allowed: new Set([200, ...EDGE]), rule: "the hosted sign-in page" };
    return { allowed: ANY_CLIENT_ERROR, rule: "the hosted sign-in page, other method or workspace: any non-5xx" };
  }
  if (["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].includes(method)) return { allowed: new Set([404, ...EDGE]), rule: "unknown path under an issuer: the generic 404" };
  if (method === "OPTIONS") return { allowed: new Set([204, 404, 405, ...EDGE]), rule: "OPTIONS on an unknown path" };
  return { allowed: new Set([404, 405, 501, ...EDGE]), rule: "unknown path, unknown method: 404, 405 or 501" };
}

/**
 * Node's own refusals before any listener runs: the parser's bare 400/431 for a malformed request,
 * and 417 for an `Expect` other than 100-continue (http.Server's documented default).
 */
function transportRefusal(answer: WireAnswer, headers: [string, string][]): boolean {
  const bare = answer.body.length === 0 && header(answer, "content-type") === undefined;
  if (answer.status === 417) return bare && headers.some(([n, v]) => n.toLowerCase() === "expect" && v.toLowerCase() !== "100-continue");
  return (answer.status === 400 || answer.status === 431) && bare && (header(answer, "connection") ?? "").toLowerCase() === "close";
}

const LEAKS: [RegExp, string][] = [
  [/\n\s*at\s+\S[^\n]*(:\d+:\d+|\(native\)|\(<anonymous>\))/, "stack trace"],
  [/\bat (async )?[A-Za-z_$][\w$.<>[\]]* \([^)]*:\d+:\d+\)/, "stack frame"],
  [/(\/work\/|\/home\/|\/root\/|\/usr\/lib|node_modules|\.next\/server|webpack-internal:|file:\/\/|\[root-of-the-server\]|\.tsx?:\d+)/, "file path"],
  // Drizzle's "Failed query: … params: …" is found by its first words: "params: " alone is also
  // the OAuth URNs' (`urn:ietf:params:`), which an error description may quote (seed 1938463355).
  [/(Failed query|SQLSTATE|invalid byte sequence|violates .* constraint|syntax error at or near|\brelation "|\bcolumn "|duplicate key value|DrizzleQueryError|PostgresError|PGlite)/i, "database error text"],
  // PostgreSQL's own names, as its messages write them (lower case, not inside a base64url token:
  // a random cookie or code such as `-PG_IqV…` is no leak; seed 1625335866 drew one).
  [/(?<![\w-])pg_(catalog|class|attribute|namespace|type|proc|index|constraint|stat[a-z_]*|toast[a-z_]*|temp[a-z_0-9]*|settings|database|roles|authid|locks|advisory[a-z_]*|sleep|cancel_backend|terminate_backend)\b/, "database error text"],
  [/\bselect\b[\s\S]{0,300}\bfrom\s+"/i, "SQL"],
  [/\b(insert into "|update "[a-z_]+" set|delete from ")/i, "SQL"],
  [/(TypeError|ReferenceError|RangeError|SyntaxError: |is not a function|Cannot read propert|is not iterable|Maximum call stack)/, "JavaScript error text"],
];

const escapeHtml = (v: string) => v.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** The answer with every echo of the request removed, so only what the server itself wrote is scanned. */
function scrub(text: string, echoes: string[]): string {
  let out = text;
  for (const echo of [...echoes].sort((a, b) => b.length - a.length)) {
    for (const form of new Set([echo, escapeHtml(echo), JSON.stringify(echo).slice(1, -1), Buffer.from(echo, "latin1").toString("utf8")])) {
      if (form.length >= 3) out = out.split(form).join("");
    }
  }
  return out;
}

export function leaks(answer: WireAnswer, echoes: string[]): string | null {
  const headers = [...answer.headers].map(([n, vs]) => vs.map((v) => `${n}: ${v}`).join("\n")).join("\n");
  const text = scrub(`${headers}\n\n${answer.body.toString("utf8")}`, echoes);
  for (const [pattern, what] of LEAKS) {
    const m = pattern.exec(text);
    if (m) return `${what} on the wire: …${text.slice(Math.max(0, m.index - 60), m.index + 120)}…`;
  }
  return null;
}

/** Null when the answer is acceptable, else why not. */
export function judge(method: string, headers: [string, string][], answer: WireAnswer, expectation: Expectation, echoes: string[], tooLarge: boolean): string | null {
  const leak = leaks(answer, echoes);
  if (leak) return leak;
  if (answer.status >= 500 && answer.status !== 501) return `server error ${answer.status}`;
  if (transportRefusal(answer, headers)) return null;
  if (!NODE_METHODS.has(method) && answer.status !== 400) return `method ${JSON.stringify(method)} is not HTTP; expected the parser's 400, got ${answer.status}`;
  if (!expectation.allowed.has(answer.status)) return `status ${answer.status} is not allowed (${expectation.rule})`;
  if (expectation.body !== undefined && method !== "HEAD" && answer.body.toString("utf8") !== expectation.body) return `not the expected body (${expectation.rule})`;
  if (answer.status === 405 && !header(answer, "allow")) return "405 without an Allow header";
  if (tooLarge && answer.status < 400) return `a body past the route's limit was accepted (${answer.status})`;
  return null;
}

/** The origin the SPA registered (fixtures.ts); every other origin is unregistered. */
export const REGISTERED_ORIGIN = "https://app.example.test";
/** Endpoints a browser application may call cross-origin (docs/integration.md). */
const CORS_ROUTES = new Set(["/oauth2/token", "/oauth2/revoke", "/oidc/userinfo", "/oidc/session"]);
const PUBLIC_DOCUMENTS = new Set(["/.well-known/openid-configuration", "/.well-known/jwks.json"]);

/**
 * CORS: the public documents are readable from any origin (`*`, no credentials); the browser
 * endpoints answer a registered origin, errors included, so a page can branch on the status; no
 * answer ever grants an origin nobody registered.
 */
export function corsProblem(spec: RouteSpec, method: string, reachesRoute: boolean, headers: [string, string][], answer: WireAnswer): string | null {
  const origins = headers.filter(([n]) => n.toLowerCase() === "origin").map(([, v]) => v);
  const granted = header(answer, "access-control-allow-origin");
  const credentials = header(answer, "access-control-allow-credentials");
  if (granted !== undefined && granted !== "*" && granted !== REGISTERED_ORIGIN) return `CORS granted to an unregistered origin ${JSON.stringify(granted)}`;
  if (granted === "*" && credentials?.toLowerCase() === "true") return "CORS: * with credentials";
  if (!reachesRoute || method === "OPTIONS") return null;
  if (PUBLIC_DOCUMENTS.has(spec.path) && answer.status === 200 && granted !== "*") return `CORS: public document answered without Access-Control-Allow-Origin: * (got ${granted ?? "none"})`;
  if (CORS_ROUTES.has(spec.path) && origins.length === 1 && origins[0] === REGISTERED_ORIGIN && (answer.status === 200 || answer.status === 401) && granted !== REGISTERED_ORIGIN) {
    // A confidential client's credentials from a browser are refused (SPEC.md); that refusal needs no CORS.
    const basicAuth = headers.some(([n, v]) => n.toLowerCase() === "authorization" && /^basic /i.test(v));
    if (!(spec.path === "/oauth2/token" || spec.path === "/oauth2/revoke") || !basicAuth) return `CORS: ${answer.status} to the registered origin without Access-Control-Allow-Origin (got ${granted ?? "none"})`;
  }
  return null;
}
