/**
 * The admin socket: a service over an embedded database in a temporary DATA_DIR, as the server
 * runs it, and commands sent through the socket client as the CLI sends them.
 */
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, runMigrations, type DatabaseHandle } from "../../db/client";
import { loadConfig } from "../config";
import { createService, type Service } from "../service";
import { adminSocketPath, embeddedDatabaseHolder, sendAdminCommand, startAdminSocket, type AdminSocket } from "./admin-socket";
import { runCommand, type CommandRequest } from "./commands";

const workspace = {
  id: "admin-socket",
  name: "Admin socket",
  applications: [
    {
      client_id: "web",
      name: "Web",
      type: "WEB_CONFIDENTIAL",
      redirect_uris: ["https://app.example.test/callback"],
      identity_scopes: ["openid", "email"],
    },
    { client_id: "spa", name: "SPA", type: "PUBLIC", redirect_uris: ["http://localhost:5173/callback"] },
  ],
  users: [{ email: "ada@example.test", name: "Ada", password: "a long test password", email_verified: true }],
};

let dataDir: string;
let handle: DatabaseHandle;
let service: Service;
let socket: AdminSocket;
const logged: string[] = [];

interface Result {
  code: number;
  out: string;
  err: string;
}

async function send(request: CommandRequest): Promise<Result> {
  const result = { code: -1, out: "", err: "" };
  result.code = await sendAdminCommand(socket.path, request, {
    out: (text) => (result.out += text),
    err: (text) => (result.err += text),
  });
  return result;
}

async function direct(request: CommandRequest): Promise<Result> {
  const result = { code: -1, out: "", err: "" };
  result.code = await runCommand(service.db, service.config, service.clock, request, {
    out: (text) => (result.out += text),
    err: (text) => (result.err += text),
  });
  return result;
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), "lk-admin-"));
  // The same configuration and database the server opens, never DATABASE_URL.
  const config = loadConfig({ DATA_DIR: dataDir, PUBLIC_URL: "https://auth.example.test" });
  handle = await openDatabase({ dataDir });
  await runMigrations(handle);
  service = createService(handle.db, config);
  socket = await startAdminSocket(service, { log: (line) => logged.push(line) });
});

afterAll(async () => {
  await socket?.close();
  await handle?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the socket", () => {
  it("is $DATA_DIR/admin.sock, a socket readable and writable by its owner only", () => {
    expect(socket.path).toBe(path.join(dataDir, "admin.sock"));
    const stats = lstatSync(socket.path);
    expect(stats.isSocket()).toBe(true);
    expect(stats.mode & 0o777).toBe(0o600);
    // The private directory it was bound in is gone.
    expect(readdirSync(dataDir).filter((name) => name.startsWith(".a"))).toEqual([]);
  });

  it("is refused when DATABASE_URL is set", async () => {
    const withUrl = createService(handle.db, { ...service.config, databaseUrl: "postgres://localhost/latchkey" });
    await expect(startAdminSocket(withUrl)).rejects.toThrow(/embedded database only/);
  });

  it("replaces a stale socket at start and removes its own on close", async () => {
    const other = mkdtempSync(path.join(os.tmpdir(), "lk-admin-"));
    try {
      writeFileSync(adminSocketPath(other), "stale");
      const started = await startAdminSocket(createService(handle.db, { ...service.config, dataDir: other }), { log: () => {} });
      expect(lstatSync(started.path).isSocket()).toBe(true);
      const result = await sendAdminCommand(started.path, { argv: ["migrate"] }, { out: () => {}, err: () => {} });
      expect(result).toBe(0);
      await started.close();
      expect(existsSync(started.path)).toBe(false);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("names the process holding the embedded database (not this one)", () => {
    // This process holds the lock itself, so the CLI's question "who else holds it?" is null.
    expect(embeddedDatabaseHolder(dataDir)).toBeNull();
    const other = mkdtempSync(path.join(os.tmpdir(), "lk-admin-"));
    try {
      expect(embeddedDatabaseHolder(other)).toBeNull();
      writeFileSync(path.join(other, "embedded.lock"), String(process.ppid));
      expect(embeddedDatabaseHolder(other)).toBe(process.ppid);
      writeFileSync(path.join(other, "embedded.lock"), "999999999");
      expect(embeddedDatabaseHolder(other)).toBeNull();
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("answers a malformed request with exit 2", async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const connection = net.connect(socket.path);
      let text = "";
      connection.setEncoding("utf8");
      connection.on("connect", () => connection.write('{"argv": "migrate"}\n'));
      connection.on("data", (chunk: string) => (text += chunk));
      connection.on("close", () => resolve(text));
      connection.on("error", reject);
    });
    const lines = answer.trim().split("\n").map((line) => JSON.parse(line));
    expect(lines[0].err).toMatch(/argv must be an array of strings/);
    expect(lines.at(-1)).toEqual({ exit: 2 });
  });
});

describe("commands through the socket", () => {
  it("migrate is a successful no-op (the server migrated at start)", async () => {
    expect(await send({ argv: ["migrate"] })).toEqual({ code: 0, out: "The database schema is up to date.\n", err: "" });
  });

  it("reports usage errors with exit 2", async () => {
    const result = await send({ argv: ["secret", "rotate", "admin-socket"] });
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/^Usage: latchkey secret rotate/);
    expect((await send({ argv: ["workspace", "export", "x", "--bogus"] })).err).toMatch(/Unknown option --bogus/);
  });

  it("imports a workspace file, prints the generated secret once, and exports it back", async () => {
    const imported = await send({ argv: ["workspace", "import", "admin-socket.json"], stdin: JSON.stringify(workspace) });
    expect(imported.code).toBe(0);
    expect(imported.out).toMatch(/^Workspace "admin-socket" created \(\d+ rows written\)\.\n/);
    expect(imported.out).toMatch(/New secret for client web:\n {2}secret_id: {2}\S+\n {2}expires_at: \S+\n {2}secret: {5}lks_[A-Za-z0-9_-]{43}\n/);
    expect(imported.err).toMatch(/shown only once/);

    const exported = await send({ argv: ["workspace", "export", "admin-socket"] });
    expect(exported.code).toBe(0);
    const doc = JSON.parse(exported.out);
    expect(doc.id).toBe("admin-socket");
    expect(doc.applications.map((a: { client_id: string }) => a.client_id)).toEqual(["spa", "web"]);
    expect(doc.users[0].email).toBe("ada@example.test");
    expect(doc.users[0].password_hash).toMatch(/^\$argon2id\$/);

    // Importing the export changes nothing and generates no secret.
    const again = await send({ argv: ["workspace", "import", "-"], stdin: exported.out });
    expect(again).toEqual({ code: 0, out: 'Workspace "admin-socket" already up to date.\n', err: "" });
    expect(logged).toContain("[latchkey] admin socket: latchkey workspace import - (exit 0)");
  });

  it("runs the same code as the direct path: identical output", async () => {
    for (const argv of [["workspace", "export", "admin-socket"], ["secret", "list", "admin-socket", "spa"], ["workspace", "export", "nope"]]) {
      expect(await send({ argv })).toEqual(await direct({ argv }));
    }
  });

  it("rotates a secret: the old one is revoked, the new one printed once", async () => {
    const rotated = await send({ argv: ["secret", "rotate", "admin-socket", "web"] });
    expect(rotated.code).toBe(0);
    expect(rotated.out).toMatch(/^Revoked secret \S+\.\nNew secret for client web:\n/);
    expect(rotated.out).toMatch(/ {2}secret: {5}lks_/);
    expect(rotated.err).toBe("This secret is shown only once and cannot be shown again: store it now.\n");

    const listed = await send({ argv: ["secret", "list", "admin-socket", "web"] });
    expect(listed.code).toBe(0);
    const rows = listed.out.trim().split("\n");
    expect(rows[0]).toMatch(/^ID\s+STATUS\s+CREATED\s+EXPIRES\s+REVOKED\s+LAST USED$/);
    expect(rows.slice(1).map((row) => row.split(/\s+/)[1]).sort()).toEqual(["active", "revoked"]);
  });

  it("reports a refused secret operation with exit 1", async () => {
    const result = await send({ argv: ["secret", "rotate", "admin-socket", "spa"] });
    expect(result.code).toBe(1);
    expect(result.out).toBe("");
    expect(result.err).not.toBe("");
  });

  it("reports every problem of a bad file with its JSON path, exit 1, and imports nothing", async () => {
    const bad = {
      id: "admin-socket-bad",
      name: "Bad",
      applications: [{ client_id: "web", name: "Web", type: "WEB_CONFIDENTIAL", redirect_uris: ["http://app.example.test/cb"] }],
      api_grants: [{ client_id: "ghost", audience: "https://api.example.test" }],
    };
    const result = await send({ argv: ["workspace", "import", "bad.json"], stdin: JSON.stringify(bad) });
    expect(result.code).toBe(1);
    expect(result.out).toBe("");
    expect(result.err).toMatch(/^bad\.json: \d+ problems; nothing was imported\.\n/);
    expect(result.err).toContain("$.applications[0].redirect_uris[0]: ");
    expect(result.err).toContain("$.api_grants[0].client_id: ");

    expect(await send({ argv: ["workspace", "export", "admin-socket-bad"] })).toEqual({ code: 1, out: "", err: 'No workspace "admin-socket-bad".\n' });
  });

  it("takes the values of the file's environment references from the request (the CLI's shell), not the server's environment", async () => {
    const file = {
      id: "admin-socket-env",
      name: "Env",
      social_providers: [{ key: "gh", preset: "github", name: "GitHub", client_id: "Iv1.abc", client_secret: { env: "LATCHKEY_ADMIN_SOCKET_TEST_SECRET" } }],
    };
    delete process.env.LATCHKEY_ADMIN_SOCKET_TEST_SECRET;
    const without = await send({ argv: ["workspace", "import", "env.json"], stdin: JSON.stringify(file) });
    expect(without.code).toBe(1);
    expect(without.err).toContain("$.social_providers[0].client_secret.env: ");
    const withEnv = await send({ argv: ["workspace", "import", "env.json"], stdin: JSON.stringify(file), env: { LATCHKEY_ADMIN_SOCKET_TEST_SECRET: "s3cret" } });
    expect(withEnv.code).toBe(0);
  });

  it("reports a file that is not JSON", async () => {
    const result = await send({ argv: ["workspace", "import", "-"], stdin: "{ nope" });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^standard input is not valid JSON: /);
  });

  it("clears the server's per-process caches after a command", async () => {
    service.cache.set("workspace:admin-socket", { value: { id: "admin-socket", name: "Stale" }, at: Date.now() });
    await send({ argv: ["workspace", "import", "-"], stdin: JSON.stringify({ ...workspace, name: "Renamed" }) });
    expect(service.cache.size).toBe(0);
  });
});
