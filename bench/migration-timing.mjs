#!/usr/bin/env node
// How long each migration takes at production size, and what it blocks while it runs
// (docs/operations.md, "Upgrades"). On a scratch PostgreSQL database:
//
// 1. every migration but the last is applied (the database of the release before this one);
// 2. it is filled to production size with set-based SQL (generate_series): at --scale 1,
//    1 million users, as many hosted sessions and grants, 10 million refresh tokens, 1 million
//    access tokens and handoff launches, 50 million audit events (and smaller tables beside);
// 3. the last migration is applied as `npm start` applies it (runMigrations), timed;
// 4. every earlier statement that touched one of those tables when it was already there is
//    replayed on it and timed: an index build both plain (in a transaction, rolled back) and
//    CONCURRENTLY (dropped and built again: the database ends as it was), a column or constraint
//    added after removing it in a transaction that is rolled back, a data statement in a
//    transaction that is rolled back;
// 5. the database is dropped (unless --keep).
//
//   node --import tsx bench/migration-timing.mjs --scale 0.1          # a tenth: ~10 GB less, minutes
//   node --import tsx bench/migration-timing.mjs --scale 1 --json out.json
//
// The PostgreSQL backends it uses are reniced (15) and run one process per statement
// (max_parallel_maintenance_workers = 0): figures are what one core of this machine does while
// sharing it, an upper bound for a server of its own. BENCH_PG_SERVER: the server
// (default postgres://postgres@127.0.0.1:5432/postgres; superuser: it renices, checkpoints and
// sets session_replication_role while seeding).
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { root } from "./lib/stack.mjs";

const { values: opts } = parseArgs({
  options: {
    scale: { type: "string", default: "0.1" },
    keep: { type: "boolean", default: false },
    json: { type: "string" },
    "skip-replays": { type: "boolean", default: false },
  },
});
const SCALE = Number(opts.scale);
if (!(SCALE > 0 && SCALE <= 2)) throw new Error("--scale must be a number in (0, 2]");
const load = (file) => import(pathToFileURL(path.join(root, file)).href);
const { openDatabase, runMigrations } = await load("db/client.ts");
const { readMigrations } = await load("db/migrator.ts");
const { splitStatements, nameOf } = await load("scripts/check-migrations.ts");

const started = Date.now();
const log = (m) => console.log(`[migration-timing ${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s] ${m}`);
const seconds = (ms) => (ms < 1000 ? `${Math.round(ms)} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`);
const n = (count) => Math.max(1, Math.round(count * SCALE));

const COUNTS = {
  users: n(1_000_000),
  hosted_sessions: n(1_000_000),
  grants: n(1_000_000),
  refresh_tokens: n(10_000_000),
  access_tokens: n(1_000_000),
  authorization_codes: n(100_000),
  authorization_transactions: n(200_000),
  account_security_launches: n(1_000_000),
  organization_members: n(100_000),
  audit_events: n(50_000_000),
};
const WORKSPACES = 10;
const LARGE = new Set(Object.keys(COUNTS));
const IDENT = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)`;

// ----------------------------------------------------------------------------------------------

function machine() {
  const cpu = os.cpus();
  return { cpus: cpu.length, model: cpu[0]?.model.trim(), memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version };
}

/** A copy of db/migrations whose journal stops before entry `count`. */
function previousFolder(count) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "lk-previous-"));
  cpSync(path.join(root, "db", "migrations"), dir, { recursive: true });
  const journal = JSON.parse(readFileSync(path.join(dir, "meta", "_journal.json"), "utf8"));
  journal.entries = journal.entries.slice(0, count);
  writeFileSync(path.join(dir, "meta", "_journal.json"), JSON.stringify(journal));
  return dir;
}

/**
 * Drops the table's indexes (and its primary key when no foreign key needs it) so rows go in
 * fast; the returned function builds them again.
 */
async function withoutIndexes(sql, table) {
  const indexes = await sql.unsafe(
    `select c.relname as name, pg_get_indexdef(i.indexrelid) as def from pg_index i join pg_class c on c.oid = i.indexrelid
      where i.indrelid = '"${table}"'::regclass and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)`,
  );
  const [pk] = await sql.unsafe(
    `select k.conname as name, pg_get_constraintdef(k.oid) as def from pg_constraint k
      where k.conrelid = '"${table}"'::regclass and k.contype = 'p'
        and not exists (select 1 from pg_constraint f where f.contype = 'f' and f.confrelid = k.conrelid)`,
  );
  for (const index of indexes) await sql.unsafe(`drop index "${index.name}"`);
  if (pk) await sql.unsafe(`alter table "${table}" drop constraint "${pk.name}"`);
  return async () => {
    if (pk) await sql.unsafe(`alter table "${table}" add constraint "${pk.name}" ${pk.def}`);
    for (const index of indexes) await sql.unsafe(index.def);
  };
}

function seedStatements() {
  const ws = (i) => `'ws' || (${i} % ${WORKSPACES})`;
  const uuid = (prefix, i) => `md5('${prefix}' || ${i})::uuid::text`;
  const hash = (prefix, i) => `rtrim(translate(encode(sha256(('${prefix}' || ${i})::bytea), 'base64'), '+/', '-_'), '=')`;
  const ago = (i, count, days) => `now() - (${i}::float8 / ${count}) * interval '${days} days'`;
  const C = COUNTS;
  const user = (i) => uuid("u", `((${i} - 1) % ${C.users} + 1)`);
  const sessionOf = (i) => uuid("s", `((${i} - 1) % ${C.hosted_sessions} + 1)`);
  const grantOf = (i) => uuid("g", `((${i} - 1) % ${C.grants} + 1)`);
  const client = (i) => `'c-' || (${i} % ${WORKSPACES})`;
  return [
    [
      "workspaces",
      [
        `insert into workspaces (id, name, created_at, updated_at) select 'ws' || w, 'Workspace ' || w, now(), now() from generate_series(0, ${WORKSPACES - 1}) w`,
        `insert into workspaces (id, name, system, created_at, updated_at) values ('system', 'System', true, now(), now()) on conflict do nothing`,
        `insert into clients (id, workspace_id, client_id, name, type, created_at, updated_at) select 'c-' || w, 'ws' || w, 'web', 'Web', 'confidential', now(), now() from generate_series(0, ${WORKSPACES - 1}) w`,
        `insert into organizations (id, workspace_id, slug, name, created_at, updated_at) select 'o-' || w || '-' || k, 'ws' || w, 'org' || k, 'Org ' || k, now(), now() from generate_series(0, ${WORKSPACES - 1}) w, generate_series(0, 9) k`,
      ],
    ],
    [
      "users",
      [
        `insert into users (id, workspace_id, email, email_normalized, email_verified, name, password_hash, status, created_at, updated_at)
         select ${uuid("u", "i")}, ${ws("i")}, 'User.' || i || '@example.com', 'user.' || i || '@example.com', true, 'User ' || i,
                '$argon2id$v=19$m=19456,t=2,p=1$' || left(${hash("salt", "i")}, 22) || '$' || ${hash("pw", "i")}, 'active', ${ago("i", C.users, 365)}, now()
           from generate_series(1, ${C.users}) i`,
      ],
    ],
    [
      "hosted_sessions",
      [
        // Password sessions without evidence: the worst case of 0005's back-fill.
        `insert into hosted_sessions (id, workspace_id, user_id, secret_hash, evidence, auth_time, amr, acr, created_at, last_seen_at, idle_expires_at, absolute_expires_at, user_agent, ip)
         select ${uuid("s", "i")}, ${ws(`((i - 1) % ${C.users} + 1)`)}, ${user("i")}, ${hash("ss", "i")}, '[]', ${ago("i", C.hosted_sessions, 30)}, '["pwd"]', '1',
                ${ago("i", C.hosted_sessions, 30)}, now(), now() + interval '7 days', now() + interval '30 days',
                'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36', '203.0.' || (i % 256) || '.' || (i % 250)
           from generate_series(1, ${C.hosted_sessions}) i`,
      ],
    ],
    [
      "grants",
      [
        `insert into grants (id, workspace_id, client_pk, user_id, session_id, scope, subject, created_at, last_used_at, idle_expires_at, absolute_expires_at)
         select ${grantOf("i")}, ${ws(`((i - 1) % ${C.users} + 1)`)}, ${client(`((i - 1) % ${C.users} + 1)`)}, ${user("i")}, ${sessionOf("i")}, '["openid","profile","email","offline_access"]',
                ${hash("sub", "i")}, ${ago("i", C.grants, 30)}, now(), now() + interval '7 days', now() + interval '30 days'
           from generate_series(1, ${C.grants}) i`,
      ],
    ],
    [
      "refresh_tokens",
      [
        // Ten per grant: nine superseded, the last current.
        `insert into refresh_tokens (token_hash, workspace_id, grant_id, state, created_at, superseded_at, replaced_by_hash)
         select ${hash("r", "i")}, ${ws(`((i - 1) / 10 % ${C.users} + 1)`)}, ${grantOf("((i - 1) / 10 + 1)")},
                case when i % 10 = 0 then 'current' else 'superseded' end, ${ago("i", C.refresh_tokens, 30)},
                case when i % 10 = 0 then null else now() end, case when i % 10 = 0 then null else ${hash("r", "(i + 1)")} end
           from generate_series(1, ${C.refresh_tokens}) i`,
      ],
    ],
    [
      "access_tokens",
      [
        `insert into access_tokens (token_hash, workspace_id, client_pk, grant_id, user_id, session_id, subject, scope, created_at, expires_at)
         select ${hash("at", "i")}, ${ws(`((i - 1) % ${C.users} + 1)`)}, ${client(`((i - 1) % ${C.users} + 1)`)}, ${grantOf("i")}, ${user("i")}, ${sessionOf("i")}, ${hash("sub", "i")},
                '["openid","profile"]', ${ago("i", C.access_tokens, 1)}, ${ago("i", C.access_tokens, 1)} + interval '5 minutes'
           from generate_series(1, ${C.access_tokens}) i`,
      ],
    ],
    [
      "authorization_codes",
      [
        `insert into authorization_codes (code_hash, workspace_id, client_pk, user_id, session_id, redirect_uri, scope, nonce, code_challenge, created_at, expires_at, grant_id)
         select ${hash("ac", "i")}, ${ws(`((i - 1) % ${C.users} + 1)`)}, ${client(`((i - 1) % ${C.users} + 1)`)}, ${user("i")}, ${sessionOf("i")}, 'https://app.example.com/callback',
                '["openid"]', ${hash("n", "i")}, ${hash("cc", "i")}, ${ago("i", C.authorization_codes, 1)}, ${ago("i", C.authorization_codes, 1)} + interval '60 seconds', ${grantOf("i")}
           from generate_series(1, ${C.authorization_codes}) i`,
      ],
    ],
    [
      "authorization_transactions",
      [
        `insert into authorization_transactions (id, workspace_id, client_pk, redirect_uri, scope, state, nonce, code_challenge, browser_binding_hash, created_at, expires_at, user_id)
         select ${uuid("t", "i")}, ${ws(`((i - 1) % ${C.users} + 1)`)}, ${client(`((i - 1) % ${C.users} + 1)`)}, 'https://app.example.com/callback', '["openid"]', ${hash("st", "i")}, ${hash("n", "i")},
                ${hash("cc", "i")}, ${hash("bb", "i")}, ${ago("i", C.authorization_transactions, 1)}, ${ago("i", C.authorization_transactions, 1)} + interval '10 minutes',
                case when i % 2 = 0 then ${user("i")} end
           from generate_series(1, ${C.authorization_transactions}) i`,
      ],
    ],
    [
      "account_security_launches",
      [
        `insert into account_security_launches (id, workspace_id, client_pk, user_id, session_id, grant_id, state_hash, intent, state, created_at, expires_at, callback_state)
         select ${uuid("l", "i")}, ${ws(`((i - 1) % ${C.users} + 1)`)}, ${client(`((i - 1) % ${C.users} + 1)`)}, ${user("i")}, ${sessionOf("i")}, ${grantOf("i")}, ${hash("ls", "i")}, 'manage', 'expired',
                ${ago("i", C.account_security_launches, 30)}, ${ago("i", C.account_security_launches, 30)} + interval '120 seconds', ${hash("cs", "i")}
           from generate_series(1, ${C.account_security_launches}) i`,
      ],
    ],
    [
      "organization_members",
      [
        `insert into organization_members (id, workspace_id, organization_id, user_id, origin, created_at)
         select ${uuid("m", "i")}, ${ws(`((i - 1) % ${C.users} + 1)`)}, 'o-' || (((i - 1) % ${C.users} + 1) % ${WORKSPACES}) || '-' || (i % 10), ${user("i")}, 'console', now()
           from generate_series(1, ${C.organization_members}) i`,
      ],
    ],
    [
      "audit_events",
      [
        // Sign-ins, token grants and refreshes, sign-outs, with the user as actor and subject.
        `insert into audit_events (id, workspace_id, type, actor, client_id, subject, data, ip, created_at)
         select ${uuid("a", "i")}, ${ws(`((i - 1) % ${C.users} + 1)`)},
                (array['user.signed_in','token.issued','token.refreshed','token.refreshed','token.refreshed','session.ended','token.revoked','user.factor_verified'])[i % 8 + 1],
                ${user("i")}, 'web', ${user("i")}, case when i % 8 = 0 then '{"amr":["pwd"],"method":"password"}'::jsonb else '{}'::jsonb end,
                '203.0.' || (i % 256) || '.' || (i % 250), ${ago(`(${C.audit_events} - i)`, C.audit_events, 90)}
           from generate_series(1, ${C.audit_events}) i`,
      ],
    ],
  ];
}

/**
 * How to replay a statement of an earlier migration on the seeded database, or null when it did
 * not touch a large table that existed before it (a table it created was empty).
 */
function replayOf(text, created, rows) {
  let m;
  if ((m = new RegExp(String.raw`^create\s+table\s+(?:if\s+not\s+exists\s+)?(${IDENT})`, "i").exec(text))) {
    created.add(nameOf(m[1]));
    return null;
  }
  const large = (table) => LARGE.has(table) && !created.has(table) && (rows.get(table) ?? 0) > 0;
  if ((m = new RegExp(String.raw`^create\s+(unique\s+)?index\s+(?:concurrently\s+)?(?:if\s+not\s+exists\s+)?(${IDENT})\s+on\s+(?:only\s+)?(${IDENT})\s+(.*)$`, "i").exec(text))) {
    const [, unique, index, table, rest] = m;
    if (!large(nameOf(table))) return null;
    const plain = `CREATE ${unique ?? ""}INDEX ${index} ON ${table} ${rest}`;
    const concurrent = `CREATE ${unique ?? ""}INDEX CONCURRENTLY ${index} ON ${table} ${rest}`;
    return {
      table: nameOf(table),
      blocks: "writes (SHARE lock) for the whole build; CONCURRENTLY: nothing",
      run: async (sql) => {
        const ms = await inRolledBack(sql, [`DROP INDEX IF EXISTS ${index}`], plain);
        // Concurrently, outside a transaction: the index is dropped and built again.
        await sql.unsafe(`DROP INDEX CONCURRENTLY IF EXISTS ${index}`);
        const began = performance.now();
        await sql.unsafe(concurrent);
        return { ...ms, concurrentlyMs: performance.now() - began };
      },
    };
  }
  if ((m = new RegExp(String.raw`^alter\s+table\s+(${IDENT})\s+add\s+column\s+(${IDENT})\s`, "i").exec(text))) {
    const table = nameOf(m[1]);
    if (!large(table)) return null;
    return {
      table,
      blocks: "everything (ACCESS EXCLUSIVE) for the time shown",
      run: (sql) => inRolledBack(sql, [`ALTER TABLE ${m[1]} DROP COLUMN IF EXISTS ${m[2]} CASCADE`], text),
    };
  }
  if ((m = new RegExp(String.raw`^alter\s+table\s+(${IDENT})\s+add\s+constraint\s+(${IDENT})\s`, "i").exec(text))) {
    const table = nameOf(m[1]);
    if (!large(table)) return null;
    return {
      table,
      blocks: "writes (SHARE ROW EXCLUSIVE) while every row is checked",
      run: (sql) => inRolledBack(sql, [`ALTER TABLE ${m[1]} DROP CONSTRAINT IF EXISTS ${m[2]}`], text),
    };
  }
  if (/^(update|insert|delete)\b/i.test(text)) {
    const touched = [...text.matchAll(/"([a-z_]+)"/g)].map((x) => x[1]).find((t) => large(t));
    if (!touched) return null;
    return { table: touched, blocks: "the rows it changes, until the migration commits", run: (sql) => inRolledBack(sql, [], text) };
  }
  return null;
}

/** Runs `prelude` then times `statement`, in a transaction that is rolled back. */
async function inRolledBack(sql, prelude, statement) {
  let ms;
  let error;
  await sql
    .begin(async (tx) => {
      for (const p of prelude) await tx.unsafe(p);
      const began = performance.now();
      try {
        await tx.unsafe(statement);
      } catch (e) {
        error = e.message;
      }
      ms = performance.now() - began;
      throw new Rollback();
    })
    .catch((e) => {
      if (!(e instanceof Rollback)) throw e;
    });
  return error ? { ms, error } : { ms };
}

class Rollback extends Error {}

function short(text, max = 120) {
  const flat = text.replace(/\s+/g, " ");
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function printTable() {
  console.log(`\nScale ${SCALE}: ${Object.entries(COUNTS).map(([t, c]) => `${t} ${c.toLocaleString("en")}`).join(", ")}`);
  console.log(`Database ${(results.databaseBytes / 2 ** 30).toFixed(1)} GiB; seeding ${seconds(results.seeding.reduce((s, x) => s + x.ms, 0))}`);
  console.log(`\n${results.last.tag} (runMigrations): ${seconds(results.last.ms)}\n`);
  console.log("| Migration | Statement | Table (rows) | Time | CONCURRENTLY | Blocks |");
  console.log("|---|---|---|---|---|---|");
  for (const r of results.replays) {
    console.log(
      `| ${r.migration} | \`${short(r.statement, 70)}\` | ${r.table} (${r.rows.toLocaleString("en")}) | ${r.error ? `fails: ${r.error}` : seconds(r.ms)} | ${r.concurrentlyMs === undefined ? "" : seconds(r.concurrentlyMs)} | ${r.blocks} |`,
    );
  }
}

// ----------------------------------------------------------------------------------------------
// The scratch database, filled and timed

const results = { machine: machine(), scale: SCALE, counts: COUNTS, seeding: [], sizes: [], last: null, replays: [] };

async function main() {
  const serverUrl = process.env.BENCH_PG_SERVER ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `latchkey_migration_timing_${new Date().toISOString().replace(/\D/g, "").slice(0, 14)}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  // Every session of it, runMigrations' included: one process per statement.
  await admin.unsafe(`alter database "${name}" set max_parallel_maintenance_workers = 0`);
  await admin.unsafe(`alter database "${name}" set max_parallel_workers_per_gather = 0`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const dbUrl = url.toString();
  log(`scratch database ${name}, scale ${SCALE}`);

  /** A session of its own: reniced, one process per statement. */
  async function session(extra = {}) {
    const sql = postgres(dbUrl, { max: 1, onnotice: () => {}, connection: { max_parallel_maintenance_workers: 0, max_parallel_workers_per_gather: 0, ...extra } });
    const [{ pid }] = await sql`select pg_backend_pid() as pid`;
    spawnSync("renice", ["-n", "15", "-p", String(pid)], { stdio: "ignore" });
    return sql;
  }


  try {
    // 1. The release before this one.
    const all = readMigrations(path.join(root, "db", "migrations"));
    const last = all.at(-1);
    const previous = previousFolder(all.length - 1);
    const handle = await openDatabase({ databaseUrl: dbUrl, poolSize: 1 });
    await runMigrations(handle, dbUrl, { folder: previous });
    rmSync(previous, { recursive: true, force: true });
    log(`applied ${all.length - 1} migrations (through ${all.at(-2).tag})`);

    // 2. Production size.
    const seed = await session({ maintenance_work_mem: "1GB", synchronous_commit: "off", session_replication_role: "replica" });
    for (const [table, sql] of seedStatements()) {
      const began = Date.now();
      const restore = await withoutIndexes(seed, table);
      for (const statement of sql) await seed.unsafe(statement);
      await restore();
      await seed.unsafe(`vacuum (analyze) "${table}"`);
      const ms = Date.now() - began;
      results.seeding.push({ table, rows: COUNTS[table] ?? null, ms });
      log(`seeded ${table} (${(COUNTS[table] ?? 0).toLocaleString("en")} rows) in ${seconds(ms)}`);
    }
    await seed.unsafe("checkpoint");
    await seed.end();
    const timing = await session();
    results.sizes = (
      await timing.unsafe(
        `select c.relname as table, c.reltuples::bigint as rows, pg_total_relation_size(c.oid) as bytes from pg_class c where c.relkind = 'r' and c.relnamespace = 'public'::regnamespace and c.reltuples > 0 order by 3 desc`,
      )
    ).map((r) => ({ table: r.table, rows: Number(r.rows), bytes: Number(r.bytes) }));
    const [{ total }] = await timing`select pg_database_size(current_database()) as total`;
    results.databaseBytes = Number(total);
    log(`database size ${(Number(total) / 2 ** 30).toFixed(1)} GiB`);

    // 3. This release's migration, as npm start applies it.
    const lines = [];
    const began = Date.now();
    await runMigrations(handle, dbUrl, { log: (line) => lines.push(line) });
    results.last = { tag: last.tag, ms: Date.now() - began, lines };
    log(`${last.tag} applied by runMigrations in ${seconds(results.last.ms)}: ${lines.join(" | ")}`);
    await handle.close();

    // 4. Earlier statements that touched a large table, replayed.
    if (!opts["skip-replays"]) {
      const rows = new Map(results.sizes.map((s) => [s.table, s.rows]));
      for (const migration of all) {
        const text = readFileSync(path.join(root, "db", "migrations", `${migration.tag}.sql`), "utf8");
        const created = new Set();
        for (const statement of splitStatements(text)) {
          const replay = replayOf(statement.text, created, rows);
          if (!replay) continue;
          const outcome = await replay.run(timing);
          results.replays.push({ migration: migration.tag, statement: short(statement.text), table: replay.table, rows: rows.get(replay.table), blocks: replay.blocks, ...outcome });
          log(`${migration.tag}: ${short(statement.text, 90)}: ${outcome.error ? `fails: ${outcome.error}` : seconds(outcome.ms)}${outcome.concurrentlyMs !== undefined ? ` (CONCURRENTLY ${seconds(outcome.concurrentlyMs)})` : ""}`);
        }
      }
    }
    await timing.end();
    printTable();
    if (opts.json) writeFileSync(opts.json, JSON.stringify(results, null, 2));
  } finally {
    if (!opts.keep) {
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      log(`dropped ${name}`);
    } else log(`kept ${name}`);
    await admin.end();
  }
}

await main();
