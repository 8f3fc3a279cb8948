/**
 * The example single-page app's static server: the page at its own origin, plus the browser
 * builds of oidc-client-ts (and its jwt-decode) and jose straight from node_modules, which is
 * what a bundler would ship. e2e/oidc-client-ts.spec.ts starts it; to try the page by hand:
 *
 *   npx tsx e2e/spa/server.ts     (Latchkey on http://localhost:3111 with the e2e workspace)
 *
 *   GET /, /callback, /signed-out   index.html (app.js routes on the path)
 *   GET /app.js, /latchkey-spa.js   the app, and the Latchkey client module docs/integration.md shows
 *   GET /config.json                { issuer, clientId, appOrigin }
 *   GET /vendor/<package>/<file>    files of oidc-client-ts, jwt-decode and jose
 */
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const NODE_MODULES = path.resolve(HERE, "..", "..", "node_modules");
const VENDORED = new Set(["oidc-client-ts", "jwt-decode", "jose"]);
const PAGES = new Set(["/", "/callback", "/signed-out"]);
const FILES: Record<string, string> = { "/app.js": "app.js", "/latchkey-spa.js": "latchkey-spa.js" };
const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".json": "application/json" };

export interface SpaOptions {
  port: number;
  issuer: string;
  clientId: string;
}

/** The file a path names, or null: only the page, its two modules and the vendored packages. */
function fileFor(pathname: string): string | null {
  if (PAGES.has(pathname)) return path.join(HERE, "index.html");
  if (FILES[pathname]) return path.join(HERE, FILES[pathname]);
  const vendor = /^\/vendor\/([^/]+)\/(.+)$/.exec(pathname);
  if (!vendor || !VENDORED.has(vendor[1]) || !vendor[2].endsWith(".js")) return null;
  const root = path.join(NODE_MODULES, vendor[1]);
  const file = path.resolve(root, decodeURIComponent(vendor[2]));
  return file.startsWith(root + path.sep) ? file : null;
}

export function startSpaServer({ port, issuer, clientId }: SpaOptions): Promise<Server> {
  const appOrigin = `http://localhost:${port}`;
  const server = createServer((req, res) => {
    void (async () => {
      const { pathname } = new URL(req.url ?? "/", appOrigin);
      const headers = { "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer" };
      if (req.method !== "GET") return void res.writeHead(405, { ...headers, Allow: "GET" }).end();
      if (pathname === "/config.json") {
        return void res.writeHead(200, { ...headers, "Content-Type": TYPES[".json"] }).end(JSON.stringify({ issuer, clientId, appOrigin }));
      }
      if (pathname === "/favicon.ico") return void res.writeHead(204, headers).end();
      const file = fileFor(pathname);
      const body = file ? await readFile(file).catch(() => null) : null;
      if (!file || !body) return void res.writeHead(404, headers).end("not found\n");
      res.writeHead(200, { ...headers, "Content-Type": TYPES[path.extname(file)] ?? "application/octet-stream" }).end(body);
    })();
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, () => resolve(server));
  });
}

export async function stopSpaServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const port = Number(process.env.PORT ?? 3113);
  const issuer = process.env.LATCHKEY_ISSUER ?? "http://localhost:3111/t/e2e";
  void startSpaServer({ port, issuer, clientId: process.env.CLIENT_ID ?? "e2e-browser" }).then(() =>
    console.log(`example single-page app on http://localhost:${port}, issuer ${issuer}`),
  );
}
