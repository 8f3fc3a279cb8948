/**
 * The latchkey commands, as functions over an open database. Both ways of running a command use
 * this module: cli/latchkey.ts calls it directly when it can open the database itself, and the
 * server's admin socket (admin-socket.ts) calls it for a CLI that found the embedded database
 * held by the server. Nothing here touches the file system or the process: file arguments are
 * read by the CLI and passed in as `stdin`, and all output goes through `io`.
 */
import type { Database } from "../../db/client";
import type { Clock } from "../clock";
import { CodedError } from "../coded-error";
import type { Config } from "../config";
import {
  createClientSecret,
  listClientSecrets,
  revokeClientSecret,
  rotateClientSecret,
  type NewClientSecret,
} from "../clients/secrets";
import { exportWorkspace, importWorkspace, WorkspaceFileError, type ImportResult, type MembershipChange } from "../workspaces/file";
import { isRecord } from "../workspaces/document";
import { secretReferences } from "../workspaces/document/social-providers";
import { setUpstreamSecret, UpstreamSecretError, type UpstreamSecretTarget } from "../workspaces/import/secrets";
import { describeOperatorGrant, grantOperatorRole, OPERATOR_GRANT_USAGE, OperatorGrantError } from "../operators/grant";

export const USAGE = `Usage: latchkey <command> [arguments]

Commands:
  migrate                                      Apply database migrations.
  workspace import <file> [--dry-run] [--prune-members]
                                               Create or update a workspace from a workspace file
                                               ("-" reads standard input). Lists the members of its
                                               organizations that the file does not list: removed when
                                               an import added them, kept when added in the console or
                                               by sign-in (--prune-members removes those too).
                                               --dry-run reports what would change and writes nothing.
  workspace export <workspace> [--out <file>]  Print the workspace file (JSON), or write it to <file>.
  secret create <workspace> <client_id> [--lifetime-days N]
                                               Add a client secret (at most two may be active).
  secret rotate <workspace> <client_id> [--overlap-hours N] [--lifetime-days N]
                                               Issue a new secret and retire the old one: revoked now
                                               (overlap 0, the default) or valid for N more hours (up to 24).
  secret revoke <workspace> <client_id> <secret_id>
                                               Revoke one secret now.
  secret list <workspace> <client_id>          List a client's secrets (never the secrets themselves).
  connection secret <workspace> <organization> <connection>
                                               Set an enterprise connection's client secret, read from
                                               standard input (<organization> is its slug).
  social secret <workspace> <provider>         Set a social provider's client secret (Apple: the private
                                               key, PEM), read from standard input.
${OPERATOR_GRANT_USAGE}  help                                         Show this help.

Run through npm: npm run latchkey -- <command>   (npm run --silent ... to keep npm's banner out of stdout)
Environment: DATABASE_URL, DATA_DIR, MASTER_KEY (see the README).
With the embedded database, commands run inside the server while it is running (docs/workspace-file.md).`;

/** Where a command writes: standard output and standard error, as text. */
export interface CommandIO {
  out(text: string): void;
  err(text: string): void;
}

/** A command line and, for `workspace import` and the secret commands, the input read by the CLI. */
export interface CommandRequest {
  argv: string[];
  stdin?: string;
  /**
   * Values of the environment variables a workspace file refers to (`{ "env": NAME }`), from the
   * CLI's environment; without it, the environment of the process running the command.
   */
  env?: Record<string, string>;
}

export interface CommandArgs {
  positional: string[];
  flags: Map<string, string>;
  /** The content of the file named by `workspace import` (or of standard input for "-"), or a secret. */
  stdin?: string;
  env?: Record<string, string>;
}

export type Command = (db: Database, config: Config, clock: Clock, args: CommandArgs, io: CommandIO) => Promise<number>;

/** A malformed command line: the message is shown as is and the exit status is 2. */
export class UsageError extends Error {}

const VALUE_FLAGS = new Set(["out", "lifetime-days", "overlap-hours"]);
/** Options that take no value. */
const SWITCH_FLAGS = new Set(["dry-run", "prune-members"]);

export function parseArgs(argv: readonly string[]): CommandArgs {
  const positional: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") {
      flags.set("help", "true");
    } else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
      if (SWITCH_FLAGS.has(name)) {
        if (eq >= 0) throw new UsageError(`--${name} takes no value`);
        if (flags.has(name)) throw new UsageError(`--${name} given twice`);
        flags.set(name, "true");
        continue;
      }
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

/** `help`, `--help` or no command at all. */
export function isHelp(args: CommandArgs): boolean {
  return args.positional.length === 0 || args.positional[0] === "help" || args.flags.has("help");
}

/**
 * The file a command reads ("-" for standard input): the file of `workspace import`, standard
 * input for the secret commands (a secret never goes on the command line, where `ps` shows it);
 * undefined for other commands.
 */
export function importFileArgument(args: CommandArgs): string | undefined {
  const [group, action, file] = args.positional;
  if (group === "workspace" && action === "import") return file;
  if ((group === "connection" || group === "social") && action === "secret") return "-";
  return undefined;
}

/**
 * The values, in `env`, of the environment variables a workspace file refers to (`{ "env": NAME }`),
 * for the CLI to send with the file: a command run by the server then reads the user's
 * environment, not the server's. Unset ones are left out (import reports them at their path).
 */
export function referencedEnvironment(fileText: string, env: Record<string, string | undefined>): Record<string, string> {
  let doc: unknown;
  try {
    doc = JSON.parse(fileText);
  } catch {
    return {};
  }
  if (!isRecord(doc)) return {};
  const out: Record<string, string> = {};
  for (const ref of secretReferences(doc)) {
    const value = env[ref.env];
    if (value !== undefined) out[ref.env] = value;
  }
  return out;
}

function integerFlag(args: CommandArgs, name: string, min: number, max: number): number | undefined {
  const raw = args.flags.get(name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

function allowFlags(args: CommandArgs, ...names: string[]): void {
  for (const name of args.flags.keys()) {
    if (!names.includes(name)) throw new UsageError(`--${name} does not apply to this command`);
  }
}

function expectPositional(args: CommandArgs, count: number, shape: string): string[] {
  if (args.positional.length !== count) throw new UsageError(`Usage: latchkey ${shape}`);
  return args.positional;
}

const println = (write: (text: string) => void, text: string) => write(text + "\n");

/**
 * Checks the arguments and returns the command to run. Throws UsageError, so a malformed command
 * line is reported before any database is opened.
 */
export function plan(args: CommandArgs): Command {
  const [group, action] = args.positional;
  if (group === "migrate") {
    expectPositional(args, 1, "migrate");
    allowFlags(args);
    return migrateCommand;
  }
  if (group === "workspace" && action === "import") {
    expectPositional(args, 3, "workspace import <file> [--dry-run] [--prune-members]");
    allowFlags(args, "dry-run", "prune-members");
    return importCommand;
  }
  if (group === "workspace" && action === "export") {
    expectPositional(args, 3, "workspace export <workspace> [--out <file>]");
    allowFlags(args, "out");
    return exportCommand;
  }
  if (group === "secret" && action === "create") {
    expectPositional(args, 4, "secret create <workspace> <client_id> [--lifetime-days N]");
    allowFlags(args, "lifetime-days");
    integerFlag(args, "lifetime-days", 1, 365);
    return secretCreateCommand;
  }
  if (group === "secret" && action === "rotate") {
    expectPositional(args, 4, "secret rotate <workspace> <client_id> [--overlap-hours N] [--lifetime-days N]");
    allowFlags(args, "overlap-hours", "lifetime-days");
    integerFlag(args, "overlap-hours", 0, 24);
    integerFlag(args, "lifetime-days", 1, 365);
    return secretRotateCommand;
  }
  if (group === "secret" && action === "revoke") {
    expectPositional(args, 5, "secret revoke <workspace> <client_id> <secret_id>");
    allowFlags(args);
    return secretRevokeCommand;
  }
  if (group === "secret" && action === "list") {
    expectPositional(args, 4, "secret list <workspace> <client_id>");
    allowFlags(args);
    return secretListCommand;
  }
  if (group === "connection" && action === "secret") {
    expectPositional(args, 5, "connection secret <workspace> <organization> <connection>   (the secret on standard input)");
    allowFlags(args);
    return upstreamSecretCommand;
  }
  if (group === "operator" && action === "grant") {
    expectPositional(args, 5, "operator grant <workspace> <operator-email> <owner|admin|viewer>");
    allowFlags(args);
    return operatorGrantCommand;
  }
  if (group === "social" && action === "secret") {
    expectPositional(args, 4, "social secret <workspace> <provider>   (the secret on standard input)");
    allowFlags(args);
    return upstreamSecretCommand;
  }
  throw new UsageError(group === undefined ? USAGE : `Unknown command "${args.positional.join(" ")}". Run "latchkey help".`);
}

/**
 * Parses, checks and runs one command line against an open, migrated database. Usage errors
 * exit 2, refused secret operations exit 1; anything else unexpected is thrown.
 */
export async function runCommand(db: Database, config: Config, clock: Clock, request: CommandRequest, io: CommandIO): Promise<number> {
  let args: CommandArgs;
  let command: Command;
  try {
    args = { ...parseArgs(request.argv), stdin: request.stdin, env: request.env };
    if (isHelp(args)) {
      println(io.out, USAGE);
      return 0;
    }
    command = plan(args);
  } catch (error) {
    if (error instanceof UsageError) {
      println(io.err, error.message);
      return 2;
    }
    throw error;
  }
  try {
    return await command(db, config, clock, args, io);
  } catch (error) {
    // A rule's refusal (an "operator" coded error: a client secret, an upstream secret, an operator grant): its text, exit 1.
    if (error instanceof CodedError && error.family === "operator") {
      println(io.err, error.message);
      return 1;
    }
    throw error;
  }
}

/** Every way of running a command migrates first (the server does at start), so this only reports. */
const migrateCommand: Command = async (_db, _config, _clock, _args, io) => {
  println(io.out, "The database schema is up to date.");
  return 0;
};

const importCommand: Command = async (db, config, clock, args, io) => {
  const file = args.positional[2];
  const name = file === "-" ? "standard input" : file;
  if (args.stdin === undefined) {
    println(io.err, `No content was given for ${name}.`);
    return 1;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(args.stdin);
  } catch (error) {
    println(io.err, `${name} is not valid JSON: ${(error as Error).message}`);
    return 1;
  }
  try {
    const dryRun = args.flags.has("dry-run");
    const result = await importWorkspace(db, doc, {
      clock,
      masterKey: config.masterKey,
      generateSecrets: true,
      pruneMembers: args.flags.has("prune-members"),
      dryRun,
      ...(args.env ? { env: args.env } : {}),
    });
    const rows = `${result.changes} row${result.changes === 1 ? "" : "s"}`;
    const what = dryRun
      ? result.created
        ? `would be created (${rows})`
        : result.changes === 0
          ? "is already up to date"
          : `would be updated (${rows})`
      : result.created
        ? `created (${rows} written)`
        : result.changes === 0
          ? "already up to date"
          : `updated (${rows} changed)`;
    println(io.out, `${dryRun ? "Dry run, nothing was written: workspace" : "Workspace"} "${result.workspaceId}" ${what}.`);
    printMembers(io, result.members, dryRun);
    for (const generated of result.generatedSecrets ?? []) printSecret(io, generated.clientId, { id: generated.secretId, ...generated });
    return 0;
  } catch (error) {
    if (!(error instanceof WorkspaceFileError)) throw error;
    println(io.err, `${name}: ${error.issues.length} problem${error.issues.length === 1 ? "" : "s"}; nothing was imported.`);
    for (const issue of error.issues) println(io.err, `${issue.path}: ${issue.message}`);
    return 1;
  }
};

const ORIGIN_LABEL: Record<string, string> = { workspace_file: "added by an import", console: "added in the console", sign_in: "joined by signing in" };

/** The members of the file's organizations that the file does not list: what the import removed (or would) and what it kept. */
function printMembers(io: CommandIO, members: ImportResult["members"], dryRun: boolean): void {
  const line = (m: MembershipChange) => `  ${m.organization}: ${m.email} (${ORIGIN_LABEL[m.origin] ?? m.origin})`;
  const count = (n: number) => `${n} member${n === 1 ? "" : "s"}`;
  if (members.removed.length) {
    println(io.out, `${dryRun ? "Would remove" : "Removed"} ${count(members.removed.length)} the file does not list:`);
    for (const m of members.removed) println(io.out, line(m));
  }
  if (members.kept.length) {
    println(io.out, `Kept ${count(members.kept.length)} the file does not list (not added by an import; --prune-members removes them):`);
    for (const m of members.kept) println(io.out, line(m));
  }
}

/** `connection secret` and `social secret`: the secret comes on standard input and is never printed. */
const upstreamSecretCommand: Command = async (db, config, clock, args, io) => {
  const [group, , workspaceId, first, second] = args.positional;
  const target: UpstreamSecretTarget =
    group === "connection" ? { kind: "connection", organizationSlug: first, connectionName: second } : { kind: "social", providerKey: first };
  const result = await setUpstreamSecret(db, { workspaceId, target, secret: args.stdin ?? "", masterKey: config.masterKey, clock });
  println(io.out, `Secret of ${result.description} set (stored encrypted).`);
  return 0;
};

const operatorGrantCommand: Command = async (db, config, clock, args, io) => {
  const [, , workspaceId, email, role] = args.positional;
  const input = { workspaceId, email, role, now: clock.now(), publicUrl: config.publicUrl };
  for (const line of describeOperatorGrant(input, await grantOperatorRole(db, input))) println(io.out, line);
  return 0;
};

/** Writes the JSON to standard output; `--out` is the CLI's business (it writes the file locally). */
const exportCommand: Command = async (db, _config, _clock, args, io) => {
  const workspaceId = args.positional[2];
  const doc = await exportWorkspace(db, workspaceId);
  if (!doc) {
    println(io.err, `No workspace "${workspaceId}".`);
    return 1;
  }
  io.out(JSON.stringify(doc, null, 2) + "\n");
  return 0;
};

const secretCreateCommand: Command = async (db, _config, clock, args, io) => {
  const [, , workspaceId, clientId] = args.positional;
  const lifetimeDays = integerFlag(args, "lifetime-days", 1, 365);
  const secret = await createClientSecret(db, { workspaceId, clientId, lifetimeDays, clock });
  printSecret(io, clientId, secret);
  return 0;
};

const secretRotateCommand: Command = async (db, _config, clock, args, io) => {
  const [, , workspaceId, clientId] = args.positional;
  const overlapHours = integerFlag(args, "overlap-hours", 0, 24) ?? 0;
  const lifetimeDays = integerFlag(args, "lifetime-days", 1, 365);
  const result = await rotateClientSecret(db, { workspaceId, clientId, overlapHours, lifetimeDays, clock });
  for (const old of result.previous) {
    println(
      io.out,
      old.status === "revoked" ? `Revoked secret ${old.id}.` : `Secret ${old.id} stays valid until ${old.expiresAt.toISOString()}.`,
    );
  }
  printSecret(io, clientId, result);
  return 0;
};

const secretRevokeCommand: Command = async (db, _config, clock, args, io) => {
  const [, , workspaceId, clientId, secretId] = args.positional;
  const info = await revokeClientSecret(db, { workspaceId, clientId, secretId, clock });
  println(io.out, `Secret ${info.id} of ${clientId} is revoked (at ${info.revokedAt?.toISOString()}).`);
  return 0;
};

const secretListCommand: Command = async (db, _config, clock, args, io) => {
  const [, , workspaceId, clientId] = args.positional;
  const list = await listClientSecrets(db, { workspaceId, clientId, clock });
  if (list.length === 0) {
    println(io.out, `Client ${clientId} has no secrets. Create one with: latchkey secret create ${workspaceId} ${clientId}`);
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
  printTable(io, ["ID", "STATUS", "CREATED", "EXPIRES", "REVOKED", "LAST USED"], rows);
  return 0;
};

function printSecret(io: CommandIO, clientId: string, secret: NewClientSecret): void {
  println(io.out, `New secret for client ${clientId}:`);
  println(io.out, `  secret_id:  ${secret.id}`);
  println(io.out, `  expires_at: ${secret.expiresAt.toISOString()}`);
  println(io.out, `  secret:     ${secret.secret}`);
  println(io.err, "This secret is shown only once and cannot be shown again: store it now.");
}

function printTable(io: CommandIO, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  println(io.out, line(header));
  for (const row of rows) println(io.out, line(row));
}
