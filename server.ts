// Latchkey's production server: machine-facing protocol endpoints are dispatched straight from
// the route table to their framework-free functions; Next serves pages and everything else.
import { createServer } from "node:http";
import next from "next";
import { startAdminSocket } from "./lib/cli/admin-socket";
import { ConfigError, loadConfig } from "./lib/config";
import { createRequestListener } from "./lib/http/node-server";
import { closeService, getService } from "./lib/service";
import { startAccessTokenPurge } from "./lib/oauth/token-purge";
import { ensureDemoWorkspace } from "./lib/workspaces/demo";
import { ensureSystemWorkspace } from "./lib/console/system";
import { configuredSetupToken, issueSetupToken, SetupTokenConfigError } from "./lib/console/setup";

const dev = process.argv.includes("--dev");

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
  // The console's operator workspace; while no operator exists, a one-time setup link (docs/console.md).
  await ensureSystemWorkspace(service);
  let setupToken: string | undefined;
  try {
    setupToken = configuredSetupToken();
  } catch (error) {
    if (!(error instanceof SetupTokenConfigError)) throw error;
    console.error(`latchkey: ${error.message}`);
    process.exit(1);
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

  const app = next({ dev, hostname: "0.0.0.0", port: config.port, dir: process.cwd() });
  const handle = app.getRequestHandler();
  await app.prepare();

  const server = createServer(createRequestListener(service, config.publicUrl, handle));
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
    if (setup) {
      console.log(`  Console setup:   ${setup.url}`);
      console.log(`                   (one-time link to create the first operator; expires ${setup.expiresAt.toISOString()}; a new one is printed at each start until then)`);
    } else {
      console.log(`  Console:         ${config.publicUrl}/console`);
    }
  });

  let stopping = false;
  const stop = () => {
    // A terminal's Ctrl-C reaches this process twice: directly and relayed by `npm start`.
    if (stopping) return;
    stopping = true;
    stopPurge();
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
