// Latchkey's production server: machine-facing protocol endpoints are dispatched straight from
// the route table to their framework-free functions; Next serves pages and everything else.
// With WEB_CONCURRENCY=N (PostgreSQL only) the first process prepares the database and forks N
// workers that share the port (node:cluster); otherwise one process does both. SIGTERM drains
// each serving process within SHUTDOWN_TIMEOUT, then closes the database (docs/configuration.md).
import cluster from "node:cluster";
import { existsSync } from "node:fs";
import path from "node:path";
import next from "next";
import { startAdminSocket } from "./lib/cli/admin-socket";
import { ConfigError, DEFAULT_SERVER_SETTINGS, loadConfig, type Config } from "./lib/config";
import { readinessProbe } from "./lib/http/health";
import { createLogger, logError, serverLog, setServerLog } from "./lib/http/log";
import { clusterSource, collectProcessMetrics, processSource, startMetricsListener } from "./lib/metrics/listener";
import { SIGN_IN_METHODS } from "./lib/sign-in/outcomes";
import { signInPages } from "./lib/server/sign-in-page";
import { createNodeServer, createRequestListener, type NodeHandler } from "./lib/server/node-server";
import { closeService, getService, type Service } from "./lib/service";
import { startPurge } from "./lib/features/purge";
import { startSecurityAlerts } from "./lib/security-alerts/dispatch";
import { workspaceIssuers } from "./lib/console/issuers";
import { mailSettled, mailStartupLine } from "./lib/authn/email/transport";
import { DEMO_USER, DEMO_WEB_CLIENT_ID, DEMO_WEB_URIS, demoClientsLine, demoSignInStillWorks, ensureDemoWorkspace } from "./lib/workspaces/demo";
import { DEMO_BASE_PATH, demoAhead } from "./lib/demo/serve";
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

/** Idle keep-alive connections stay open a little longer than common load balancers' 60 s idle timeout. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** After the drain, closing the database pool and the admin socket gets this long before the process exits anyway. */
const CLOSE_BOUND_MS = 5_000;

/**
 * Next plus the direct path, listening on the configured port (shared between cluster workers).
 * Returns the graceful stop: `/readyz` turns 503, no new connections, requests in flight finish
 * within SHUTDOWN_TIMEOUT, then open connections are cut.
 */
async function serve(service: Service, config: Config): Promise<() => Promise<void>> {
  const app = next({ dev, hostname: "0.0.0.0", port: config.port, dir: process.cwd() });
  // Next's server (its configuration, manifests and renderers: about half of an idle process's
  // heap) is prepared on the first request it handles, a page, not at start: the machine-facing
  // endpoints never need it, so a process that serves only them never carries it, and the
  // collector has that much less to mark. In development, prepare starts the compiler at once.
  if (dev) await app.prepare();
  else if (!existsSync(path.join(process.cwd(), ".next", "BUILD_ID"))) fail("no production build in .next (run npm run build, or npm start, which builds first)");
  let nextHandler: Promise<NodeHandler> | undefined = dev ? Promise.resolve(app.getRequestHandler()) : undefined;
  const handle: NodeHandler = async (req, res) => {
    let handler: NodeHandler;
    try {
      handler = await (nextHandler ??= app.prepare().then(() => app.getRequestHandler()));
    } catch (error) {
      nextHandler = undefined; // the next page request tries again
      logError("the pages could not be prepared", error instanceof Error ? error.message : String(error));
      if (!res.headersSent) res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "5" });
      res.end("Service unavailable");
      return;
    }
    return handler(req, res);
  };
  const settings = config.server ?? DEFAULT_SERVER_SETTINGS;
  const readiness = readinessProbe(service.db);
  // One line per request (lib/http/log.ts) and, once METRICS_PORT enables them (collectProcessMetrics), its HTTP metrics.
  const listener = createRequestListener(service, config.publicUrl, handle, { readiness, log: serverLog(), ahead: demoAhead(service), pages: signInPages(service, handle) });
  const http = createNodeServer(listener, {
    headersTimeoutMs: settings.headersTimeoutMs,
    requestTimeoutMs: settings.requestTimeoutMs,
    keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
    connectionsPerAddress: settings.connectionsPerAddress,
  });
  await new Promise<void>((resolve) => http.server.listen(config.port, resolve));
  return async () => {
    readiness.drain();
    const { forced } = await http.stop(settings.shutdownTimeoutMs);
    if (forced) console.warn(`latchkey: requests still open after ${settings.shutdownTimeoutMs / 1000} s were cut off (SHUTDOWN_TIMEOUT)`);
  };
}

/**
 * Runs `stop` once on SIGTERM/SIGINT (a terminal's Ctrl-C arrives twice: directly and relayed by
 * `npm start`), then exits 0; `boundMs` later the process exits anyway (1: something hung).
 */
function onStopSignal(stop: () => Promise<unknown>, boundMs: number): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      (error) => {
        console.error(`latchkey: stopping failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
    setTimeout(() => {
      console.error("latchkey: stopping took too long; exiting");
      process.exit(1);
    }, boundMs).unref();
  };
  process.on("SIGTERM", handler);
  process.on("SIGINT", handler);
}

/** The first process: migrations, the demo and console workspaces, the setup link, the purge; then it serves or forks. */
async function primary(config: Config) {
  const service = await getService();
  const demo = await ensureDemoWorkspace(service.db, { clock: service.clock, masterKey: service.config.masterKey, publicUrl: config.publicUrl });
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
  const stopPurge = startPurge(service);
  // Security alerts by email, sent from the audit log; the links in them are under the workspace's primary issuer.
  const stopAlerts = startSecurityAlerts(service, { issuerOf: async (s, workspaceId) => (await workspaceIssuers(s, workspaceId)).primary });

  // A single process collects its metrics from before its first request (each worker collects its own).
  if (config.metrics && config.workers <= 1) collectProcessMetrics({ signInMethods: SIGN_IN_METHODS });
  let stopServing = async () => {};
  if (config.workers > 1) stopServing = await forkWorkers(config.workers);
  else stopServing = await serve(service, config);
  // The Prometheus listener (lib/metrics/listener.ts): this process's metrics, or the workers' sum.
  const metrics = config.metrics
    ? await startMetricsListener(config.metrics, config.workers > 1 ? clusterSource() : processSource()).catch((error: Error) => fail(`METRICS_PORT ${config.metrics!.port}: ${error.message}`))
    : undefined;

  const issuer = `${config.publicUrl}/t/demo`;
  const workers = config.workers > 1 ? `, ${config.workers} workers` : "";
  console.log(`Latchkey is listening on ${config.publicUrl} (${service.config.databaseUrl ? "PostgreSQL" : `embedded database in ${config.dataDir}`}${workers})`);
  console.log(`  Demo issuer:     ${issuer}`);
  console.log(`  Discovery:       ${issuer}/.well-known/openid-configuration`);
  console.log(`  ${mailStartupLine(config)}`);
  if (config.metrics) console.log(`  Metrics:         http://${config.metrics.host.includes(":") ? `[${config.metrics.host}]` : config.metrics.host}:${metrics?.port ?? config.metrics.port}/metrics`);
  if (process.env.LATCHKEY_TEST_CLOCK_FILE) console.log(`  Clock:           shifted by ${process.env.LATCHKEY_TEST_CLOCK_FILE} (LATCHKEY_TEST_CLOCK_FILE: end-to-end tests only)`);
  // The demo sign-in is shown on every start while the demo user still has the demo password.
  if (demo.created || (await demoSignInStillWorks(service.db))) {
    console.log(`  Try it:          ${config.publicUrl}${DEMO_BASE_PATH}  (the demo application: sign in, see the tokens, refresh, revoke, sign out)`);
    console.log(`  Demo sign-in:    ${DEMO_USER.email} / ${DEMO_USER.password}`);
    console.log(`  Demo clients:    ${demoClientsLine()}`);
    if (demo.webSecret) console.log(`  demo-web secret: ${demo.webSecret}   (shown once; rotate with: npm run latchkey -- secret rotate demo demo-web)`);
  }
  if (demo.added?.length) console.log(`  Demo clients ${demo.added.join(", ")} added: the demo application now signs in with them and opens Security settings through the account-security backend handoff.`);
  const repointedApp = demo.repointed?.filter((id) => id !== DEMO_WEB_CLIENT_ID) ?? [];
  if (repointedApp.length) console.log(`  Demo clients ${repointedApp.join(", ")} now return to ${config.publicUrl}${DEMO_BASE_PATH}/callback (the demo application).`);
  if (demo.repointed?.includes(DEMO_WEB_CLIENT_ID)) console.log(`  Demo client ${DEMO_WEB_CLIENT_ID} now registers the integration guide's ${DEMO_WEB_URIS.callback} and ${DEMO_WEB_URIS.signedOut}, and offline_access.`);
  if (setup) {
    console.log(`  Console setup:   ${setup.url}`);
    console.log(`                   (one-time link to create the first operator; expires ${setup.expiresAt.toISOString()}; a new one is printed at each start until then)`);
  } else {
    console.log(`  Console:         ${config.publicUrl}/console`);
  }

  // Each worker drains within SHUTDOWN_TIMEOUT and closes its pool within CLOSE_BOUND_MS (its own
  // bound); the primary waits for them, then closes its own handles.
  const shutdownMs = (config.server ?? DEFAULT_SERVER_SETTINGS).shutdownTimeoutMs;
  onStopSignal(async () => {
    stopPurge();
    stopAlerts();
    await stopServing();
    await metrics?.close();
    // Messages already accepted (codes the user is waiting for) go out before the database closes.
    await mailSettled();
    await adminSocket?.close();
    await closeService();
  }, shutdownMs + 2 * CLOSE_BOUND_MS);
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
  // Collected here, answered by the first process (lib/metrics/listener.ts).
  if (config.metrics) collectProcessMetrics({ clusterWorker: true, signInMethods: SIGN_IN_METHODS });
  const service = await getService();
  const stopServing = await serve(service, config);
  onStopSignal(async () => {
    await stopServing();
    await mailSettled();
    await closeService();
  }, (config.server ?? DEFAULT_SERVER_SETTINGS).shutdownTimeoutMs + CLOSE_BOUND_MS);
}

async function main() {
  const config = loadConfigOrExit();
  // The log (LOG_FORMAT, LOG_LEVEL): request lines and errors; Next's route bundles write through it too.
  if (config.log) setServerLog(createLogger(config.log));
  if (cluster.isPrimary) await primary(config);
  else await worker(config);
}

main().catch((error) => {
  console.error(`latchkey: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
