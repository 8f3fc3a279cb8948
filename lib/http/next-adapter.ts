// The one place that adapts the framework-free endpoints to Next's route handlers.
import { getService } from "../service";
import { errorToResponse } from "./errors";
import { findRoute, runEndpoint } from "./router";

type RouteContext = { params: Promise<{ tenant: string }> };

/** Binds the table entry for `method path` as a Next route handler: `export const POST = bind("POST", "/oauth2/token")`. */
export function bind(method: "GET" | "POST", path: string) {
  const route = findRoute(method, path);
  if (!route) throw new Error(`No route ${method} ${path}`);
  return async (request: Request, { params }: RouteContext): Promise<Response> => {
    try {
      const { tenant } = await params;
      return await runEndpoint(route, request, await getService(), tenant);
    } catch (error) {
      return errorToResponse(error);
    }
  };
}
