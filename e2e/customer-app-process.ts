/**
 * The example customer application (e2e/customer-app.ts) run as a separate process for one client
 * of the e2e workspace, for specs that need an application besides the default one on 3112.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { ISSUER } from "./env";

export interface CustomerAppProcess {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the app on `port` for `clientId` and waits until it answers /health (20 s at most). The
 * issuer is the e2e workspace's unless `issuer` says otherwise; `resolve` maps names for the
 * app's own requests (e2e/resolving-fetch.ts), such as a workspace hostname.
 */
export async function startCustomerApp(app: { port: number; clientId: string; clientSecret: string; issuer?: string; resolve?: string }): Promise<CustomerAppProcess> {
  const child = spawn(path.join("node_modules", ".bin", "tsx"), ["e2e/customer-app.ts"], {
    env: {
      ...process.env,
      PORT: String(app.port),
      LATCHKEY_ISSUER: app.issuer ?? ISSUER,
      CLIENT_ID: app.clientId,
      CLIENT_SECRET: app.clientSecret,
      RESOLVE: app.resolve ?? "",
    },
    stdio: "ignore",
  });
  const url = `http://localhost:${app.port}`;
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  };
  for (let i = 0; i < 100; i++) {
    if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) return { url, stop };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await stop();
  throw new Error(`the customer app for ${app.clientId} did not start`);
}
