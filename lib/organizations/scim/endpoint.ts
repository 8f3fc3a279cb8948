/**
 * The SCIM endpoint: every request below `/t/{workspace}/scim/v2/o/{organization}`, authenticated
 * by the organization directory's bearer token, counted on the directory's request limit, answered
 * by its resource's handler, and written to the directory's request log. Every refusal is a SCIM
 * error resource (./errors.ts).
 */
import type { EndpointContext } from "../../http/context";
import { failureResponse } from "../../http/errors";
import { countRequests, type RequestLimits } from "../../limits/declarations";
import { authenticateDirectory, directoryBySlug } from "./directory";
import { resourceTypesAnswer, schemasAnswer, serviceProviderConfig } from "./discovery";
import { methodNotAllowed, notFound, ScimError, scimFailures, unauthorized } from "./errors";
import { createGroup, deleteGroup, getGroup, listGroups, patchGroup, replaceGroup } from "./groups";
import { logRequest } from "./request-log";
import type { ScimCall } from "./resources";
import { createUser, deleteUser, getUser, listUsers, patchUser, replaceUser } from "./users";

/** Below the issuer: the SCIM API's prefix, and each organization's base under it. */
export const SCIM_PATH = "/scim/v2";
const ORGANIZATION_BASE = /^\/scim\/v2\/o\/([a-z0-9][a-z0-9-]{0,62})(\/.*)?$/;

/** Requests per organization directory (every SCIM request its token makes). */
export const DIRECTORY_REQUESTS: RequestLimits = {
  name: "scim-directory",
  label: "SCIM requests of one organization's directory",
  per: "organization directory",
  rate: { times: 1, scale: "requestsPerMinute", windowMs: 60_000 },
};

/** The directory's base URL, as its administrators paste it into their identity provider. */
export const scimBaseUrl = (issuer: string, organizationSlug: string) => `${issuer}${SCIM_PATH}/o/${organizationSlug}`;

type Handler = (call: ScimCall, id: string | null) => Promise<Response> | Response;

/** The handlers of each resource path, by method: with an id (`/Users/{id}`) and without. */
const RESOURCES: Record<string, { collection: Partial<Record<string, Handler>>; item: Partial<Record<string, Handler>> }> = {
  Users: {
    collection: { GET: (c) => listUsers(c), POST: (c) => createUser(c) },
    item: { GET: (c, id) => getUser(c, id!), PUT: (c, id) => replaceUser(c, id!), PATCH: (c, id) => patchUser(c, id!), DELETE: (c, id) => deleteUser(c, id!) },
  },
  Groups: {
    collection: { GET: (c) => listGroups(c), POST: (c) => createGroup(c) },
    item: { GET: (c, id) => getGroup(c, id!), PUT: (c, id) => replaceGroup(c, id!), PATCH: (c, id) => patchGroup(c, id!), DELETE: (c, id) => deleteGroup(c, id!) },
  },
  ServiceProviderConfig: { collection: { GET: (c) => serviceProviderConfig(c) }, item: {} },
  ResourceTypes: { collection: { GET: (c) => resourceTypesAnswer(c, null) }, item: { GET: (c, id) => resourceTypesAnswer(c, id) } },
  Schemas: { collection: { GET: (c) => schemasAnswer(c, null) }, item: { GET: (c, id) => schemasAnswer(c, id) } },
};

/** The handler a method and resource path name (refused 404 or 405 in SCIM's shape). */
function handlerFor(method: string, rest: string): { handler: Handler; id: string | null } {
  const parts = rest.split("/").filter((p) => p !== "");
  const resource = parts[0] === undefined ? undefined : RESOURCES[parts[0]];
  if (!resource || parts.length > 2) throw notFound("No such resource");
  let id: string | null = null;
  if (parts.length === 2) {
    try {
      id = decodeURIComponent(parts[1]);
    } catch {
      throw notFound("No such resource");
    }
  }
  const methods = id === null ? resource.collection : resource.item;
  const handler = methods[method === "HEAD" ? "GET" : method];
  if (!handler) {
    const allowed = Object.keys(methods).flatMap((m) => (m === "GET" ? ["GET", "HEAD"] : [m]));
    if (allowed.length === 0) throw notFound("No such resource");
    throw methodNotAllowed(allowed.join(", "));
  }
  return { handler, id };
}

function bearerOf(request: Request): string | null {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer +(\S+)$/i.exec(header) : null;
  return match ? match[1] : null;
}

export async function scimEndpoint(request: Request, ctx: EndpointContext): Promise<Response> {
  const url = new URL(request.url);
  const subpath = url.pathname.slice(ctx.basePath.length);
  const match = ORGANIZATION_BASE.exec(subpath);
  if (!match) return failureResponse(scimFailures, notFound("No such resource"));
  const [, slug, rest = ""] = match;
  const now = ctx.service.clock.now();
  const db = ctx.service.db;
  const access = await authenticateDirectory(db, { workspaceId: ctx.workspace.id, organizationSlug: slug, token: bearerOf(request), now });
  let response: Response;
  let refusal: unknown = null;
  if (!access) {
    refusal = unauthorized();
  } else {
    const limit = countRequests(ctx.service.limiter, ctx.service.config.rateLimits, ctx.requestLimits ?? [], "organization directory", ctx.workspace.id, access.directory.id);
    if (!limit.allowed) return scimFailures.rateLimited(limit.retryAfterSeconds);
    const call: ScimCall = { request, ctx, access, base: `${ctx.issuer}${SCIM_PATH}/o/${slug}`, now };
    try {
      const { handler, id } = handlerFor(request.method, rest);
      response = await handler(call, id);
    } catch (error) {
      refusal = error;
    }
  }
  if (refusal !== null) response = failureResponse(scimFailures, refusal, `${request.method} ${SCIM_PATH}`);
  // The log names the directory the URL does, also for a refused token: its administrators see their identity provider's failures.
  const directoryId = access?.directory.id ?? (await directoryBySlug(db, ctx.workspace.id, slug));
  if (directoryId) {
    await logRequest(db, { workspaceId: ctx.workspace.id, directoryId, at: now, method: request.method, path: rest || "/", status: response!.status, detail: detailOf(refusal) });
  }
  return response!;
}

/** What a refusal says, for the log: its scimType and detail (nothing of an internal error's). */
function detailOf(refusal: unknown): string | null {
  if (!(refusal instanceof ScimError)) return null;
  return `${refusal.scimType ? `${refusal.scimType}: ` : ""}${refusal.description}`.slice(0, 300);
}
