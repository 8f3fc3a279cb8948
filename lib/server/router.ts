import { eq } from "drizzle-orm";
import { workspaces } from "../../db/schema";
import { cacheGeneration, cacheIfCurrent, workspaceCacheKey, type Service } from "../service";
import { contextFor as contextAt, type Endpoint, type EndpointContext, type Workspace } from "../http/context";
import { FEATURE_HOST_RESOLUTION, FEATURE_HOST_ROUTES, FEATURE_ISSUER_ROUTES } from "../features/routes";
import type { HostResolution, HostRoute } from "../surfaces/routes";
import { atDefaultHost } from "../http/request-host";
import { metadataWorkspace, splitIssuerPath } from "../http/issuer-paths";
import { failureResponse, json, type ErrorFamily } from "../http/errors";
import { hostedFailures, notFoundResponse, oauthFailures } from "../oauth/errors";
import { clientAddress } from "../http/client-address";
import { countRequests, type RequestLimits } from "../limits/declarations";
import { CLIENT_REQUESTS } from "../oauth/clients";
import { checkFailures } from "../authz/errors";
import { CORS_PATHS, preflight, PUBLIC_DOCUMENT_PATHS, withPublicCors } from "../oauth/cors";
import { withRequestLocale } from "../i18n/request-locale";
import { authorizeEndpoint } from "../oauth/authorize";
import { discoveryEndpoint, jwksEndpoint } from "../oauth/discovery";
import { sessionCheckEndpoint } from "../oauth/session-check";
import { tokenEndpoint } from "../oauth/token";
import { userinfoEndpoint } from "../oauth/userinfo";
import { revokeEndpoint } from "../oauth/revoke";
import { introspectEndpoint } from "../oauth/introspect";
import { logoutEndpoint } from "../oauth/logout";
import { passwordSignInEndpoint, refusedPasswordPostEndpoint } from "../sign-in/hosted-sign-in";
import { PasswordTurn, PasswordWorkRefused } from "../authn/password";
import { authorizationCheckEndpoint } from "../authz/check";
import type { Route } from "../http/route";
import { signInStepRoutes } from "../sign-in/steps/routes";
import { handoffRoutes } from "../account-security/handoff-routes";
import { portalRoutes } from "../account-security/portal-routes";
import { handoffFailures } from "../account-security/errors";
import { scimFailures } from "../organizations/scim/errors";

export type { Route } from "../http/route";

/** Every endpoint under `/t/{workspace}`: the one table the custom server and the route.ts files share. */
export const routes: Route[] = [
  // Also RFC 8414's /.well-known/oauth-authorization-server/t/{workspace} (`issuerRequest`).
  { method: "GET", path: "/.well-known/openid-configuration", endpoint: discoveryEndpoint, machine: true },
  { method: "GET", path: "/.well-known/jwks.json", endpoint: jwksEndpoint, machine: true },
  { method: "GET", path: "/oauth2/authorize", endpoint: authorizeEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/oauth2/token", endpoint: tokenEndpoint, machine: true, limits: [CLIENT_REQUESTS] },
  { method: "GET", path: "/oidc/userinfo", endpoint: userinfoEndpoint, machine: true },
  { method: "GET", path: "/oidc/session", endpoint: sessionCheckEndpoint, machine: true },
  { method: "POST", path: "/oauth2/revoke", endpoint: revokeEndpoint, machine: true, limits: [CLIENT_REQUESTS] },
  { method: "POST", path: "/oauth2/introspect", endpoint: introspectEndpoint, machine: true, limits: [CLIENT_REQUESTS] },
  { method: "GET", path: "/oidc/logout", endpoint: logoutEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/password", endpoint: passwordSignInEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/authorization/check", endpoint: authorizationCheckEndpoint, machine: true, errors: "problem" },
  // The sign-in's steps (lib/sign-in/steps/routes.ts): hosted form posts, each factor's, sign-up's
  // and those of enterprise connections and social providers (lib/federation).
  ...signInStepRoutes,
  // The account-security portal (lib/account-security): the backend handoff and the portal, its
  // verification by each factor included.
  ...handoffRoutes,
  ...portalRoutes,
  // The features' own (lib/features/routes.ts).
  ...FEATURE_ISSUER_ROUTES,
];

const RESERVED_PREFIXES = ["/v1/access", "/v1/audit", "/v1/management"];

const byKey = new Map(routes.map((r) => [`${r.method} ${r.path}`, r]));
const knownPaths = new Set(routes.map((r) => r.path));
/** The routes that answer the paths below their own (`Route.below`), by path. */
const prefixes = [...new Set(routes.filter((r) => r.below).map((r) => r.path))];

/** The table path that answers `subpath`: itself, or the path of a route that answers below it. */
function tablePath(subpath: string): string | undefined {
  if (knownPaths.has(subpath)) return subpath;
  return prefixes.find((p) => subpath.startsWith(`${p}/`));
}

export function findRoute(method: string, subpath: string): Route | undefined {
  const exact = byKey.get(`${method} ${subpath}`);
  if (exact || prefixes.length === 0) return exact;
  const path = tablePath(subpath);
  return path === undefined ? undefined : byKey.get(`${method} ${path}`);
}

export { splitIssuerPath };

/** The discovery document's path under the issuer. */
const DISCOVERY_PATH = "/.well-known/openid-configuration";

/**
 * The issuer and path a request names: a path under `/t/{workspace}`, or RFC 8414's metadata
 * path for that issuer, which answers as its discovery document does (the same route: content,
 * query, CORS, caching, limits and errors).
 */
function issuerRequest(pathname: string): { workspaceId: string; subpath: string } | null {
  const split = splitIssuerPath(pathname);
  if (split) return split;
  const workspaceId = metadataWorkspace(pathname);
  return workspaceId === null ? null : { workspaceId, subpath: DISCOVERY_PATH };
}

/** How long a process answers for a workspace without reading it again (a change is heard of at once: lib/service.ts). */
const WORKSPACE_TTL_MS = 5_000;

/** Workspace rows are tiny and change rarely; a short positive cache saves a round trip per request. */
export async function resolveWorkspace(service: Service, id: string): Promise<Workspace | null> {
  const key = workspaceCacheKey("workspace", id);
  const cached = service.cache.get(key) as { value: Workspace; at: number } | undefined;
  if (cached && Date.now() - cached.at < WORKSPACE_TTL_MS) return cached.value;
  const generation = cacheGeneration(service);
  const [row] = await service.db.select({ id: workspaces.id, name: workspaces.name, system: workspaces.system }).from(workspaces).where(eq(workspaces.id, id)).limit(1);
  if (!row) {
    service.cache.delete(key);
    return null;
  }
  const value = { id: row.id, name: row.name };
  cacheIfCurrent(service, generation, key, { value, at: Date.now() });
  return value;
}

/** Without a feature that lets other hosts serve workspaces: the default host serves every workspace, any other host nothing. */
const DEFAULT_HOST_ONLY: HostResolution = {
  servingHostname: async (service, headers) => (atDefaultHost(service, headers) ? null : undefined),
  serves: (service, headers) => atDefaultHost(service, headers) || Promise.resolve(false),
  relyingPartyId: async () => null,
};

/** Which workspace a request's host serves, as the feature that declares it decides (lib/features/routes.ts). */
const hosts: HostResolution = FEATURE_HOST_RESOLUTION ?? DEFAULT_HOST_ONLY;

/** The context of a workspace's endpoint at a hostname (null: the default host), with the hostname's WebAuthn relying party (`hosts`). */
export function contextFor(service: Service, workspace: Workspace, hostname: string | null = null): EndpointContext {
  return contextAt(service, workspace, hostname, () => hosts.relyingPartyId(service, workspace.id));
}

/**
 * The hostname a request for `workspaceId` is served under (`hosts`): null at the default
 * host, the hostname at one of the workspace's own; undefined when its host does not serve that
 * workspace (unknown, or another workspace's), answered like an unknown route so a workspace at
 * another hostname cannot be told apart from none. Throws when the hostnames cannot be read.
 */
export const servingHostname: HostResolution["servingHostname"] = hosts.servingHostname;

/**
 * The context of a workspace's page or endpoint for a request's headers, or null when the
 * workspace does not exist or the host does not serve it (both answered as not found).
 */
export async function requestContext(service: Service, headers: { get(name: string): string | null }, workspaceId: string): Promise<EndpointContext | null> {
  const hostname = await servingHostname(service, headers, workspaceId);
  if (hostname === undefined) return null;
  const workspace = await resolveWorkspace(service, workspaceId);
  return workspace ? contextFor(service, workspace, hostname) : null;
}

/** Each route's error family (lib/http/errors.ts `ErrorFamily`), by the name its table entry declares. */
const FAMILIES: Record<NonNullable<Route["errors"]>, ErrorFamily> = {
  oauth: oauthFailures,
  hosted: hostedFailures,
  problem: checkFailures,
  "account-security": handoffFailures,
  scim: scimFailures,
};

const familyOf = (route: Pick<Route, "errors">): ErrorFamily => FAMILIES[route.errors ?? "oauth"];

/** A failure outside the endpoint itself, in the route's own shape (503 stays 503: fail closed). */
function routeFailure(route: Pick<Route, "errors" | "method" | "path">, error: unknown): Response {
  // The password-hashing queue is full (lib/authn/password.ts): try again shortly.
  if (error instanceof PasswordWorkRefused) return familyOf(route).rateLimited(error.retryAfterSeconds);
  return failureResponse(familyOf(route), error, `${route.method} ${route.path}`);
}

/** The public documents' answers made outside their endpoint are readable by any origin too. */
const publicOrNot = (route: Pick<Route, "path">, response: Response) => (PUBLIC_DOCUMENT_PATHS.has(route.path) ? withPublicCors(response) : response);

/** Requests per client address on every route of the issuer table, answered 429 with Retry-After. */
const ADDRESS_REQUESTS: RequestLimits = {
  name: "ip",
  label: "Requests on every route of the issuer table",
  per: "client address",
  rate: { times: 1, scale: "requestsPerMinute", windowMs: 60_000 },
};

/** The limits every route of the table has, before its own (`Route.limits`). */
export const EVERY_ROUTE_LIMITS: readonly RequestLimits[] = [ADDRESS_REQUESTS];

const declared = new WeakMap<Route, readonly RequestLimits[]>();

/** A route's request limits: the table's, then its own. */
function routeLimits(route: Route): readonly RequestLimits[] {
  if (!route.limits?.length) return EVERY_ROUTE_LIMITS;
  let limits = declared.get(route);
  if (!limits) declared.set(route, (limits = [...EVERY_ROUTE_LIMITS, ...route.limits]));
  return limits;
}

/** Runs one endpoint for a resolved route with the uniform error mapping, in the request's language (lib/i18n). */
export function runEndpoint(route: Route, request: Request, service: Service, workspaceId: string): Promise<Response> {
  return withRequestLocale(request, () => runResolved(route, request, service, workspaceId));
}

async function runResolved(route: Route, request: Request, service: Service, workspaceId: string): Promise<Response> {
  try {
    // The default host (nearly every request) is decided without a lookup or an await.
    const hostname = atDefaultHost(service, request.headers) ? null : await servingHostname(service, request.headers, workspaceId);
    const workspace = hostname === undefined ? null : await resolveWorkspace(service, workspaceId);
    if (!workspace) return publicOrNot(route, familyOf(route).notFound());
    // The route's declared limits: those per client address now, the rest where the endpoint names their subject.
    const limits = routeLimits(route);
    const address = clientAddress(request, service.config.trustProxy);
    const limit = countRequests(service.limiter, service.config.rateLimits, limits, "client address", workspace.id, address);
    if (!limit.allowed) return publicOrNot(route, familyOf(route).rateLimited(limit.retryAfterSeconds));
    return await route.endpoint(request, { ...contextFor(service, workspace, hostname ?? null), requestLimits: limits });
  } catch (error) {
    return publicOrNot(route, routeFailure(route, error));
  }
}

export type Decision =
  | { kind: "not-found" }
  | { kind: "preflight"; workspaceId: string; subpath: string }
  | { kind: "method-not-allowed"; subpath: string }
  | { kind: "route"; route: Route; workspaceId: string };

/** What dispatch does for a path; null when the request is not ours to answer (Next serves it). */
function decide(method: string, pathname: string, machineOnly: boolean): Decision | null {
  const split = issuerRequest(pathname);
  if (!split) return null;
  // Reserved API families: no released API exists; they fail closed right here, like an unknown route.
  if (RESERVED_PREFIXES.some((p) => split.subpath === p || split.subpath.startsWith(`${p}/`))) return { kind: "not-found" };
  if (method === "OPTIONS" && CORS_PATHS.has(split.subpath)) return { kind: "preflight", workspaceId: split.workspaceId, subpath: split.subpath };
  // HEAD is GET without the body (Node drops it from the answer): same endpoint, status and headers.
  const route = findRoute(method === "HEAD" ? "GET" : method, split.subpath);
  if (!route) {
    const path = tablePath(split.subpath);
    return path === undefined ? null : { kind: "method-not-allowed", subpath: path };
  }
  if (machineOnly && !route.machine) return null;
  return { kind: "route", route, workspaceId: split.workspaceId };
}

/**
 * What `dispatch(…, { machineOnly: true })` would do for `method` and `pathname` (in normal form:
 * the production listener decided it, lib/http/request-target.ts), or null when Next serves the
 * request: the production server decides with this before it reads a body, so a request for Next
 * is never touched.
 */
export function directDecision(method: string, pathname: string): Decision | null {
  return decide(method, pathname, true);
}

/**
 * A password sign-in post whose client address has its share of password work in progress
 * (lib/authn/password.ts `PasswordTurn`) as it arrives: the decision to answer it with the 429
 * refusal, unread, instead of handing it to Next. Under a flood of such posts, their cost is what
 * every other request waits behind. Null for anything else.
 */
export function refusedPasswordPost(method: string, pathname: string, address: string): Decision | null {
  if (method !== "POST" || PasswordTurn.available(address)) return null;
  const decision = decide(method, pathname, false);
  if (decision?.kind !== "route" || decision.route.endpoint !== passwordSignInEndpoint) return null;
  return { ...decision, route: { ...decision.route, endpoint: refusedPasswordPostEndpoint } };
}

/** The methods a table path answers, for `Allow`: HEAD wherever GET is. */
export function allowedMethods(subpath: string): string {
  return allowFor(routes.filter((r) => r.path === subpath).map((r) => r.method));
}

/**
 * The one edge rule for a method a path does not serve (RFC 9110 §15.5.6): 405 with `Allow`
 * listing the methods it does, HEAD beside GET. OPTIONS, outside the CORS preflight, is answered
 * so too: `Allow` says what the path takes. Used by the route table, the paths at the root of every
 * host (`dispatch`) and the route files outside the issuers (lib/server/next-adapter.ts `methodsOf`).
 */
export function methodNotAllowed(allow: string): Response {
  return json({ error: "invalid_request", error_description: "Method not allowed" }, 405, { Allow: allow });
}

/** `Allow` for a path that serves `methods`: HEAD wherever GET is. */
export function allowFor(methods: readonly string[]): string {
  return methods.flatMap((m) => (m === "GET" ? ["GET", "HEAD"] : [m])).join(", ");
}

/** Answers a request for which `decide` returned `decision`. */
export function runDecision(decision: Decision, request: Request, service: Service): Promise<Response> {
  switch (decision.kind) {
    case "not-found":
      return Promise.resolve(notFoundResponse());
    case "preflight": {
      const { subpath } = decision;
      return runEndpoint({ method: "GET", path: subpath, endpoint: (r, ctx) => preflight(r, ctx, subpath), machine: true }, request, service, decision.workspaceId);
    }
    case "method-not-allowed":
      return Promise.resolve(methodNotAllowed(allowedMethods(decision.subpath)));
    case "route":
      return runEndpoint(decision.route, request, service, decision.workspaceId);
  }
}

/**
 * Whether the request's host serves `pathname` (`hosts`): for the listener, before anything else.
 * `true` at the default host without an await; the promise rejects when it cannot be decided.
 */
export const hostServes: HostResolution["serves"] = hosts.serves;

const hostRoutes = new Map<string, HostRoute>(FEATURE_HOST_ROUTES.map((r) => [r.path, r]));

/**
 * A path at the root of every host answered by the edge rule: its method's answer (HEAD as GET,
 * the body dropped on the wire), else 405 with `Allow` (`methodNotAllowed`), whatever the host.
 */
function answerHostRoute(route: HostRoute, request: Request, service: Service): Promise<Response> {
  const method = request.method === "HEAD" ? "GET" : request.method;
  if (method !== route.method) return Promise.resolve(methodNotAllowed(allowFor([route.method])));
  return route.answer(request, service);
}

/** The features' paths at the root of every host (lib/features/routes.ts), each answered by the edge rule whatever the method. */
export function isHostRoute(pathname: string): boolean {
  return hostRoutes.has(pathname);
}

/**
 * Dispatches a request under `/t/{workspace}/…` to its endpoint; unknown paths get the generic
 * 404 that an unknown workspace or client gets too. The features' paths at the root of every host
 * (`isHostRoute`: the WebAuthn related origins document) are answered too. Returns null for paths
 * outside the table so the caller can hand them to Next (hosted pages).
 */
export async function dispatch(request: Request, service: Service, options: { machineOnly?: boolean } = {}): Promise<Response | null> {
  const { pathname } = new URL(request.url);
  const hostRoute = hostRoutes.get(pathname);
  if (hostRoute) return answerHostRoute(hostRoute, request, service);
  const decision = decide(request.method, pathname, options.machineOnly ?? false);
  return decision ? runDecision(decision, request, service) : null;
}
