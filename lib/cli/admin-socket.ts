/**
 * The local admin channel. The embedded database (PGlite in DATA_DIR) can be opened by one
 * process only, so while the server runs, the CLI cannot open it. Instead the server listens on
 * a Unix domain socket, `$DATA_DIR/admin.sock`, and runs the CLI's commands (commands.ts, the
 * same code the CLI runs directly) against its own open database.
 *
 * Protocol: the client sends one JSON line `{"argv": [...], "stdin"?: "..."}`; the server answers
 * with JSON lines `{"out": text}`, `{"err": text}` and finally `{"exit": code}`, then closes.
 *
 * Security: the socket is mode 0600 inside DATA_DIR, so only whoever can already read DATA_DIR
 * (which holds the master key) can use it; it is never a TCP port. With DATABASE_URL there is no
 * socket: PostgreSQL serves any number of processes and the CLI connects to it directly.
 */
import { chmodSync, lstatSync, mkdtempSync, readFileSync, renameSync, rmdirSync, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { forgetEveryWorkspace, type Service } from "../service";
import { runCommand, type CommandIO, type CommandRequest } from "./commands";
import { loggableError } from "../http/errors";

export const ADMIN_SOCKET_NAME = "admin.sock";

/** The longest Unix socket path every platform accepts (sun_path is 104 bytes on macOS, 108 on Linux). */
const MAX_SOCKET_PATH = 103;
/** The request line carries a whole workspace file; this bounds what one connection may buffer. */
const MAX_REQUEST_CHARS = 64 * 1024 * 1024;
/** A client that connects but sends no request is dropped after this. */
const REQUEST_TIMEOUT_MS = 30_000;

export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, ADMIN_SOCKET_NAME);
}

/**
 * The live process holding the embedded database in `dataDir`, or null. Reads the lock file that
 * db/client.ts `lockDataDir` writes (`embedded.lock`, the holder's PID).
 */
export function embeddedDatabaseHolder(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(dataDir, "embedded.lock"), "utf8").trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: alive, but another user's process.
    return (error as NodeJS.ErrnoException).code === "EPERM" ? pid : null;
  }
}

export interface AdminSocket {
  path: string;
  /** Stops accepting commands and removes the socket file. */
  close(): Promise<void>;
}

export interface AdminSocketOptions {
  /** One line per command run (default: console.log); never includes a command's output. */
  log?: (line: string) => void;
}

/** Listens on `$DATA_DIR/admin.sock` and runs CLI commands against the service's database. */
export async function startAdminSocket(service: Service, options: AdminSocketOptions = {}): Promise<AdminSocket> {
  if (service.config.databaseUrl) {
    throw new Error("The admin socket is for the embedded database only: with DATABASE_URL, the CLI connects to PostgreSQL itself.");
  }
  const log = options.log ?? ((line: string) => console.log(line));
  const dataDir = service.config.dataDir;
  const target = adminSocketPath(dataDir);
  if (Buffer.byteLength(target) > MAX_SOCKET_PATH) {
    throw new Error(`The admin socket path ${target} is longer than ${MAX_SOCKET_PATH} bytes; use a shorter DATA_DIR.`);
  }

  // A socket left by a server that did not shut down cleanly. This process holds the database
  // lock, so no live server owns it.
  rmSync(target, { force: true });

  // Bind inside a fresh private directory (mkdtemp creates it 0700), make the socket 0600, then
  // move it into place: it is never reachable with the permissions the umask would give it.
  const staging = mkdtempSync(path.join(dataDir, ".a"));
  const bound = path.join(staging, "s");
  const connections = new Set<net.Socket>();
  const server = net.createServer((connection) => {
    connections.add(connection);
    connection.on("close", () => connections.delete(connection));
    serveConnection(connection, service, log);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(bound, () => {
        server.off("error", reject);
        resolve();
      });
    });
    chmodSync(bound, 0o600);
    renameSync(bound, target);
  } catch (error) {
    server.close();
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  rmdirSync(staging);
  const inode = lstatSync(target).ino;

  /** Removes the socket file, unless something else has replaced it since. */
  const unlink = () => {
    try {
      if (lstatSync(target).ino === inode) rmSync(target, { force: true });
    } catch {
      // already gone
    }
  };
  process.once("exit", unlink);

  let closed: Promise<void> | undefined;
  return {
    path: target,
    close() {
      closed ??= new Promise<void>((resolve) => {
        process.off("exit", unlink);
        unlink();
        server.close(() => resolve());
        for (const connection of connections) connection.destroy();
      });
      return closed;
    },
  };
}

function parseRequest(line: string): CommandRequest {
  const value: unknown = JSON.parse(line);
  if (typeof value !== "object" || value === null) throw new Error("the request is not a JSON object");
  const { argv, stdin, env } = value as Record<string, unknown>;
  if (!Array.isArray(argv) || !argv.every((a) => typeof a === "string")) throw new Error("argv must be an array of strings");
  if (stdin !== undefined && typeof stdin !== "string") throw new Error("stdin must be a string");
  if (env !== undefined && (typeof env !== "object" || env === null || Array.isArray(env) || !Object.values(env).every((v) => typeof v === "string"))) {
    throw new Error("env must be an object of strings");
  }
  return { argv, stdin, ...(env ? { env: env as Record<string, string> } : {}) };
}

function serveConnection(connection: net.Socket, service: Service, log: (line: string) => void): void {
  connection.setEncoding("utf8");
  connection.setTimeout(REQUEST_TIMEOUT_MS, () => connection.destroy());
  // The client may go away mid-command; the command still finishes (its transaction is atomic).
  connection.on("error", () => {});
  const send = (message: { out: string } | { err: string } | { exit: number }) => {
    if (connection.writable) connection.write(JSON.stringify(message) + "\n");
  };

  let buffer = "";
  let received = false;
  connection.on("data", (chunk: string) => {
    if (received) return;
    buffer += chunk;
    const newline = buffer.indexOf("\n");
    if (newline < 0) {
      if (buffer.length > MAX_REQUEST_CHARS) {
        received = true;
        send({ err: `latchkey: the request is larger than ${MAX_REQUEST_CHARS} characters\n` });
        send({ exit: 1 });
        connection.end();
      }
      return;
    }
    received = true;
    connection.setTimeout(0);
    const line = buffer.slice(0, newline);
    buffer = "";
    void execute(line);
  });

  async function execute(line: string): Promise<void> {
    let request: CommandRequest;
    try {
      request = parseRequest(line);
    } catch (error) {
      send({ err: `latchkey: bad admin request: ${(error as Error).message}\n` });
      send({ exit: 2 });
      connection.end();
      return;
    }
    const io: CommandIO = { out: (text) => send({ out: text }), err: (text) => send({ err: text }) };
    let code: number;
    try {
      code = await runCommand(service.db, service.config, service.clock, request, io);
    } catch (error) {
      console.error(`[latchkey] admin command failed: ${loggableError(error)}`);
      send({ err: `latchkey: ${error instanceof Error ? error.message : String(error)}\n` });
      code = 1;
    } finally {
      // The command may have changed what the per-process caches hold (workspaces, keys, the
      // public documents); a read begun before it must not store what it read (the generation).
      forgetEveryWorkspace(service);
      service.cache.clear();
    }
    log(`[latchkey] admin socket: latchkey ${request.argv.join(" ")} (exit ${code})`);
    send({ exit: code });
    connection.end();
  }
}

/** The socket could not be reached: the command was not sent. */
export class AdminSocketUnavailableError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/**
 * Sends one command to the server's admin socket, passing its output to `io` as it arrives;
 * resolves with the command's exit code. Rejects with AdminSocketUnavailableError when nothing
 * answers on the socket, and with a plain Error when the connection is lost mid-command.
 */
export function sendAdminCommand(socketPath: string, request: CommandRequest, io: CommandIO): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const connection = net.connect(socketPath);
    connection.setEncoding("utf8");
    let connected = false;
    let exit: number | undefined;
    let failure: Error | undefined;
    let buffer = "";

    connection.on("connect", () => {
      connected = true;
      connection.write(JSON.stringify(request) + "\n");
    });
    connection.on("data", (chunk: string) => {
      buffer += chunk;
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(line) as Record<string, unknown>;
        } catch {
          failure = new Error("The server sent a malformed answer on the admin socket.");
          connection.destroy();
          return;
        }
        if (typeof message.out === "string") io.out(message.out);
        else if (typeof message.err === "string") io.err(message.err);
        else if (typeof message.exit === "number") exit = message.exit;
      }
    });
    connection.on("error", (error: NodeJS.ErrnoException) => {
      failure ??= connected
        ? new Error(`Lost the connection to the server (${error.message}); the command may or may not have been applied.`)
        : new AdminSocketUnavailableError(error.message, error.code);
    });
    connection.on("close", () => {
      if (exit !== undefined) resolve(exit);
      else reject(failure ?? new Error("The server closed the admin connection before the command finished; it may or may not have been applied."));
    });
  });
}
