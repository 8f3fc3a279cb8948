import { eq, isNull, type Column, type SQL } from "drizzle-orm";
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
  /**
   * The workspace hostname the request came to (lib/hostnames), or null for the installation's
   * default host (PUBLIC_URL's). Everything a browser or client pins is per hostname: the issuer,
   * cookies, passkeys' RP ID, pairwise subjects.
   */
  hostname: string | null;
  /** The origin the request came to: PUBLIC_URL's, or its scheme and port with `hostname`. */
  origin: string;
  /** `{origin}/t/{workspace}`: the exact issuer. */
  issuer: string;
  /** `/t/{workspace}`: the path prefix, also the hosted cookies' Path. */
  basePath: string;
  /**
   * The RP ID every hostname of the workspace shares under WebAuthn related origins: its primary
   * hostname while the setting is on, else null (each host its own RP ID); always null at the
   * default host. The primary hostname's rule is the hostname feature's (read by lib/server's
   * `contextFor`); asked at most once per request, and only when a ceremony needs it.
   */
  relatedOriginsRpId(): Promise<string | null>;
  /**
   * The request limits declared for the route being served (lib/http/route.ts `limits`), for
   * those counted per a subject the endpoint learns: the client, once authenticated. None outside
   * a route.
   */
  requestLimits?: readonly RequestLimits[];
}

export type Endpoint = (request: Request, ctx: EndpointContext) => Promise<Response>;

/**
 * The origin of an authentication hostname: PUBLIC_URL's scheme and port with the hostname (every
 * hostname is served by the same listener, behind the same TLS-terminating proxy); PUBLIC_URL
 * itself for the default host (null).
 */
export function hostOrigin(publicUrl: string, hostname: string | null): string {
  if (hostname === null) return publicUrl;
  const url = new URL(publicUrl);
  return `${url.protocol}//${hostname}${url.port ? `:${url.port}` : ""}`;
}

/** The exact issuer of a workspace at a hostname (null: the default host). */
export function issuerFor(publicUrl: string, workspaceId: string, hostname: string | null = null): string {
  return `${hostOrigin(publicUrl, hostname)}/t/${workspaceId}`;
}

/** The context of a workspace's endpoint at a hostname (null: the default host). */
export function contextFor(
  service: Service,
  workspace: Workspace,
  hostname: string | null = null,
  /** At a hostname: how its WebAuthn relying party is read (lib/server/router.ts `contextFor` gives lib/hostnames' rule). */
  relatedOriginsRpId?: () => Promise<string | null>,
): EndpointContext {
  const { publicUrl } = service.config;
  let rpId: Promise<string | null> | undefined;
  return {
    service,
    workspace,
    hostname,
    origin: hostOrigin(publicUrl, hostname),
    issuer: issuerFor(publicUrl, workspace.id, hostname),
    basePath: `/t/${workspace.id}`,
    // Read once, when a ceremony first asks; never at the default host.
    relatedOriginsRpId: () => (hostname === null || !relatedOriginsRpId ? Promise.resolve(null) : (rpId ??= relatedOriginsRpId())),
  };
}

/**
 * The condition "recorded at this hostname" on a `hostname` column (hosted sessions, pending
 * sign-ins, grants: lib/hostnames), where null is the default host.
 */
export function atHostname(column: Column, hostname: string | null): SQL {
  return hostname === null ? isNull(column) : eq(column, hostname);
}
