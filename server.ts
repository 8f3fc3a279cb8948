// Latchkey's production server: machine-facing protocol endpoints are dispatched straight from
// the route table to their framework-free functions; Next serves pages and everything else.
// With WEB_CONCURRENCY=N (PostgreSQL only) the first process prepares the database and forks N
// workers that share the port (node:cluster); otherwise one process does both.
import cluster from "node:cluster";
import { createServer, type Server } from "node:http";
import next from "next";
import { startAdminSocket } from "./lib/cli/admin-socket";
import { ConfigError, loadConfig, type Config } from "./lib/config";
import { createRequestListener } from "./lib/http/node-server";
import { closeService, getService, type Service } from "./lib/service";
import { startAccessTokenPurge } from "./lib/oauth/token-purge";
import { ensureDemoWorkspace } from "./lib/workspaces/demo";
import { ensureSystemWorkspace } from "./lib/console/system";
import { configuredSetupToken, issueSetupToken, SetupTokenConfigError } from "./lib/console/setup";

const dev = process.argv.includes("--dev");
/** A worker that dies is replaced after this long, so a crash loop does not spin. */
const RESTART_DELAY_MS = 1000;

function fail(message: string): never {
  console.error(`latchkey: ${message}`);
  process.exit(1);
}

function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
}

/** Next plus the direct path, listening on the configured port (shared between cluster workers). */
async function serve(service: Service, config: Config): Promise<Server> {
  const app = next({ dev, hostname: "0.0.0.0", port: config.port, dir: process.cwd() });
  const handle = app.getRequestHandler();
  await app.prepare();
  const server = createServer(createRequestListener(service, config.publicUrl, handle));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.port, resolve));
  return server;
}

/** Runs `stop` once on SIGTERM/SIGINT (a terminal's Ctrl-C arrives twice: directly and relayed by `npm start`). */
function onStopSignal(stop: () => Promise<unknown>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    stop().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on("SIGTERM", handler);
  process.on("SIGINT", handler);
}

/** The first process: migrations, the demo and console workspaces, the setup link, the purge; then it serves or forks. */
async function primary(config: Config) {
  const service = await getService();
  const demo = await ensureDemoWorkspace(service.db, { clock: service.clock, masterKey: service.config.masterKey });
  // The console's operator workspace; while no operator exists, a one-time setup link (docs/console.md).
  await ensureSystemWorkspace(service);
  let setupToken: string | undefined;
  try {
    setupToken = configuredSetupToken();
  } catch (error) {
    if (!(error instanceof SetupTokenConfigError)) throw error;
    fail(error.message);
  }
  const setup = await issueSetupToken(service, { token: setupToken });
  // The embedded database admits one process: latchkey commands reach it through this socket.
  const adminSocket = service.config.databaseUrl
    ? undefined
    : await startAdminSocket(service).catch((error: Error) => {
        console.warn(`latchkey: no admin socket (${error.message}); stop the server to run latchkey commands`);
        return undefined;
      });
  const stopPurge = startAccessTokenPurge(service);

  let server: Server | undefined;
  let stopWorkers = async () => {};
  if (config.workers > 1) stopWorkers = await forkWorkers(config.workers);
  else server = await serve(service, config);

  const issuer = `${config.publicUrl}/t/demo`;
  const workers = config.workers > 1 ? `, ${config.workers} workers` : "";
  console.log(`Latchkey is listening on ${config.publicUrl} (${service.config.databaseUrl ? "PostgreSQL" : `embedded database in ${config.dataDir}`}${workers})`);
  console.log(`  Demo issuer:     ${issuer}`);
  console.log(`  Discovery:       ${issuer}/.well-known/openid-configuration`);
  if (demo.created) {
    console.log(`  Demo sign-in:    demo@example.com / demo-password`);
    console.log(`  Demo clients:    demo-spa (public, PKCE)  demo-web (confidential)`);
    if (demo.webSecret) console.log(`  demo-web secret: ${demo.webSecret}   (shown once; rotate with: npm run latchkey -- secret rotate demo demo-web)`);
  }
  if (setup) {
    console.log(`  Console setup:   ${setup.url}`);
    console.log(`                   (one-time link to create the first operator; expires ${setup.expiresAt.toISOString()}; a new one is printed at each start until then)`);
  } else {
    console.log(`  Console:         ${config.publicUrl}/console`);
  }

  onStopSignal(async () => {
    stopPurge();
    server?.close();
    await stopWorkers();
    await adminSocket?.close();
    await closeService();
  });
}

/** Forks `count` workers, resolves once all listen; replaces a worker that dies. Returns the stop function. */
async function forkWorkers(count: number): Promise<() => Promise<void>> {
  let stopping = false;
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) return;
    console.error(`latchkey: worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting another`);
    setTimeout(() => cluster.fork(), RESTART_DELAY_MS).unref();
  });
  await Promise.all(
    Array.from({ length: count }, () => {
      const worker = cluster.fork();
      return new Promise<void>((resolve, reject) => {
        worker.once("listening", () => resolve());
        worker.once("exit", (code) => reject(new Error(`a worker exited with code ${code} while starting`)));
      });
    }),
  );
  return async () => {
    stopping = true;
    const alive = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined && !w.isDead());
    await Promise.all(
      alive.map(
        (worker) =>
          new Promise<void>((resolve) => {
            worker!.once("exit", () => resolve());
            worker!.process.kill("SIGTERM");
          }),
      ),
    );
  };
}

/** A cluster worker: the primary has prepared the database; this process only serves. */
async function worker(config: Config) {
  const service = await getService();
  const server = await serve(service, config);
  onStopSignal(async () => {
    await new Promise((resolve) => server.close(resolve));
    await closeService();
  });
}

async function main() {
  const config = loadConfigOrExit();
  if (cluster.isPrimary) await primary(config);
  else await worker(config);
}

main().catch((error) => {
  console.error(`latchkey: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
