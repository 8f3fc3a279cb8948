/**
 * The expand/contract rule of db/migrations, checked (docs/operations.md, "Upgrades").
 *
 * During a rolling upgrade the release being replaced keeps serving on the migrated schema, so a
 * migration may only *expand* it: new tables, nullable columns or columns with a constant default,
 * indexes (built CONCURRENTLY on any table but the small configuration ones), constraints added
 * NOT VALID and validated later. *Contracting* (dropping or renaming a table, column, index or
 * constraint, changing a column's type, making an existing column NOT NULL or dropping its default)
 * waits for a later release than the one that stopped depending on it, and says so in a comment
 * above the statement, which this check verifies against the drizzle schema (db/schema):
 *
 *   -- contract: users.nickname unused since 0023_profile_names     (dropped, renamed, retyped, truncated)
 *   -- contract: table legacy_tokens unused since 0023
 *   -- contract: index users_nickname_idx unused since 0023          (also: constraint <name>)
 *   -- contract: users.locale always set since 0023                  (SET NOT NULL, DROP DEFAULT)
 *
 * "unused": db/schema no longer declares it; "always set": db/schema declares the column (NOT NULL
 * for SET NOT NULL, without a default for DROP DEFAULT). The migration named must come before this
 * one: the release that shipped it stopped using the column, so no running version still does.
 *
 * Migrations up to GRANDFATHERED_THROUGH shipped before the rule and are not held to it. What the
 * migration runner needs (db/migrator.ts) is checked in every migration: a migration that runs
 * outside a transaction (first line `-- latchkey:no-transaction`) holds only
 * `CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT EXISTS` and `DROP INDEX CONCURRENTLY IF EXISTS`
 * (each safe to run again after a crash), one per breakpoint, and CONCURRENTLY appears nowhere
 * else.
 *
 *   npx tsx scripts/check-migrations.ts            (npm run db:check; tests/migrations runs it too)
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isNoTransaction, NO_TRANSACTION_MARKER, STATEMENT_BREAKPOINT } from "../db/migrator";

/** Journal index of the last migration that shipped before the rule (0020_workspace_hostnames). */
export const GRANDFATHERED_THROUGH = 20;

/**
 * Configuration tables: a handful of rows per workspace, so a plain CREATE INDEX on them holds
 * writes for milliseconds. Every other table (users, sessions, grants, tokens, audit events, and
 * any table added later) counts as large: an index on it is built CONCURRENTLY.
 */
export const SMALL_TABLES = new Set([
  "workspaces",
  "workspace_logos",
  "workspace_hostnames",
  "clients",
  "client_secrets",
  "client_social_providers",
  "apis",
  "api_grants",
  "roles",
  "role_permissions",
  "organizations",
  "organization_domains",
  "enterprise_connections",
  "social_providers",
  "signing_keys",
  "service_settings",
  "operator_memberships",
  "operator_invitations",
]);

export interface Problem {
  /** The migration's file name. */
  file: string;
  line: number;
  /** The statement, shortened. */
  statement: string;
  message: string;
}

export interface CheckOptions {
  folder: string;
  /** The drizzle schema's folder (db/schema). */
  schemaDir: string;
  grandfatheredThrough?: number;
}

// ---------------------------------------------------------------------------------------------
// Statements

export interface Statement {
  /** Without comments, whitespace collapsed. */
  text: string;
  /** Comments above and inside the statement (since the previous one ended), without `--`. */
  comments: string[];
  /** Line of its first word in the file. */
  line: number;
}

/** Splits SQL into statements at `;` and drizzle-kit's breakpoints, outside strings, identifiers and comments. */
export function splitStatements(sql: string): Statement[] {
  const statements: Statement[] = [];
  let text = "";
  let comments: string[] = [];
  let line = 1;
  let first = 0;
  const end = () => {
    const collapsed = text.replace(/\s+/g, " ").trim();
    if (collapsed) statements.push({ text: collapsed, comments, line: first });
    if (collapsed) comments = [];
    text = "";
    first = 0;
  };
  for (let i = 0; i < sql.length; ) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === "-" && next === "-") {
      const stop = sql.indexOf("\n", i);
      const comment = sql.slice(i + 2, stop === -1 ? sql.length : stop);
      if (comment.startsWith("> statement-breakpoint")) end();
      else comments.push(comment.trim());
      i = stop === -1 ? sql.length : stop;
      text += " ";
      continue;
    }
    if (c === "/" && next === "*") {
      const stop = sql.indexOf("*/", i + 2);
      const comment = sql.slice(i + 2, stop === -1 ? sql.length : stop);
      line += comment.split("\n").length - 1;
      comments.push(comment.trim());
      i = stop === -1 ? sql.length : stop + 2;
      text += " ";
      continue;
    }
    if (c === ";") {
      end();
      i++;
      continue;
    }
    let token = c;
    if (c === "'" || c === '"') {
      let j = i + 1;
      for (;;) {
        const k = sql.indexOf(c, j);
        if (k === -1) {
          j = sql.length;
          break;
        }
        if (sql[k + 1] === c) j = k + 2;
        else {
          j = k + 1;
          break;
        }
      }
      token = sql.slice(i, j);
    } else if (c === "$") {
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (tag) {
        const stop = sql.indexOf(tag[0], i + tag[0].length);
        token = sql.slice(i, stop === -1 ? sql.length : stop + tag[0].length);
      }
    }
    if (!first && /\S/.test(token)) first = line;
    line += token.split("\n").length - 1;
    text += token;
    i += token.length;
  }
  end();
  return statements;
}

const IDENT = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)`;
const QUALIFIED = String.raw`${IDENT}(?:\s*\.\s*${IDENT})?`;

/** The last part of a possibly schema-qualified name, unquoted ("public"."users" → users). */
export function nameOf(written: string): string {
  const parts = written.match(new RegExp(IDENT, "g")) ?? [written];
  const last = parts.at(-1)!;
  return last.startsWith('"') ? last.slice(1, -1).replace(/""/g, '"') : last.toLowerCase();
}

/** Splits at commas outside parentheses and quotes (and, for TypeScript, type arguments' angle brackets). */
function topLevelParts(text: string, angles = false): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  let quote: string | null = null;
  for (const c of text) {
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "(" || (angles && c === "<")) depth++;
    else if (c === ")" || (angles && c === ">" && !current.endsWith("="))) depth--;
    else if (c === "," && depth === 0) {
      parts.push(current.trim());
      current = "";
      continue;
    }
    current += c;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

// ---------------------------------------------------------------------------------------------
// The drizzle schema, as written

export interface SchemaColumn {
  name: string;
  /** The column's declaration (`text("x").notNull().default(…)`). */
  declaration: string;
  notNull: boolean;
  hasDefault: boolean;
}

export interface Schema {
  tables: Map<string, Map<string, SchemaColumn>>;
  /** Every string literal of the schema's files: index and constraint names are among them. */
  strings: Set<string>;
}

/** Reads the pgTable declarations of db/schema: each table's columns, with NOT NULL and default as declared. */
export function readSchema(schemaDir: string): Schema {
  const tables = new Map<string, Map<string, SchemaColumn>>();
  const strings = new Set<string>();
  for (const file of readdirSync(schemaDir).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))) {
    const source = readFileSync(path.join(schemaDir, file), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/[^\n]*/g, "");
    for (const m of source.matchAll(/"([^"\\]*)"/g)) strings.add(m[1]!);
    for (const m of source.matchAll(/pgTable\(\s*"([^"]+)"\s*,\s*\{/g)) {
      const open = m.index + m[0].length - 1;
      const body = source.slice(open + 1, matching(source, open));
      const columns = new Map<string, SchemaColumn>();
      for (const entry of topLevelParts(body.replace(/\{/g, "(").replace(/\}/g, ")"), true)) {
        const column = /^(\w+)\s*:\s*[\w.]+\(\s*(?:"([^"]+)")?/.exec(entry);
        if (!column) continue;
        const name = column[2] ?? column[1]!;
        columns.set(name, {
          name,
          declaration: entry,
          notNull: /\.notNull\(\)|\.primaryKey\(\)/.test(entry),
          hasDefault: /\.default(?:Now|Random)?\(/.test(entry),
        });
      }
      tables.set(m[1]!, columns);
    }
  }
  return { tables, strings };
}

/** Index of the brace closing the one at `open`, outside strings. */
function matching(source: string, open: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = open; i < source.length; i++) {
    const c = source[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return source.length;
}

// ---------------------------------------------------------------------------------------------
// The rule

interface Migration {
  idx: number;
  tag: string;
  file: string;
  noTransaction: boolean;
  statements: Statement[];
  /** A no-transaction migration's second statement in a chunk that holds several. */
  crowded?: Statement;
}

type Need = "unused" | "always set";
type Target = { kind: "column"; table: string; column: string } | { kind: "table" | "index" | "constraint"; name: string };

interface Contract {
  target: Target;
  need: Need;
  /** What the statement does, for the message. */
  what: string;
  /** For "always set": which declaration the schema must have. */
  declared?: "not null" | "no default";
}

function describe(target: Target): string {
  return target.kind === "column" ? `column ${target.table}.${target.column}` : `${target.kind} ${target.name}`;
}

const MARKER = /^contract:\s*(?:(table|index|constraint)\s+)?("?[\w$]+"?(?:\s*\.\s*"?[\w$]+"?)?)\s+(unused|always set)\s+since\s+(?:migration\s+)?(\d{4}\w*)/i;

interface Marker {
  target: Target;
  need: Need;
  since: string;
}

function parseMarker(comment: string): Marker | null {
  const m = MARKER.exec(comment.trim());
  if (!m) return null;
  const parts = m[2]!.split(".").map((part) => nameOf(part.trim()));
  const kind = m[1]?.toLowerCase() as "table" | "index" | "constraint" | undefined;
  const target: Target = kind ? { kind, name: parts.at(-1)! } : parts.length === 2 ? { kind: "column", table: parts[0]!, column: parts[1]! } : { kind: "table", name: parts[0]! };
  return { target, need: m[3]!.toLowerCase() as Need, since: m[4]! };
}

function sameTarget(a: Target, b: Target): boolean {
  if (a.kind === "column" || b.kind === "column") return a.kind === "column" && b.kind === "column" && a.table === b.table && a.column === b.column;
  return a.kind === b.kind && a.name === b.name;
}

const VOLATILE_DEFAULT = /\bdefault\b[^,]*\b(gen_random_uuid|uuid_generate_v\d\w*|random|clock_timestamp|timeofday|nextval|txid_current)\s*\(/i;

/** Checks the migrations of `folder`; no problems means the folder follows the rule. */
export function checkMigrations(options: CheckOptions): Problem[] {
  const grandfathered = options.grandfatheredThrough ?? GRANDFATHERED_THROUGH;
  const journal = JSON.parse(readFileSync(path.join(options.folder, "meta", "_journal.json"), "utf8")) as { entries: { idx: number; tag: string }[] };
  const migrations: Migration[] = journal.entries.map((entry) => {
    const text = readFileSync(path.join(options.folder, `${entry.tag}.sql`), "utf8");
    const noTransaction = isNoTransaction(text);
    // Outside a transaction each breakpoint's chunk is sent as it is, and PostgreSQL runs several
    // statements sent together in one transaction: one statement per chunk.
    const crowded = noTransaction ? text.split(STATEMENT_BREAKPOINT).map((chunk) => splitStatements(chunk)).find((chunk) => chunk.length > 1) : undefined;
    return { idx: entry.idx, tag: entry.tag, file: `${entry.tag}.sql`, noTransaction, statements: splitStatements(text), crowded: crowded?.[1] };
  });
  const schema = readSchema(options.schemaDir);
  const problems: Problem[] = [];
  /** Each index's table, as created by the migrations so far. */
  const indexTable = new Map<string, string>();

  for (const migration of migrations) {
    if (migration.crowded) {
      const { line, text } = migration.crowded;
      problems.push({ file: migration.file, line, statement: text, message: `separate the statements of a migration that runs outside a transaction with ${STATEMENT_BREAKPOINT}: statements sent together run in one transaction` });
    }
    const checked = migration.idx > grandfathered;
    const newTables = new Set<string>();
    const newColumns = new Set<string>();
    for (const statement of migration.statements) {
      const problem = (message: string) =>
        problems.push({ file: migration.file, line: statement.line, statement: statement.text.length > 120 ? `${statement.text.slice(0, 117)}…` : statement.text, message });
      const s = statement.text;
      const concurrently = /^(create\s+(unique\s+)?index|drop\s+index)\s+concurrently\b/i.test(s);

      // What the runner needs, whatever the migration's age.
      if (migration.noTransaction) {
        if (!/^create\s+(unique\s+)?index\s+concurrently\s+if\s+not\s+exists\s/i.test(s) && !/^drop\s+index\s+concurrently\s+if\s+exists\s/i.test(s)) {
          problem(
            `a migration that runs outside a transaction (${NO_TRANSACTION_MARKER}) may hold only CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT EXISTS and DROP INDEX CONCURRENTLY IF EXISTS, so that running it again after a crash is safe: move this statement to a migration of its own`,
          );
        }
      } else if (concurrently) {
        problem(`CONCURRENTLY cannot run inside a transaction: put this statement in a migration of its own whose first line is ${NO_TRANSACTION_MARKER}`);
      }

      const contracts: Contract[] = [];
      let m: RegExpExecArray | null;
      if ((m = new RegExp(String.raw`^create\s+(?:unlogged\s+)?table\s+(?:if\s+not\s+exists\s+)?(${QUALIFIED})`, "i").exec(s))) {
        newTables.add(nameOf(m[1]!));
      } else if ((m = new RegExp(String.raw`^create\s+(unique\s+)?index\s+(concurrently\s+)?(?:if\s+not\s+exists\s+)?(${QUALIFIED})\s+on\s+(?:only\s+)?(${QUALIFIED})`, "i").exec(s))) {
        const table = nameOf(m[4]!);
        indexTable.set(nameOf(m[3]!), table);
        if (checked && !m[2] && !newTables.has(table) && !SMALL_TABLES.has(table)) {
          problem(
            `a plain CREATE INDEX on ${table} blocks its writes for as long as the build takes: write CREATE INDEX CONCURRENTLY IF NOT EXISTS, in a migration of its own whose first line is ${NO_TRANSACTION_MARKER}`,
          );
        }
      } else if ((m = new RegExp(String.raw`^drop\s+index\s+(concurrently\s+)?(?:if\s+exists\s+)?(.+?)(?:\s+(?:cascade|restrict))?$`, "i").exec(s))) {
        for (const written of topLevelParts(m[2]!)) {
          const index = nameOf(written);
          const table = indexTable.get(index);
          contracts.push({ target: { kind: "index", name: index }, need: "unused", what: "drops" });
          if (checked && !m[1] && table && !SMALL_TABLES.has(table)) problem(`DROP INDEX on ${table} waits for, then blocks, every query of the table: write DROP INDEX CONCURRENTLY IF EXISTS, in a migration of its own whose first line is ${NO_TRANSACTION_MARKER}`);
        }
      } else if ((m = /^drop\s+table\s+(?:if\s+exists\s+)?(.+?)(?:\s+(?:cascade|restrict))?$/i.exec(s))) {
        for (const written of topLevelParts(m[1]!)) contracts.push({ target: { kind: "table", name: nameOf(written) }, need: "unused", what: "drops" });
      } else if ((m = /^truncate\s+(?:table\s+)?(?:only\s+)?(.+?)(?:\s+(?:restart|continue)\s+identity)?(?:\s+(?:cascade|restrict))?$/i.exec(s))) {
        for (const written of topLevelParts(m[1]!)) contracts.push({ target: { kind: "table", name: nameOf(written) }, need: "unused", what: "empties" });
      } else if ((m = /^drop\s+(type|schema|sequence|view|materialized\s+view|function|procedure|trigger|extension|domain)\s+(?:if\s+exists\s+)?(\S+)/i.exec(s))) {
        if (checked) problem(`DROP ${m[1]!.toUpperCase()} removes what the running release may still use: drop it in a later release, once no version uses it, and say so above it (-- contract: table <name> unused since <migration>)`);
      } else if ((m = /^(cluster|vacuum\s+full)\b/i.exec(s))) {
        if (checked) problem(`${m[1]!.toUpperCase()} rewrites the table under an exclusive lock: not in a migration`);
      } else if ((m = new RegExp(String.raw`^alter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?(${QUALIFIED})\s+(.*)$`, "i").exec(s))) {
        const table = nameOf(m[1]!);
        const isNew = newTables.has(table);
        for (const action of topLevelParts(m[2]!)) {
          let a: RegExpExecArray | null;
          if ((a = /^rename\s+to\s+/i.exec(action))) {
            contracts.push({ target: { kind: "table", name: table }, need: "unused", what: "renames" });
          } else if ((a = new RegExp(String.raw`^rename\s+constraint\s+(${IDENT})`, "i").exec(action))) {
            contracts.push({ target: { kind: "constraint", name: nameOf(a[1]!) }, need: "unused", what: "renames" });
          } else if ((a = new RegExp(String.raw`^rename\s+(?:column\s+)?(${IDENT})\s+to\s`, "i").exec(action))) {
            contracts.push({ target: { kind: "column", table, column: nameOf(a[1]!) }, need: "unused", what: "renames" });
          } else if ((a = new RegExp(String.raw`^drop\s+constraint\s+(?:if\s+exists\s+)?(${IDENT})`, "i").exec(action))) {
            contracts.push({ target: { kind: "constraint", name: nameOf(a[1]!) }, need: "unused", what: "drops" });
          } else if ((a = new RegExp(String.raw`^drop\s+(?:column\s+)?(?:if\s+exists\s+)?(${IDENT})`, "i").exec(action))) {
            contracts.push({ target: { kind: "column", table, column: nameOf(a[1]!) }, need: "unused", what: "drops" });
          } else if ((a = new RegExp(String.raw`^alter\s+(?:column\s+)?(${IDENT})\s+(?:set\s+data\s+)?type\s`, "i").exec(action))) {
            contracts.push({ target: { kind: "column", table, column: nameOf(a[1]!) }, need: "unused", what: "changes the type of" });
          } else if ((a = new RegExp(String.raw`^alter\s+(?:column\s+)?(${IDENT})\s+set\s+not\s+null`, "i").exec(action))) {
            const column = nameOf(a[1]!);
            if (!isNew && !newColumns.has(`${table}.${column}`)) contracts.push({ target: { kind: "column", table, column }, need: "always set", what: "makes NOT NULL", declared: "not null" });
          } else if ((a = new RegExp(String.raw`^alter\s+(?:column\s+)?(${IDENT})\s+drop\s+default`, "i").exec(action))) {
            const column = nameOf(a[1]!);
            if (!isNew && !newColumns.has(`${table}.${column}`)) contracts.push({ target: { kind: "column", table, column }, need: "always set", what: "drops the default of", declared: "no default" });
          } else if ((a = new RegExp(String.raw`^add\s+(?:column\s+)?(?:if\s+not\s+exists\s+)?(${IDENT})\s+(.*)$`, "i").exec(action)) && !/^add\s+(constraint|primary\s+key|unique|check|foreign\s+key|exclude)\b/i.test(action)) {
            const column = nameOf(a[1]!);
            newColumns.add(`${table}.${column}`);
            const definition = a[2]!;
            if (!checked || isNew) continue;
            if (/\bnot\s+null\b/i.test(definition) && !/\bdefault\b/i.test(definition)) {
              problem(`adds ${table}.${column} NOT NULL without a default: the running release inserts rows without it. Add it nullable (or with a default), write it from this release on, and make it NOT NULL in a later one`);
            } else if (VOLATILE_DEFAULT.test(definition)) {
              problem(`adds ${table}.${column} with a volatile default, which rewrites the whole table under an exclusive lock: add it nullable, fill it in batches, then set the default`);
            } else if (/\b(primary\s+key|unique)\b/i.test(definition)) {
              problem(`adds ${table}.${column} with an index built while the table is locked: add the column, then CREATE UNIQUE INDEX CONCURRENTLY in a migration of its own`);
            } else if (/\bgenerated\s+always\s+as\s*\(.*\)\s*stored\b/i.test(definition)) {
              problem(`adds the stored generated column ${table}.${column}, which rewrites the whole table under an exclusive lock`);
            }
          } else if ((a = /^add\s+(?:constraint\s+\S+\s+)?(foreign\s+key|check|unique|primary\s+key|exclude)\b/i.exec(action))) {
            if (!checked || isNew) continue;
            const kind = a[1]!.toLowerCase().replace(/\s+/g, " ");
            if ((kind === "foreign key" || kind === "check") && !/\bnot\s+valid\b/i.test(action)) {
              problem(`adds a ${kind.toUpperCase()} constraint to ${table}, which checks every row while holding the table: add it NOT VALID here and VALIDATE CONSTRAINT in a later migration`);
            } else if ((kind === "unique" || kind === "primary key") && !/\busing\s+index\b/i.test(action)) {
              problem(`adds a ${kind.toUpperCase()} constraint to ${table}, which builds its index while holding the table: CREATE UNIQUE INDEX CONCURRENTLY first (a migration of its own), then ADD CONSTRAINT … USING INDEX`);
            } else if (kind === "exclude") {
              problem(`adds an EXCLUDE constraint to ${table}, which builds its index while holding the table`);
            }
          } else if (/^set\s+(logged|unlogged|tablespace)\b/i.test(action)) {
            if (checked && !isNew) problem(`${action.split(/\s+/).slice(0, 2).join(" ").toUpperCase()} rewrites ${table} under an exclusive lock`);
          }
        }
      }

      if (!checked) continue;
      const markers = statement.comments.map(parseMarker).filter((x): x is Marker => x !== null);
      for (const contract of contracts) {
        const marker = markers.find((candidate) => sameTarget(candidate.target, contract.target) && candidate.need === contract.need);
        const target = describe(contract.target);
        if (!marker) {
          const example = contract.target.kind === "column" ? `${contract.target.table}.${contract.target.column}` : `${contract.target.kind} ${contract.target.name}`;
          problem(
            contract.need === "unused"
              ? `${contract.what} ${target}, which the release being replaced may still use. Stop using it in one release; drop it in a later one, saying above the statement: -- contract: ${example} unused since <the last migration of the release that stopped using it>`
              : `${contract.what} ${target}: the release being replaced may still write rows without it. Write it in every insert in one release; then, in a later one, say above the statement: -- contract: ${example} always set since <the last migration of that release>`,
          );
          continue;
        }
        const since = migrations.find((candidate) => candidate.tag === marker.since || candidate.tag.startsWith(`${marker.since}_`));
        if (!since) {
          problem(`the contract comment names migration ${marker.since}, which is not in the journal`);
          continue;
        }
        if (since.idx >= migration.idx) {
          problem(`the contract comment names ${since.tag}, which is not earlier than this migration: a ${target} cannot be dropped, renamed or tightened in the release that stops using it`);
          continue;
        }
        const found = where(schema, contract.target);
        if (contract.need === "unused" && found !== null) problem(`the contract comment says ${target} is unused, but db/schema still declares it (${found})`);
        if (contract.need === "always set") {
          const column = contract.target.kind === "column" ? schema.tables.get(contract.target.table)?.get(contract.target.column) : undefined;
          if (!column) problem(`the contract comment says ${target} is always set, but db/schema does not declare it`);
          else if (contract.declared === "not null" && !column.notNull) problem(`makes ${target} NOT NULL, but db/schema declares it nullable`);
          else if (contract.declared === "no default" && column.hasDefault) problem(`drops the default of ${target}, but db/schema still declares one`);
        }
      }
    }
  }
  return problems;
}

/** Where db/schema declares the target, or null. */
function where(schema: Schema, target: Target): string | null {
  if (target.kind === "column") return schema.tables.get(target.table)?.has(target.column) ? `a column of pgTable("${target.table}")` : null;
  if (target.kind === "table") return schema.tables.has(target.name) ? `pgTable("${target.name}")` : null;
  return schema.strings.has(target.name) ? `"${target.name}"` : null;
}

export function formatProblems(problems: Problem[]): string {
  return problems.map((p) => `${p.file}:${p.line}: ${p.statement}\n  ${p.message}`).join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const folder = path.resolve(process.argv[2] ?? path.join(root, "db", "migrations"));
  const problems = checkMigrations({ folder, schemaDir: path.join(root, "db", "schema") });
  if (problems.length > 0) {
    console.error(`${formatProblems(problems)}\n\n${problems.length} problem${problems.length === 1 ? "" : "s"}: see docs/operations.md, "Upgrades".`);
    process.exit(1);
  }
  console.log(`${path.relative(process.cwd(), folder) || "."}: every migration after ${String(GRANDFATHERED_THROUGH).padStart(4, "0")} expands the schema or contracts what no running release uses.`);
}
