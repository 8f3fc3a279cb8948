/**
 * The latchkey command line: database migrations, workspace files and client secrets.
 * Run with `npm run latchkey -- <command>` or `npx latchkey <command>` (bin/latchkey.mjs).
 * See docs/workspace-file.md.
 *
 * The commands themselves are in lib/cli/commands.ts. This file reads and writes the user's
 * files, then runs the command one of two ways:
 * - directly: open the database, migrate it, run the command;
 * - through the server: when the embedded database is held by a running server, send the command
 *   to the server's admin socket ($DATA_DIR/admin.sock, lib/cli/admin-socket.ts), which runs the
 *   same function against its own open database.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { openDatabase, runMigrations, type DatabaseHandle } from "../db/client";
import { systemClock } from "../lib/clock";
import { inlineLogoFile } from "../lib/workspaces/document/branding";
import { ConfigError, loadConfig, type Config } from "../lib/config";
import {
  AdminSocketUnavailableError,
  adminSocketPath,
  embeddedDatabaseHolder,
  sendAdminCommand,
} from "../lib/cli/admin-socket";
import {
  importFileArgument,
  isHelp,
  parseArgs,
  plan,
  referencedEnvironment,
  runCommand,
  USAGE,
  UsageError,
  type CommandArgs,
  type CommandIO,
  type CommandRequest,
} from "../lib/cli/commands";

/** How long to wait for a starting server's admin socket, or for another command to finish. */
const LOCK_WAIT_MS = 5_000;

/** File arguments are relative to where the user ran the command, not the package root. */
function userPath(file: string): string {
  const base =
    process.env.LATCHKEY_CWD ?? (process.env.npm_lifecycle_event === "latchkey" ? process.env.INIT_CWD : undefined) ?? process.cwd();
  return path.resolve(base, file);
}

async function main(argv: string[]): Promise<number> {
  let args: CommandArgs;
  try {
    args = parseArgs(argv);
    if (isHelp(args)) {
      console.log(USAGE);
      return 0;
    }
    plan(args);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }

  // The file is read here, not where the command runs: the server's working directory and
  // permissions are not the user's.
  const request: CommandRequest = { argv };
  const file = importFileArgument(args);
  if (file !== undefined) {
    try {
      request.stdin = file === "-" ? readFileSync(0, "utf8") : readFileSync(userPath(file), "utf8");
      // A logo given as { "file": … } is read here, relative to the workspace file (or this directory for stdin).
      request.stdin = inlineLogoFile(request.stdin, userPath(file === "-" ? "workspace.json" : file), (logo) => readFileSync(logo));
      // Secrets the file names as { "env": NAME } come from this shell, also when the server runs the import.
      request.env = referencedEnvironment(request.stdin, process.env);
    } catch (error) {
      console.error(`Cannot read ${file}: ${(error as Error).message}`);
      return 1;
    }
  }

  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }

  // `workspace export --out <file>`: the command prints the JSON; it is written here.
  const out = args.flags.get("out");
  const captured: string[] = [];
  const io: CommandIO = {
    out: out === undefined ? (text) => process.stdout.write(text) : (text) => captured.push(text),
    err: (text) => process.stderr.write(text),
  };

  const code = await execute(config, request, io);
  if (code === 0 && out !== undefined) {
    writeFileSync(userPath(out), captured.join(""), { mode: 0o600 });
    console.error(`Wrote workspace "${args.positional[2]}" to ${out}. It contains password hashes: keep it private.`);
  }
  return code;
}

async function execute(config: Config, request: CommandRequest, io: CommandIO): Promise<number> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const holder = config.databaseUrl ? null : embeddedDatabaseHolder(config.dataDir);
    if (holder === null) {
      let handle: DatabaseHandle;
      try {
        handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
      } catch (error) {
        // A server (or another command) took the database between the check and the open.
        if (!config.databaseUrl && embeddedDatabaseHolder(config.dataDir) !== null) continue;
        throw error;
      }
      try {
        await runMigrations(handle, config.databaseUrl, { log: (line) => io.err(`${line}\n`), waitTimeoutMs: config.migrationWaitTimeoutMs });
        return await runCommand(handle.db, config, systemClock, request, io);
      } finally {
        await handle.close();
      }
    }

    const socket = adminSocketPath(config.dataDir);
    if (existsSync(socket)) {
      try {
        return await sendAdminCommand(socket, request, io);
      } catch (error) {
        if (!(error instanceof AdminSocketUnavailableError)) throw error;
        const reason =
          error.code === "EACCES"
            ? `permission denied on ${socket}: run the command as the user that runs the server`
            : `nothing answers on ${socket} (${error.code ?? error.message})`;
        io.err(lockedMessage(config.dataDir, holder, reason));
        return 1;
      }
    }
    // A server that is still starting holds the database before it opens the socket; another
    // latchkey command holds it until it finishes. Either way, wait a little.
    if (Date.now() >= deadline) {
      io.err(lockedMessage(config.dataDir, holder, `it has no admin socket (${socket})`));
      return 1;
    }
    await sleep(100);
  }
}

function lockedMessage(dataDir: string, pid: number, reason: string): string {
  return [
    `The embedded database in ${dataDir} is in use by process ${pid}, and the command cannot be passed to it: ${reason}.`,
    "While the Latchkey server (npm start, npm run dev) runs, it accepts latchkey commands on its admin socket;",
    "any other process holding the database must finish or be stopped first. To let several processes share",
    "one database, set DATABASE_URL to a PostgreSQL server.",
    "",
  ].join("\n");
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`latchkey: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
