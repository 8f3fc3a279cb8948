// The one place that adapts the framework-free endpoints to Next's route handlers.
import { getService } from "../service";
import { errorToResponse, notFoundResponse } from "../oauth/errors";
import { toWebResponse } from "../http/response";
import { dispatch, findRoute, runEndpoint, type Route } from "./router";

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
export function bind(method: "GET" | "POST", path: string) {
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

/**
 * Every method of one table path, for a route.ts: the table's endpoints for its methods, and for
 * the others the route table's own answer (without this, Next would answer OPTIONS and HEAD
 * itself and 405 with an empty body, unlike the production server's direct path):
 * `export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers("/oauth2/token")`.
 */
export function routeHandlers(path: string): Record<(typeof METHODS)[number], Handler> {
  const handlers = {} as Record<(typeof METHODS)[number], Handler>;
  for (const method of METHODS) {
    const route = method === "GET" || method === "POST" ? findRoute(method, path) : undefined;
    handlers[method] = route ? handlerFor(route) : tableAnswer;
  }
  if (!findRoute("GET", path) && !findRoute("POST", path)) throw new Error(`No route for ${path}`);
  return handlers;
}
