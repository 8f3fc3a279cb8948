/**
 * The latchkey command line (cli/latchkey.ts) as a separate process while this process holds
 * the embedded database, as a running server does: commands go through the admin socket.
 *
 * It runs in the embedded run only: its processes use an embedded data directory of their own
 * whatever the run's database (they are the embedded path, like the first start's e2e spec), so a
 * PostgreSQL run would repeat the embedded run's work (about a minute) and test nothing more.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { openDatabase, runMigrations, type DatabaseHandle } from "../../db/client";
import { auditEvents, enterpriseConnections, socialProviders } from "../../db/schema";
import { loadConfig, type Config } from "../config";
import { decryptSecret } from "../crypto";
import { createService } from "../service";
import { startAdminSocket, type AdminSocket } from "./admin-socket";
import { secretReferences } from "../workspaces/document/social-providers";
import { referencedEnvironment, runCommand } from "./commands";
import { systemClock } from "../clock";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsx = path.join(root, "node_modules", ".bin", "tsx");

let dataDir: string;
let handle: DatabaseHandle;
let socket: AdminSocket | undefined;
let config: Config;

function latchkey(args: string[], options: { dataDir?: string; stdin?: string } = {}): Promise<{ code: number; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: options.dataDir ?? dataDir, LATCHKEY_CWD: dataDir };
  // The embedded database, not the test run's PostgreSQL server.
  delete env.DATABASE_URL;
  delete env.MASTER_KEY;
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, [path.join(root, "cli", "latchkey.ts"), ...args], { cwd: root, env });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, out, err }));
    child.stdin.end(options.stdin ?? "");
  });
}

/** The same command run in this process (lib/cli/commands.ts), as the admin socket runs it. */
async function inProcess(argv: string[], stdin?: string): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await runCommand(handle.db, config, systemClock, { argv, ...(stdin === undefined ? {} : { stdin }) }, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const embeddedRun = !inject("databaseUrl");

beforeAll(async () => {
  if (!embeddedRun) return;
  dataDir = mkdtempSync(path.join(os.tmpdir(), "lk-cli-"));
  config = loadConfig({ DATA_DIR: dataDir, PUBLIC_URL: "https://auth.example.test" });
  handle = await openDatabase({ dataDir });
  await runMigrations(handle);
  socket = await startAdminSocket(createService(handle.db, config), { log: () => {} });
});

afterAll(async () => {
  await socket?.close();
  await handle?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

// Each test runs the command as its own tsx processes (about 3 s each alone, four times that while
// the end-to-end lane runs beside the unit tests on a 2-core machine): a generous bound.
describe.runIf(embeddedRun)("latchkey while the server holds the embedded database", { timeout: 180_000 }, () => {
  it("imports a workspace file (relative to where it was run) and exports it to --out", async () => {
    const fixture = readFileSync(path.join(root, "e2e", "fixtures", "e2e-workspace.json"), "utf8");
    writeFileSync(path.join(dataDir, "ws.json"), fixture);
    // Upstream secrets in the file are environment references, read where the import runs: this
    // process, whose admin socket runs the command.
    for (const ref of secretReferences(JSON.parse(fixture) as Record<string, unknown>)) process.env[ref.env] ??= `test value of ${ref.env}`;

    const imported = await latchkey(["workspace", "import", "ws.json"]);
    expect(imported.err).toBe("");
    expect(imported.code).toBe(0);
    expect(imported.out).toMatch(/^Workspace "e2e" created/);

    const exported = await latchkey(["workspace", "export", "e2e", "--out", "out.json"]);
    expect(exported.code).toBe(0);
    expect(exported.out).toBe("");
    expect(exported.err).toMatch(/^Wrote workspace "e2e" to out\.json\./);
    const file = path.join(dataDir, "out.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8")).id).toBe("e2e");

    // Standard input, and a rotation with its output passed through.
    const again = await latchkey(["workspace", "import", "-"], { stdin: readFileSync(file, "utf8") });
    expect(again).toMatchObject({ code: 0, out: 'Workspace "e2e" already up to date.\n' });
    const rotated = await latchkey(["secret", "rotate", "e2e", "e2e-web", "--overlap-hours", "1"]);
    expect(rotated.code).toBe(0);
    expect(rotated.out).toMatch(/^Secret \S+ stays valid until \S+\.\nNew secret for client e2e-web:\n/);
  });

  it("reports the problems of a bad file with exit 1", async () => {
    writeFileSync(path.join(dataDir, "bad.json"), JSON.stringify({ id: "Bad Id", name: "" }));
    const result = await latchkey(["workspace", "import", "bad.json"]);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^bad\.json: 2 problems; nothing was imported\.\n\$\.id: .*\n\$\.name: /);
  });

  it("sets upstream secrets from standard input, never echoing them", async () => {
    const doc = {
      id: "fed-cli",
      name: "Federation CLI",
      organizations: [{ slug: "acme", name: "Acme", connections: [{ name: "Acme Okta", issuer: "https://acme.okta.example", client_id: "latchkey" }] }],
      social_providers: [{ key: "google", preset: "google", name: "Google", client_id: "g" }],
    };
    expect((await inProcess(["workspace", "import", "-"], JSON.stringify(doc))).code).toBe(0);

    // The real command line once (standard input through the admin socket); the rest in process, the same code.
    const social = await latchkey(["social", "secret", "fed-cli", "google"], { stdin: "google-secret-from-stdin\n" });
    expect(social).toEqual({ code: 0, out: "Secret of social provider google set (stored encrypted).\n", err: "" });
    const connection = await inProcess(["connection", "secret", "fed-cli", "acme", "Acme Okta"], "okta-secret-from-stdin");
    expect(connection).toEqual({ code: 0, out: 'Secret of connection "Acme Okta" of organization acme set (stored encrypted).\n', err: "" });

    const [provider] = await handle.db.select().from(socialProviders).where(eq(socialProviders.workspaceId, "fed-cli"));
    expect(decryptSecret(config.masterKey, provider.secretEncrypted!, `social-provider:${provider.id}`)).toBe("google-secret-from-stdin");
    const [conn] = await handle.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.workspaceId, "fed-cli"));
    expect(decryptSecret(config.masterKey, conn.secretEncrypted!, `enterprise-connection:${conn.id}`)).toBe("okta-secret-from-stdin");
    const audited = await handle.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, "fed-cli"), eq(auditEvents.type, "social_provider.secret_set")));
    expect(audited).toHaveLength(1);
    expect(JSON.stringify(audited)).not.toContain("google-secret-from-stdin");

    // Unknown names and an empty secret are refused with exit 1; a missing argument is a usage error.
    expect(await inProcess(["social", "secret", "fed-cli", "nope"], "x")).toMatchObject({ code: 1, err: 'No social provider "nope" in workspace "fed-cli".\n' });
    expect(await inProcess(["connection", "secret", "fed-cli", "acme", "Other"], "x")).toMatchObject({ code: 1, err: expect.stringContaining('no connection named "Other"') });
    expect(await inProcess(["social", "secret", "fed-cli", "google"], " \n")).toMatchObject({ code: 1, err: expect.stringContaining("empty") });
    expect(await inProcess(["connection", "secret", "fed-cli", "acme"])).toMatchObject({ code: 2, err: expect.stringContaining("Usage: latchkey connection secret") });
  });

  it("says clearly when the database is held by a process without an admin socket", async () => {
    const other = mkdtempSync(path.join(os.tmpdir(), "lk-cli-"));
    try {
      // A live process that is not a server (this test's parent) holds the lock.
      writeFileSync(path.join(other, "embedded.lock"), String(process.ppid));
      const result = await latchkey(["secret", "list", "e2e", "e2e-web"], { dataDir: other });
      expect(result.code).toBe(1);
      expect(result.err).toContain(`The embedded database in ${other} is in use by process ${process.ppid}`);
      expect(result.err).toContain("it has no admin socket");
      expect(result.err).toContain("DATABASE_URL");
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe("referencedEnvironment", () => {
  it("takes only the variables the file refers to", () => {
    const file = JSON.stringify({
      id: "x",
      name: "X",
      social_providers: [{ key: "g", client_secret: { env: "G_SECRET" } }],
      organizations: [{ slug: "a", connections: [{ name: "c", client_secret: { env: "C_SECRET" } }, { name: "d", client_secret: { env: "UNSET" } }] }],
    });
    expect(referencedEnvironment(file, { G_SECRET: "g", C_SECRET: "c", OTHER: "o" })).toEqual({ G_SECRET: "g", C_SECRET: "c" });
    expect(referencedEnvironment("not json", { G_SECRET: "g" })).toEqual({});
  });
});
