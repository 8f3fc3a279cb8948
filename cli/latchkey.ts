/**
 * The latchkey command line: database migrations, workspace files and client secrets.
 * Run with `npm run latchkey -- <command>` or `npx latchkey <command>` (bin/latchkey.mjs).
 * Every command except `help` migrates the database first. See docs/workspace-file.md.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { openDatabase, runMigrations, type DatabaseHandle } from "../db/client";
import { systemClock } from "../lib/clock";
import { ConfigError, loadConfig, type Config } from "../lib/config";
import {
  ClientSecretError,
  createClientSecret,
  listClientSecrets,
  revokeClientSecret,
  rotateClientSecret,
  type NewClientSecret,
} from "../lib/clients/secrets";
import { exportWorkspace, importWorkspace, WorkspaceFileError } from "../lib/workspaces/file";

const USAGE = `Usage: latchkey <command> [arguments]

Commands:
  migrate                                      Apply database migrations.
  workspace import <file>                      Create or update a workspace from a workspace file
                                               ("-" reads standard input).
  workspace export <workspace> [--out <file>]  Print the workspace file (JSON), or write it to <file>.
  secret create <workspace> <client_id> [--lifetime-days N]
                                               Add a client secret (at most two may be active).
  secret rotate <workspace> <client_id> [--overlap-hours N] [--lifetime-days N]
                                               Issue a new secret and retire the old one: revoked now
                                               (overlap 0, the default) or valid for N more hours (up to 24).
  secret revoke <workspace> <client_id> <secret_id>
                                               Revoke one secret now.
  secret list <workspace> <client_id>          List a client's secrets (never the secrets themselves).
  help                                         Show this help.

Run through npm: npm run latchkey -- <command>   (npm run --silent ... to keep npm's banner out of stdout)
Environment: DATABASE_URL, DATA_DIR, MASTER_KEY (see the README).`;

class UsageError extends Error {}

interface Args {
  positional: string[];
  flags: Map<string, string>;
}

const VALUE_FLAGS = new Set(["out", "lifetime-days", "overlap-hours"]);

function parseArgs(argv: string[]): Args {
  const positional: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") {
      flags.set("help", "true");
    } else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
      if (!VALUE_FLAGS.has(name)) throw new UsageError(`Unknown option --${name}`);
      const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined || value === "") throw new UsageError(`--${name} needs a value`);
      if (flags.has(name)) throw new UsageError(`--${name} given twice`);
      flags.set(name, value);
    } else {
      positional.push(arg);
    }
  }
  return { positional, flags };
}

function integerFlag(args: Args, name: string, min: number, max: number): number | undefined {
  const raw = args.flags.get(name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

function allowFlags(args: Args, ...names: string[]): void {
  for (const name of args.flags.keys()) {
    if (!names.includes(name)) throw new UsageError(`--${name} does not apply to this command`);
  }
}

function expectPositional(args: Args, count: number, shape: string): string[] {
  if (args.positional.length !== count) throw new UsageError(`Usage: latchkey ${shape}`);
  return args.positional;
}

/** File arguments are relative to where the user ran the command, not the package root. */
function userPath(file: string): string {
  const base =
    process.env.LATCHKEY_CWD ?? (process.env.npm_lifecycle_event === "latchkey" ? process.env.INIT_CWD : undefined) ?? process.cwd();
  return path.resolve(base, file);
}

type Command = (handle: DatabaseHandle, config: Config) => Promise<number>;

/** Checks the arguments and returns the command to run against the database. */
function plan(args: Args): Command {
  const [group, action] = args.positional;
  if (group === "migrate") {
    expectPositional(args, 1, "migrate");
    allowFlags(args);
    return async () => {
      console.log("The database schema is up to date.");
      return 0;
    };
  }
  if (group === "workspace" && action === "import") {
    const [, , file] = expectPositional(args, 3, "workspace import <file>");
    allowFlags(args);
    return (handle, config) => importCommand(handle, config, file);
  }
  if (group === "workspace" && action === "export") {
    const [, , workspaceId] = expectPositional(args, 3, "workspace export <workspace> [--out <file>]");
    allowFlags(args, "out");
    const out = args.flags.get("out");
    return async (handle) => {
      const doc = await exportWorkspace(handle.db, workspaceId);
      if (!doc) {
        console.error(`No workspace "${workspaceId}".`);
        return 1;
      }
      const json = JSON.stringify(doc, null, 2) + "\n";
      if (out === undefined) {
        process.stdout.write(json);
      } else {
        writeFileSync(userPath(out), json, { mode: 0o600 });
        console.error(`Wrote workspace "${workspaceId}" to ${out}. It contains password hashes: keep it private.`);
      }
      return 0;
    };
  }
  if (group === "secret" && action === "create") {
    const [, , workspaceId, clientId] = expectPositional(args, 4, "secret create <workspace> <client_id> [--lifetime-days N]");
    allowFlags(args, "lifetime-days");
    const lifetimeDays = integerFlag(args, "lifetime-days", 1, 365);
    return async (handle) => {
      const secret = await createClientSecret(handle.db, { workspaceId, clientId, lifetimeDays, clock: systemClock });
      printSecret(clientId, secret);
      return 0;
    };
  }
  if (group === "secret" && action === "rotate") {
    const [, , workspaceId, clientId] = expectPositional(
      args,
      4,
      "secret rotate <workspace> <client_id> [--overlap-hours N] [--lifetime-days N]",
    );
    allowFlags(args, "overlap-hours", "lifetime-days");
    const overlapHours = integerFlag(args, "overlap-hours", 0, 24) ?? 0;
    const lifetimeDays = integerFlag(args, "lifetime-days", 1, 365);
    return async (handle) => {
      const result = await rotateClientSecret(handle.db, { workspaceId, clientId, overlapHours, lifetimeDays, clock: systemClock });
      for (const old of result.previous) {
        console.log(
          old.status === "revoked"
            ? `Revoked secret ${old.id}.`
            : `Secret ${old.id} stays valid until ${old.expiresAt.toISOString()}.`,
        );
      }
      printSecret(clientId, result);
      return 0;
    };
  }
  if (group === "secret" && action === "revoke") {
    const [, , workspaceId, clientId, secretId] = expectPositional(args, 5, "secret revoke <workspace> <client_id> <secret_id>");
    allowFlags(args);
    return async (handle) => {
      const info = await revokeClientSecret(handle.db, { workspaceId, clientId, secretId, clock: systemClock });
      console.log(`Secret ${info.id} of ${clientId} is revoked (at ${info.revokedAt?.toISOString()}).`);
      return 0;
    };
  }
  if (group === "secret" && action === "list") {
    const [, , workspaceId, clientId] = expectPositional(args, 4, "secret list <workspace> <client_id>");
    allowFlags(args);
    return async (handle) => {
      const list = await listClientSecrets(handle.db, { workspaceId, clientId, clock: systemClock });
      if (list.length === 0) {
        console.log(`Client ${clientId} has no secrets. Create one with: latchkey secret create ${workspaceId} ${clientId}`);
        return 0;
      }
      const rows = list.map((s) => [
        s.id,
        s.status,
        s.createdAt.toISOString(),
        s.expiresAt.toISOString(),
        s.revokedAt?.toISOString() ?? "-",
        s.lastUsedAt?.toISOString() ?? "-",
      ]);
      printTable(["ID", "STATUS", "CREATED", "EXPIRES", "REVOKED", "LAST USED"], rows);
      return 0;
    };
  }
  throw new UsageError(group === undefined ? USAGE : `Unknown command "${args.positional.join(" ")}". Run "latchkey help".`);
}

async function importCommand(handle: DatabaseHandle, config: Config, file: string): Promise<number> {
  let text: string;
  try {
    text = file === "-" ? readFileSync(0, "utf8") : readFileSync(userPath(file), "utf8");
  } catch (error) {
    console.error(`Cannot read ${file}: ${(error as Error).message}`);
    return 1;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    console.error(`${file === "-" ? "standard input" : file} is not valid JSON: ${(error as Error).message}`);
    return 1;
  }
  try {
    const result = await importWorkspace(handle.db, doc, { clock: systemClock, masterKey: config.masterKey, generateSecrets: true });
    const what = result.created
      ? `created (${result.changes} rows written)`
      : result.changes === 0
        ? "already up to date"
        : `updated (${result.changes} rows changed)`;
    console.log(`Workspace "${result.workspaceId}" ${what}.`);
    for (const generated of result.generatedSecrets ?? []) printSecret(generated.clientId, { id: generated.secretId, ...generated });
    return 0;
  } catch (error) {
    if (!(error instanceof WorkspaceFileError)) throw error;
    const name = file === "-" ? "standard input" : file;
    console.error(`${name}: ${error.issues.length} problem${error.issues.length === 1 ? "" : "s"}; nothing was imported.`);
    for (const issue of error.issues) console.error(`${issue.path}: ${issue.message}`);
    return 1;
  }
}

function printSecret(clientId: string, secret: NewClientSecret): void {
  console.log(`New secret for client ${clientId}:`);
  console.log(`  secret_id:  ${secret.id}`);
  console.log(`  expires_at: ${secret.expiresAt.toISOString()}`);
  console.log(`  secret:     ${secret.secret}`);
  console.error("This secret is shown only once and cannot be shown again: store it now.");
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  console.log(line(header));
  for (const row of rows) console.log(line(row));
}

async function main(argv: string[]): Promise<number> {
  let command: Command;
  try {
    const args = parseArgs(argv);
    if (args.positional.length === 0 || args.positional[0] === "help" || args.flags.has("help")) {
      console.log(USAGE);
      return 0;
    }
    command = plan(args);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    throw error;
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

  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    await runMigrations(handle, config.databaseUrl);
    return await command(handle, config);
  } catch (error) {
    if (error instanceof ClientSecretError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  } finally {
    await handle.close();
  }
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
