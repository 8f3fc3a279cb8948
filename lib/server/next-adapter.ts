// The one place that adapts the framework-free endpoints to Next's route handlers.
import { getService } from "../service";
import { errorToResponse, notFoundResponse } from "../oauth/errors";
import { toWebResponse } from "../http/response";
import { allowFor, dispatch, findRoute, isHostRoute, methodNotAllowed, routes, runEndpoint, type Route } from "./router";

type RouteContext = { params: Promise<{ tenant: string }> };
type Handler = (request: Request, context: RouteContext) => Promise<Response>;

function handlerFor(route: Route): Handler {
  return async (request, { params }) => {
    try {
      const { tenant } = await params;
      return toWebResponse(await runEndpoint(route, request, await getService(), tenant));
    } catch (error) {
      return toWebResponse(errorToResponse(error));
    }
  };
}

/** Binds the table entry for `method path` as a Next route handler: `export const POST = bind("POST", "/oauth2/token")`. */
export function bind(method: Route["method"], path: string) {
  const route = findRoute(method, path);
  if (!route) throw new Error(`No route ${method} ${path}`);
  return handlerFor(route);
}

/** Answers a method the table has no route for exactly as the production server does: 405 with Allow, or the CORS preflight. */
const tableAnswer: Handler = async (request) => {
  try {
    return toWebResponse((await dispatch(request, await getService())) ?? notFoundResponse());
  } catch (error) {
    return toWebResponse(errorToResponse(error));
  }
};

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
type Method = (typeof METHODS)[number];

/**
 * Every method of one table path, for a route.ts: the table's endpoints for its methods, and for
 * the others the route table's own answer. A route that answers the paths below its own
 * (`Route.below`: the SCIM API) is bound the same way, in an optional catch-all route file there,
 * its endpoint reading the path from the URL (without this, Next would answer OPTIONS and HEAD
 * itself and 405 with an empty body, unlike the production server's direct path):
 * `export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers("/oauth2/token")`.
 */
export function routeHandlers(path: string): Record<Method, Handler> {
  const handlers = {} as Record<Method, Handler>;
  for (const method of METHODS) {
    const route = method === "HEAD" || method === "OPTIONS" ? undefined : findRoute(method, path);
    handlers[method] = route ? handlerFor(route) : tableAnswer;
  }
  if (!routes.some((r) => r.path === path)) throw new Error(`No route for ${path}`);
  return handlers;
}

const notFound: Handler = async () => notFoundResponse();

/**
 * What a path under an issuer that no route file binds is answered (app/t/[tenant]/[...rest]/route.ts):
 * the generic 404 for the methods that file declares, HEAD as its GET, and OPTIONS as Next answers
 * for it (Next's own answer for a route file without OPTIONS: 204 with the methods it has).
 */
const OUTSIDE_TABLE: Record<Method, Handler> = {
  GET: notFound,
  HEAD: notFound,
  POST: notFound,
  PUT: notFound,
  PATCH: notFound,
  DELETE: notFound,
  OPTIONS: async () => new Response(null, { status: 204, headers: { Allow: "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT" } }),
};

/** The path under the issuer of a request Next handed to a route file below app/t/[tenant] (the URL's own, not decoded). */
function issuerSubpath(request: Request): string {
  return new URL(request.url).pathname.replace(/^\/t\/[^/]+/, "");
}

/**
 * Every method of every table path below `prefix`, for one catch-all route.ts there
 * (`app/t/[tenant]/sign-in/[...step]/route.ts`): a request for a table path is answered as that
 * path's own `routeHandlers` would answer it; any other path below `prefix` exactly as the
 * issuer's catch-all of unknown paths answers it (`OUTSIDE_TABLE`). The routes come from the
 * table, so a route added below `prefix` (a factor's sign-in step, its portal verification) needs
 * no binding file: `export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = routesBelow("/sign-in")`.
 */
export function routesBelow(prefix: `/${string}`): Record<Method, Handler> {
  const bound = new Map(pathsBelow(prefix).map((path) => [path, routeHandlers(path)]));
  if (bound.size === 0) throw new Error(`No route below ${prefix}`);
  const handlers = {} as Record<Method, Handler>;
  for (const method of METHODS) {
    handlers[method] = (request, context) => (bound.get(issuerSubpath(request)) ?? OUTSIDE_TABLE)[method](request, context);
  }
  return handlers;
}

/** The table paths `routesBelow(prefix)` binds. */
export function pathsBelow(prefix: `/${string}`): string[] {
  return [...new Set(routes.filter((r) => r.path.startsWith(`${prefix}/`)).map((r) => r.path))];
}

const hostRoute = async (request: Request): Promise<Response> => {
  try {
    return toWebResponse((await dispatch(request, await getService())) ?? notFoundResponse());
  } catch (error) {
    return toWebResponse(errorToResponse(error));
  }
};

/**
 * Every method of a feature's path at the root of every host (lib/surfaces/routes.ts `HostRoute`),
 * for its route file, answered by the route table as the production listener answers it
 * (`dispatch`): `export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = hostRouteHandlers("/.well-known/webauthn")`.
 */
export function hostRouteHandlers(path: `/${string}`): Record<Method, (request: Request) => Promise<Response>> {
  if (!isHostRoute(path)) throw new Error(`No route at ${path}`);
  return Object.fromEntries(METHODS.map((m) => [m, hostRoute])) as Record<Method, (request: Request) => Promise<Response>>;
}

type Served = "GET" | "POST";

/**
 * Every method of a route file outside the route table and the issuers (the console's audit
 * export and sign-in routes, which Next serves behind proxy.ts and its console session), for that
 * file: `served`'s handlers for their methods, HEAD as GET's answer without its body, and every
 * other method, OPTIONS included, the route table's edge rule (lib/server/router.ts
 * `methodNotAllowed`: 405 with `Allow`), where Next would answer 405 without `Allow`:
 * `export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = methodsOf({ GET: exportAudit })`.
 */
export function methodsOf<A extends unknown[]>(served: Partial<Record<Served, (request: Request, ...rest: A) => Promise<Response>>>): Record<Method, (request: Request, ...rest: A) => Promise<Response>> {
  const methods = (Object.keys(served) as Served[]).filter((m) => served[m]);
  if (methods.length === 0) throw new Error("A route file serves at least one method");
  const refuse = async (): Promise<Response> => methodNotAllowed(allowFor(methods));
  const handlers = {} as Record<Method, (request: Request, ...rest: A) => Promise<Response>>;
  for (const m of METHODS) handlers[m] = refuse;
  for (const m of methods) handlers[m] = served[m]!;
  const get = served.GET;
  if (get) {
    handlers.HEAD = async (request, ...rest) => {
      const answer = await get(request, ...rest);
      await answer.body?.cancel();
      return new Response(null, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
    };
  }
  return handlers;
}
