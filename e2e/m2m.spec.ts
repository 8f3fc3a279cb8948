/**
 * Machine-to-machine end to end: an M2M client obtains a token with client credentials, calls an
 * API server, and the API server asks POST /authorization/check before answering. An operator
 * then narrows the client's API grant with the CLI (`latchkey workspace import`) while the server
 * runs, and the very next call is denied.
 *
 * The CLI has to reach the data store of the server under test. With PostgreSQL it connects to
 * the same database; with the embedded database it hands the command to the running server over
 * its admin socket in DATA_DIR. e2e/serve.mjs creates a fresh store per run and publishes it in
 * .test-data/e2e-server-<port>.json (E2E_SERVER_DATA_DIR / E2E_SERVER_DATABASE_URL override it).
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { expect, test } from "@playwright/test";

import { ISSUER } from "./env";
import { fixtureSettings, serverStore } from "./workspace-import";

const RESOURCE = "https://reports.e2e.example";
const CLIENT_ID = "e2e-m2m";

interface Entry {
  [key: string]: unknown;
}
const fixture = JSON.parse(readFileSync(path.join(process.cwd(), "e2e/fixtures/e2e-workspace.json"), "utf8")) as {
  id: string;
  name: string;
  applications: Entry[];
  apis: Entry[];
  api_grants: Entry[];
};
const m2mApp = fixture.applications.find((a) => a.client_id === CLIENT_ID)!;
const reportsApi = fixture.apis.find((a) => a.audience === RESOURCE)!;
const m2mGrant = fixture.api_grants.find((g) => g.client_id === CLIENT_ID && g.audience === RESOURCE)!;
const SECRET = m2mApp.secret as string;

// ---------------------------------------------------------------------------------------------
// The API server: the permission check exactly as docs/protecting-your-api.md shows it.

type Decision = "allow" | "deny" | "unauthenticated" | "unavailable";

async function checkPermission(accessToken: string, permission: string, organizationId: string | null): Promise<Decision> {
  let res: Response;
  try {
    res = await fetch(`${ISSUER}/authorization/check`, {
      method: "POST",
      headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" },
      body: JSON.stringify({ resource: RESOURCE, permission, organization_id: organizationId }),
      redirect: "manual",
      signal: AbortSignal.timeout(5_000),
    });
  } catch {
    return "unavailable";
  }
  if (res.status === 401) return "unauthenticated";
  if (res.status === 429 || res.status >= 500) return "unavailable";
  if (res.status !== 200) return "deny";
  try {
    const body: unknown = await res.json();
    return typeof body === "object" && body !== null && (body as { allowed?: unknown }).allowed === true ? "allow" : "deny";
  } catch {
    return "unavailable";
  }
}

const STATUS: Record<Decision, number> = { allow: 200, deny: 403, unauthenticated: 401, unavailable: 503 };

function startApiServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    void (async () => {
      const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(req.headers.authorization ?? "");
      const decision: Decision = match ? await checkPermission(match[1], "read:reports", null) : "unauthenticated";
      res.writeHead(STATUS[decision], { "content-type": "application/json" });
      res.end(JSON.stringify(decision === "allow" ? { reports: ["q3"] } : { error: decision }));
    })();
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

// ---------------------------------------------------------------------------------------------
// The server under test's data store, and the CLI pointed at it.

function latchkey(args: string[], stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  delete env.MASTER_KEY;
  Object.assign(env, serverStore());
  if (env.MASTER_KEY === "") delete env.MASTER_KEY;
  return new Promise((resolve) => {
    const child = execFile(
      path.join(process.cwd(), "node_modules/.bin/tsx"),
      ["cli/latchkey.ts", ...args],
      { env, cwd: process.cwd(), timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}

/** Imports a workspace file naming only the M2M client, the API and the grant with `permissions`. */
async function setGrant(permissions: string[]): Promise<void> {
  // The workspace's own settings as the fixture has them (a key the file leaves out takes its default).
  const doc = { ...fixtureSettings(), applications: [m2mApp], apis: [reportsApi], api_grants: [{ ...m2mGrant, permissions }] };
  const result = await latchkey(["workspace", "import", "-"], JSON.stringify(doc));
  expect(result.code, `latchkey workspace import failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
}

// ---------------------------------------------------------------------------------------------

async function clientCredentials(scope: string): Promise<Response> {
  const basic = Buffer.from(`${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(SECRET)}`).toString("base64");
  return fetch(`${ISSUER}/oauth2/token`, {
    method: "POST",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", resource: RESOURCE, scope }),
  });
}

async function directCheck(token: string): Promise<unknown> {
  const res = await fetch(`${ISSUER}/authorization/check`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ resource: RESOURCE, permission: "read:reports", organization_id: null }),
  });
  expect(res.status).toBe(200);
  return res.json();
}

test("an M2M client's call is allowed by the permission check, then denied after its grant changes", async () => {
  test.setTimeout(120_000);
  const api = await startApiServer();
  try {
    const tokenRes = await clientCredentials("read:reports");
    expect(tokenRes.status).toBe(200);
    const body = (await tokenRes.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "scope", "token_type"]);
    expect(body).toMatchObject({ token_type: "Bearer", expires_in: 300, scope: "read:reports" });
    const token = body.access_token as string;

    // The API server asks Latchkey and serves the request.
    const allowed = await fetch(`${api.url}/reports`, { headers: { authorization: `Bearer ${token}` } });
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toEqual({ reports: ["q3"] });
    expect(await directCheck(token)).toEqual({ allowed: true });
    // No token, no service.
    expect((await fetch(`${api.url}/reports`)).status).toBe(401);

    // An operator narrows the grant while the server runs: the next check denies the same token.
    await setGrant(["write:reports"]);
    try {
      const denied = await fetch(`${api.url}/reports`, { headers: { authorization: `Bearer ${token}` } });
      expect(denied.status).toBe(403);
      expect(await directCheck(token)).toEqual({ allowed: false });
      // And the client can no longer obtain the permission.
      const refused = await clientCredentials("read:reports");
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toBe("invalid_scope");
    } finally {
      await setGrant(m2mGrant.permissions as string[]);
    }

    // The grant is back: the same token passes again.
    expect((await fetch(`${api.url}/reports`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  } finally {
    await new Promise((resolve) => api.server.close(resolve));
  }
});
