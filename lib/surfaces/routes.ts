/**
 * A feature's routes: what it answers on the wire, declared in a lean module of its own (the
 * descriptor's `routes` points at the same value) and collected by the route registry
 * (lib/features/routes.ts) that the route table (lib/server/router.ts) reads. The table never
 * names a feature. Lean: a routes module imports its endpoints and what they need, nothing of the
 * console or the workspace file, so the server's hot paths load only their own modules.
 */
import type { HeaderSource } from "../http/client-address";
import type { Route } from "../http/route";
import type { Service } from "../service";

/**
 * A path at the root of every host, outside any issuer (`/.well-known/…`): answered before the
 * issuer's table, by the production listener and by its route file under Next alike
 * (lib/server/next-adapter.ts `hostRouteHandlers`), with the route table's edge rule: `answer` for
 * its method (HEAD as GET), 405 with `Allow` for any other (lib/server/router.ts `methodNotAllowed`).
 */
export interface HostRoute {
  path: `/${string}`;
  method: "GET";
  answer: (request: Request, service: Service) => Promise<Response>;
}

/**
 * Which workspace a request's host serves, for a feature that lets hosts other than the default
 * one serve workspaces. Without one, only the default host serves, and it serves every workspace.
 */
export interface HostResolution {
  /**
   * The hostname a request for `workspaceId` is served under: null at the default host, the
   * hostname at one of the workspace's own; undefined when the host does not serve that workspace
   * (answered like an unknown route). Throws when it cannot be decided: the caller fails closed.
   */
  servingHostname(service: Service, headers: HeaderSource, workspaceId: string): Promise<string | null | undefined>;
  /**
   * Whether the request's host serves `pathname` at all: `true` at the default host, decided
   * without an await (the listener's fast path). The promise rejects when it cannot be decided.
   */
  serves(service: Service, headers: HeaderSource, pathname: string): true | Promise<boolean>;
  /** The WebAuthn relying party ID every hostname of the workspace shares, null when each host is its own. */
  relyingPartyId(service: Service, workspaceId: string): Promise<string | null>;
}

export interface FeatureRoutes {
  /** Entries of the route table under each issuer, `/t/{workspace}` (lib/http/route.ts). */
  issuer?: readonly Route[];
  /** Paths at the root of every host. */
  host?: readonly HostRoute[];
  /** How a request's host resolves to a workspace (one feature at most declares it). */
  hosts?: HostResolution;
}

export const defineRoutes = <R extends FeatureRoutes>(routes: R): R => routes;
