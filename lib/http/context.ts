import type { RequestLimits } from "../limits/declarations";
import type { Service } from "../service";

export interface Workspace {
  id: string;
  name: string;
}

/** What an endpoint receives besides the request: the service and the resolved workspace. */
export interface EndpointContext {
  service: Service;
  workspace: Workspace;
  /** `{PUBLIC_URL}/t/{workspace}`: the exact issuer. */
  issuer: string;
  /** `/t/{workspace}`: the path prefix, also the hosted cookies' Path. */
  basePath: string;
  /**
   * The request limits declared for the route being served (lib/http/route.ts `limits`), for
   * those counted per a subject the endpoint learns: the client, once authenticated. None outside
   * a route.
   */
  requestLimits?: readonly RequestLimits[];
}

export type Endpoint = (request: Request, ctx: EndpointContext) => Promise<Response>;

export function issuerFor(publicUrl: string, workspaceId: string): string {
  return `${publicUrl}/t/${workspaceId}`;
}
