/**
 * POST /auth/account/configuration?client_id=… (SPEC.md): a WEB_CONFIDENTIAL application
 * registers where the backend handoff sends the browser: `callback_uri` (its handoff callback,
 * which receives `challenge`, `state`, `intent`) and `return_uri` (the portal's way back).
 *
 * - Both are on the origin of the application's first registered OAuth callback, https; http
 *   only where that origin itself is a loopback one (localhost, 127.0.0.1, [::1]), exactly as the
 *   OAuth redirect-URI rules allow it for development (lib/uris.ts).
 * - `callback_uri` has no query and no fragment; neither has a fragment or user credentials.
 * - Optimistic concurrency: `version` is the version the caller last saw (0 for the first
 *   registration); the write is one conditional UPDATE on it, a stale one is VERSION_CONFLICT,
 *   and the answer carries the new version.
 */
import { and, eq } from "drizzle-orm";
import { clients } from "../../db/schema";
import type { EndpointContext } from "../http/context";
import { redirectUriProblem } from "../uris";
import { handoffBadRequest, handoffJson, versionConflict } from "./errors";
import { auditHandoff, handoffEndpoint, readHandoffCall } from "./handoff";
import { applicationOrigin } from "./portal-session";

const MEMBERS = ["callback_uri", "return_uri", "version"] as const;
const MAX_URI_LENGTH = 2000;

/** Why `value` cannot be a handoff destination of an application whose OAuth callback origin is `origin`; null when it can. */
export function handoffUriProblem(name: string, value: unknown, origin: string | null, options: { noQuery: boolean }): string | null {
  if (typeof value !== "string" || value === "" || value.length > MAX_URI_LENGTH) return `${name} must be a nonempty URI of at most ${MAX_URI_LENGTH} characters`;
  const problem = redirectUriProblem(value, false);
  if (problem) return `${name} ${problem}`;
  const url = new URL(value);
  if (origin === null) return "The application has no registered OAuth callback; register one first";
  if (url.origin !== origin) return `${name} must be on the origin of the application's first registered OAuth callback (${origin})`;
  if (options.noQuery && (url.search !== "" || value.includes("?"))) return `${name} must not have a query`;
  return null;
}

export interface HandoffConfiguration {
  callbackUri: string;
  returnUri: string;
  version: number;
}

async function configure(request: Request, ctx: EndpointContext): Promise<Response> {
  const { client, body } = await readHandoffCall(request, ctx, MEMBERS);
  const version = body.version;
  if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 0) throw handoffBadRequest("version must be a nonnegative integer (0 for the first registration)");
  const origin = applicationOrigin(client);
  const problem =
    handoffUriProblem("callback_uri", body.callback_uri, origin, { noQuery: true }) ?? handoffUriProblem("return_uri", body.return_uri, origin, { noQuery: false });
  if (problem) throw handoffBadRequest(problem);
  const callbackUri = body.callback_uri as string;
  const returnUri = body.return_uri as string;
  const [saved] = await ctx.service.db
    .update(clients)
    .set({ handoffCallbackUri: callbackUri, handoffReturnUri: returnUri, handoffVersion: version + 1 })
    .where(and(eq(clients.workspaceId, ctx.workspace.id), eq(clients.id, client.id), eq(clients.handoffVersion, version)))
    .returning({ version: clients.handoffVersion });
  if (!saved) {
    const [current] = await ctx.service.db.select({ version: clients.handoffVersion }).from(clients).where(eq(clients.id, client.id)).limit(1);
    await auditHandoff(ctx, request, { type: "account_security.handoff_configuration_refused", client, reason: "stale_version", data: { version, current: current?.version ?? null } });
    throw versionConflict(current?.version ?? 0);
  }
  await auditHandoff(ctx, request, {
    type: "account_security.handoff_configured",
    client,
    data: { previous_version: version, version: saved.version, callback_uri: callbackUri, return_uri: returnUri },
  });
  return handoffJson({ callback_uri: callbackUri, return_uri: returnUri, version: saved.version });
}

export const configurationEndpoint = handoffEndpoint("account-security configuration", configure);
