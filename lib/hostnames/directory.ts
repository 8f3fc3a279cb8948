/**
 * Which workspace a request's host serves: the installation's default host (PUBLIC_URL's) serves
 * every workspace under `/t/<id>`; a verified workspace hostname serves its own workspace only;
 * any other host serves nothing (lib/server answers it the generic 404).
 *
 * The verified hostnames are held in memory as one map, reloaded from the database when older
 * than DIRECTORY_TTL_MS (one query per interval whatever the hosts asked for, so unknown hosts
 * cost nothing) and at once after a change, made by this process or announced by another
 * (lib/service.ts `forgetWorkspace`). A request at the default host never reads it.
 */
import { isNotNull } from "drizzle-orm";
import { workspaceHostnames } from "../../db/schema";
import { defaultHost, requestHostOf, splitHost } from "../http/request-host";
import type { HeaderSource } from "../http/client-address";
import { acrossWorkspacesKey, type Service } from "../service";
import { atDefaultHost } from "../http/request-host";

/** Another instance's change reaches this one within this long even when its announcement is lost. */
export const DIRECTORY_TTL_MS = 5_000;

export type HostMatch =
  /** The installation's default host: every workspace. */
  | { kind: "default" }
  /** A verified workspace hostname: that workspace only. */
  | { kind: "hostname"; hostname: string; workspaceId: string }
  /** Any other host: nothing. */
  | { kind: "unknown" };

const DEFAULT: HostMatch = { kind: "default" };
const UNKNOWN: HostMatch = { kind: "unknown" };

interface Directory {
  byHostname: Map<string, string>;
  at: number;
}

const KEY = acrossWorkspacesKey("host-directory");
async function directory(service: Service): Promise<Directory> {
  const held = service.cache.get(KEY) as Promise<Directory> | undefined;
  if (held) {
    const current = await held.catch(() => null);
    if (current && Date.now() - current.at < DIRECTORY_TTL_MS) return current;
    if (service.cache.get(KEY) !== held) return directory(service);
  }
  const loading = service.db
    .select({ hostname: workspaceHostnames.hostname, workspaceId: workspaceHostnames.workspaceId })
    .from(workspaceHostnames)
    .where(isNotNull(workspaceHostnames.verifiedAt))
    .then((rows) => ({ byHostname: new Map(rows.map((r) => [r.hostname, r.workspaceId])), at: Date.now() }));
  service.cache.set(KEY, loading);
  // A failed load is not kept: the next request asks the database again (and this one fails closed).
  loading.catch(() => {
    if (service.cache.get(KEY) === loading) service.cache.delete(KEY);
  });
  return loading;
}

/** Drops this process's copy after a change, so the next request reads the database. */
export function forgetHostnames(service: Pick<Service, "cache">): void {
  service.cache.delete(KEY);
}

/**
 * What the request's host (lib/http/request-host.ts) serves. A custom hostname must come with
 * PUBLIC_URL's port (every hostname is served by the same listener); a host that is not a valid
 * host name serves nothing. Throws when the directory cannot be read: the caller fails closed (503).
 */
export async function matchHost(service: Service, headers: HeaderSource): Promise<HostMatch> {
  const named = requestHostOf(headers, service.config.trustProxy);
  // No host at all (HTTP/1.0): the default host. One that is not a valid host name: nothing.
  if (named.kind === "none") return DEFAULT;
  if (named.kind === "invalid") return UNKNOWN;
  const own = defaultHost(service);
  if (named.host === own.host) return DEFAULT;
  const { name, port } = splitHost(named.host);
  if ((port ?? "") !== own.port) return UNKNOWN;
  const workspaceId = (await directory(service)).byHostname.get(name);
  return workspaceId === undefined ? UNKNOWN : { kind: "hostname", hostname: name, workspaceId };
}

/**
 * The hostname a request for workspace `workspaceId` is served under: null for the default host,
 * the hostname when it is that workspace's; undefined when the host does not serve the workspace
 * (unknown, or another workspace's hostname), which is answered like an unknown route.
 */
export function hostnameServing(match: HostMatch, workspaceId: string): string | null | undefined {
  if (match.kind === "default") return null;
  if (match.kind === "hostname" && match.workspaceId === workspaceId) return match.hostname;
  return undefined;
}

/**
 * Paths a workspace hostname serves besides its workspace's issuer: the pages' static files and
 * the WebAuthn related-origins document. Not the rest of `/_next/` (its image optimizer renders
 * any path it is given, the console's included).
 */
const HOSTNAME_SHARED_PATHS = ["/_next/static/", "/.well-known/webauthn", "/favicon.ico"];

/**
 * Whether the request's host serves `pathname`: at the default host everything, decided without a
 * lookup (the listener's fast path: `true`, no await); at a verified hostname its workspace's issuer
 * and the shared files (`hostnameServesPath`); at any other host nothing. The promise rejects
 * when the directory cannot be read: the caller fails closed (503).
 */
export function hostServes(service: Service, headers: HeaderSource, pathname: string): true | Promise<boolean> {
  if (atDefaultHost(service, headers)) return true;
  return matchHost(service, headers).then((match) => match.kind === "hostname" && hostnameServesPath(match.workspaceId, pathname));
}

/**
 * Whether a workspace hostname serves `pathname`: its workspace's issuer (`/t/<id>` and what is
 * under it, RFC 8414's metadata path of that issuer) and the shared files above. Nothing else:
 * not the console, the landing page, the demo, nor another workspace's issuer.
 */
export function hostnameServesPath(workspaceId: string, pathname: string): boolean {
  const issuer = `/t/${workspaceId}`;
  if (pathname === issuer || pathname.startsWith(`${issuer}/`)) return true;
  if (pathname === `/.well-known/oauth-authorization-server${issuer}`) return true;
  return HOSTNAME_SHARED_PATHS.some((p) => (p.endsWith("/") ? pathname.startsWith(p) : pathname === p));
}
