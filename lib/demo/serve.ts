/**
 * The demo application this server offers at /demo: lib/demo/app.ts signing in to the demo
 * workspace (lib/workspaces/demo.ts) with its confidential clients `demo-app` and `demo-app-mfa`,
 * over HTTP at PUBLIC_URL like any other relying party. Their secrets are derived from the master
 * key when the handler is made (demoAppSecret) and kept only in memory. Bound twice, so both
 * answer alike: server.ts dispatches /demo before Next (demoNodeHandler), and
 * app/demo/[[...path]]/route.ts binds the same handler for `next dev`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { and, eq } from "drizzle-orm";
import { clients, workspaces } from "../../db/schema";
import { offersPortal } from "../account-security/portal-session";
import { logError } from "../http/log";
import { atDefaultHost } from "../http/request-host";
import { nodeRequest } from "../http/node-request";
import { writeResponse, type NodeHandler } from "../server/node-server";
import type { Service } from "../service";
import { DEMO_APP_CLIENT_ID, DEMO_APP_MFA_CLIENT_ID, DEMO_USER, DEMO_WORKSPACE_ID, demoAppSecret, demoAppUris, demoSignInStillWorks } from "../workspaces/demo";
import { createDemoApp } from "./app";
import type { Registration } from "./latchkey";

export const DEMO_BASE_PATH = "/demo";

/** Whether a request target (path and query) is the demo application's. */
export function isDemoPath(target: string): boolean {
  return target === DEMO_BASE_PATH || target.startsWith(`${DEMO_BASE_PATH}/`) || target.startsWith(`${DEMO_BASE_PATH}?`);
}

const handlers = new WeakMap<Service, (request: Request) => Promise<Response>>();

/** The demo application's handler for this service (one per service, so its discovery is done once). */
export function demoApplication(service: Service): (request: Request) => Promise<Response> {
  let handler = handlers.get(service);
  if (handler) return handler;
  const { publicUrl, masterKey } = service.config;
  const uris = demoAppUris(publicUrl);
  const registration = (clientId: string): Registration => ({
    issuer: new URL(`${publicUrl}/t/${DEMO_WORKSPACE_ID}`),
    clientId,
    clientSecret: demoAppSecret(masterKey, clientId),
    redirectUri: uris.callback,
    signedOutUri: uris.home,
    scope: "openid email profile",
  });
  handler = createDemoApp({
    origin: new URL(publicUrl).origin,
    basePath: DEMO_BASE_PATH,
    registrations: { standard: registration(DEMO_APP_CLIENT_ID), mfa: registration(DEMO_APP_MFA_CLIENT_ID) },
    hint: async () => ((await demoSignInStillWorks(service.db)) ? `Sign in as ${DEMO_USER.email} with the password ${DEMO_USER.password}.` : null),
    unavailable: () => demoUnavailable(service),
    portal: {
      status: async (clientId) => {
        const [row] = await service.db
          .select({
            accountSecurity: clients.accountSecurity,
            active: clients.active,
            type: clients.type,
            callbackUri: clients.handoffCallbackUri,
            returnUri: clients.handoffReturnUri,
            version: clients.handoffVersion,
          })
          .from(clients)
          .where(and(eq(clients.workspaceId, DEMO_WORKSPACE_ID), eq(clients.clientId, clientId)))
          .limit(1);
        if (!row) return { offered: false, saved: { callbackUri: null, returnUri: null, version: 0 } };
        // The saved version stands in for the one a customer server would keep with its configuration.
        return { offered: offersPortal(row), saved: { callbackUri: row.callbackUri, returnUri: row.returnUri, version: row.version } };
      },
      callbackUri: uris.handoffCallback,
      returnUri: uris.home,
    },
  });
  handlers.set(service, handler);
  return handler;
}

/**
 * Why the demo application cannot sign in, or null: no demo workspace (it is created only on a
 * first start with no other workspace), or `demo-app` missing, disabled or no longer sending users
 * back to this server's /demo/callback.
 */
export async function demoUnavailable(service: Service): Promise<string | null> {
  const [row] = await service.db
    .select({ workspace: workspaces.id, active: clients.active, redirectUris: clients.redirectUris })
    .from(workspaces)
    .leftJoin(clients, and(eq(clients.workspaceId, workspaces.id), eq(clients.clientId, DEMO_APP_CLIENT_ID)))
    .where(eq(workspaces.id, DEMO_WORKSPACE_ID))
    .limit(1);
  if (!row) {
    return "This server has no demo workspace: it is created only when the server first starts with no other workspace. Import one and integrate your own application (docs/integration.md).";
  }
  const callback = demoAppUris(service.config.publicUrl).callback;
  if (!row.active || !row.redirectUris?.includes(callback)) {
    return `The demo workspace's application ${DEMO_APP_CLIENT_ID} is missing or disabled, or no longer registers ${callback} as a redirect URI.`;
  }
  return null;
}

/** The largest form the demo application accepts (its forms carry one short field). */
const BODY_LIMIT = 8 * 1024;

function headerValue(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : (value ?? null);
}

/**
 * Production server: /demo answered by the demo application, at the default host only (at any
 * other the listener answers: a workspace hostname serves its issuer alone). The listener of
 * lib/server/node-server.ts asks it first (its `ahead` option), so the demo's answers carry a
 * request id and are logged like every other; returns whether it answered.
 */
export function demoAhead(service: Service): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (!isDemoPath(req.url ?? "/") || !atDefaultHost(service, { get: (name) => headerValue(req, name) })) return false;
    serveDemo(service, req, res).catch((error: unknown) => {
      logError("demo application failed", error instanceof Error ? error.message : String(error));
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      res.end("The demo application failed.");
    });
    return true;
  };
}

/** /demo answered by the demo application, everything else by `next` (for a server without the listener's `ahead`). */
export function demoNodeHandler(service: Service, next: NodeHandler): NodeHandler {
  const ahead = demoAhead(service);
  return (req, res) => (ahead(req, res) ? undefined : next(req, res));
}

async function serveDemo(service: Service, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let body: Buffer | undefined;
  if (req.method === "POST") {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > BODY_LIMIT) {
        res.writeHead(413, { "content-type": "text/plain; charset=utf-8" }).end("Too large.");
        req.destroy();
        return;
      }
      chunks.push(chunk as Buffer);
    }
    body = Buffer.concat(chunks);
  }
  const response = await demoApplication(service)(nodeRequest(req, new URL(service.config.publicUrl).origin, body));
  await writeResponse(response, res);
}
