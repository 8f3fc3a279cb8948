// Latchkey's production server: machine-facing protocol endpoints are dispatched straight from
// the route table to their framework-free functions; Next serves pages and everything else.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import next from "next";
import { startAdminSocket } from "./lib/cli/admin-socket";
import { ConfigError, loadConfig } from "./lib/config";
import { CLIENT_ADDRESS_HEADER } from "./lib/http/rate-limit";
import { dispatch } from "./lib/http/router";
import { closeService, getService } from "./lib/service";
import { ensureDemoWorkspace } from "./lib/workspaces/demo";

const dev = process.argv.includes("--dev");

function toRequest(req: IncomingMessage, origin: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(origin + req.url, {
    method: req.method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream) : undefined,
    // @ts-expect-error duplex is required by Node for streamed request bodies
    duplex: hasBody ? "half" : undefined,
  });
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  const body = response.body ? Buffer.from(await response.arrayBuffer()) : undefined;
  if (body) headers["content-length"] = String(body.length);
  res.writeHead(response.status, headers);
  res.end(body);
}

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`latchkey: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
  const service = await getService();
  const demo = await ensureDemoWorkspace(service.db, { clock: service.clock, masterKey: service.config.masterKey });
  // The embedded database admits one process: latchkey commands reach it through this socket.
  const adminSocket = service.config.databaseUrl
    ? undefined
    : await startAdminSocket(service).catch((error: Error) => {
        console.warn(`latchkey: no admin socket (${error.message}); stop the server to run latchkey commands`);
        return undefined;
      });

  const app = next({ dev, hostname: "0.0.0.0", port: config.port, dir: process.cwd() });
  const handle = app.getRequestHandler();
  await app.prepare();

  const server = createServer((req, res) => {
    // The limiter keys on this; whatever a client sent under the same name is overwritten.
    req.headers[CLIENT_ADDRESS_HEADER] = req.socket.remoteAddress ?? "unknown";
    const url = req.url ?? "/";
    if (url.startsWith("/t/")) {
      dispatch(toRequest(req, config.publicUrl), service, { machineOnly: true })
        .then((response) => (response ? writeResponse(response, res) : handle(req, res)))
        .catch((error) => {
          console.error("[latchkey] dispatch failed:", error);
          if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
          res.end('{"error":"server_error"}');
        });
      return;
    }
    handle(req, res);
  });
  server.keepAliveTimeout = 65_000;
  server.listen(config.port, () => {
    const issuer = `${config.publicUrl}/t/demo`;
    console.log(`Latchkey is listening on ${config.publicUrl} (${service.config.databaseUrl ? "PostgreSQL" : `embedded database in ${config.dataDir}`})`);
    console.log(`  Demo issuer:     ${issuer}`);
    console.log(`  Discovery:       ${issuer}/.well-known/openid-configuration`);
    if (demo.created) {
      console.log(`  Demo sign-in:    demo@example.com / demo-password`);
      console.log(`  Demo clients:    demo-spa (public, PKCE)  demo-web (confidential)`);
      if (demo.webSecret) console.log(`  demo-web secret: ${demo.webSecret}   (shown once; rotate with: npm run latchkey -- secret rotate demo demo-web)`);
    }
  });

  const stop = () => {
    server.close();
    void adminSocket?.close();
    closeService().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((error) => {
  console.error(`latchkey: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
