/**
 * Child process of the dispatch-equivalence test: one service (the process-global one of
 * lib/service.ts, configured through the environment) behind two listeners on loopback,
 *   - `direct`: the production server's listener (machine-facing endpoints answered from the
 *     route table, the rest handed to Next), exactly as server.ts runs it;
 *   - `next`: every request handed to Next, whose route.ts files bind the same endpoints.
 * Seeds the workspace in DISPATCH_WORKSPACE (a workspace file), then prints one JSON line with
 * both ports and serves until SIGTERM.
 */
import { createServer, type Server } from "node:http";
import next from "next";
import { createRequestListener } from "../../lib/server/node-server";
import { closeService, getService } from "../../lib/service";
import { importWorkspace } from "../../lib/workspaces/file";

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : 0);
    });
  });
}

async function main() {
  const service = await getService();
  // Secrets in the workspace file are environment references ({"env": "NAME"}), resolved from this process's environment.
  await importWorkspace(service.db, JSON.parse(process.env.DISPATCH_WORKSPACE ?? "{}"), { clock: service.clock, masterKey: service.config.masterKey, env: process.env });
  service.cache.clear();
  const app = next({ dev: false, dir: process.cwd(), hostname: "127.0.0.1", port: 0 });
  const handle = app.getRequestHandler();
  await app.prepare();
  const direct = createServer(createRequestListener(service, service.config.publicUrl, handle));
  const viaNext = createServer(createRequestListener(service, service.config.publicUrl, handle, { direct: false }));
  const ports = { direct: await listen(direct), next: await listen(viaNext) };
  process.stdout.write(`${JSON.stringify({ ready: ports })}\n`);
  const stop = () => {
    direct.close();
    viaNext.close();
    closeService().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 3000).unref();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((error) => {
  console.error(`dual-server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
