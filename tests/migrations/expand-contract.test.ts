/**
 * The expand/contract rule (scripts/check-migrations.ts, docs/operations.md "Upgrades"): the
 * shipped migrations follow it, and fixture migrations that break it are refused, each for its
 * reason, while their expand-only or properly marked counterparts pass.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { afterAll, describe, expect, it } from "vitest";
import * as schema from "../../db/schema";
import { checkMigrations, GRANDFATHERED_THROUGH, readSchema, splitStatements, type Problem } from "../../scripts/check-migrations";
import { migrationFolder, realFolder, realJournal, removeMigrationFolders, root } from "./fixtures";

const schemaDir = path.join(root, "db", "schema");
const NO_TX = "-- latchkey:no-transaction\n";

/** The problems of `sql` as migrations 0001, 0002, … after the real 0000_init (grandfathered). */
function check(...sql: string[]): Problem[] {
  return checkMigrations({ folder: migrationFolder(sql, { prefix: 1 }), schemaDir, grandfatheredThrough: 0 });
}
const messages = (problems: Problem[]) => problems.map((p) => p.message);

afterAll(removeMigrationFolders);

describe("db/migrations", () => {
  it("follows the rule: every migration after the grandfathered ones expands the schema or contracts what nothing uses", () => {
    expect(checkMigrations({ folder: realFolder, schemaDir })).toEqual([]);
    // The grandfathered migrations are the ones that shipped before the rule; anything newer is checked.
    expect(realJournal().entries[GRANDFATHERED_THROUGH]!.tag).toBe("0020_workspace_hostnames");
    // Held to the rule, they would not pass (0015 drops an index and sets NOT NULL; 0007 adds a NOT NULL column without a default).
    expect(checkMigrations({ folder: realFolder, schemaDir, grandfatheredThrough: -1 }).length).toBeGreaterThan(0);
  });

  it("npm run db:check exits 0 on db/migrations and 1, naming file, line and reason, on a folder that breaks the rule", () => {
    const tsx = path.join(root, "node_modules", ".bin", "tsx");
    const good = spawnSync(tsx, ["scripts/check-migrations.ts"], { cwd: root, encoding: "utf8" });
    expect(good.status).toBe(0);
    const bad = migrationFolder([`ALTER TABLE "users" DROP COLUMN "name";`], { prefix: GRANDFATHERED_THROUGH + 2 });
    const refused = spawnSync(tsx, ["scripts/check-migrations.ts", bad], { cwd: root, encoding: "utf8" });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^0022_fixture\.sql:1: ALTER TABLE "users" DROP COLUMN "name"\n {2}drops column users\.name/);
  });

  it("reads db/schema as drizzle does: every table's columns, NOT NULL and defaults", () => {
    const read = readSchema(schemaDir);
    const tables = (Object.values(schema) as unknown[]).filter((value): value is PgTable => is(value, PgTable));
    expect(tables.length).toBeGreaterThan(40);
    for (const table of tables) {
      const config = getTableConfig(table);
      const columns = read.tables.get(config.name);
      expect(columns, config.name).toBeDefined();
      expect([...columns!.keys()].sort(), config.name).toEqual(config.columns.map((c) => c.name).sort());
      for (const column of config.columns) {
        expect({ notNull: columns!.get(column.name)!.notNull, hasDefault: columns!.get(column.name)!.hasDefault }, `${config.name}.${column.name}`).toEqual({
          notNull: column.notNull,
          hasDefault: column.hasDefault && column.default !== undefined,
        });
      }
    }
  });
});

describe("statements", () => {
  it("are split at semicolons and breakpoints, never inside strings, identifiers or comments, with their comments and line", () => {
    const statements = splitStatements(
      `-- latchkey:no-transaction\nCREATE TABLE "a;b" ("x" text DEFAULT ';');--> statement-breakpoint\n-- contract: t.c unused since 0001\n/* block; */ALTER TABLE "t"\n  DROP COLUMN "c";\nDO $$ BEGIN PERFORM 1; END $$`,
    );
    expect(statements).toEqual([
      { text: `CREATE TABLE "a;b" ("x" text DEFAULT ';')`, comments: ["latchkey:no-transaction"], line: 2 },
      { text: `ALTER TABLE "t" DROP COLUMN "c"`, comments: ["contract: t.c unused since 0001", "block;"], line: 4 },
      { text: `DO $$ BEGIN PERFORM 1; END $$`, comments: [], line: 6 },
    ]);
  });
});

describe("expanding", () => {
  it("passes: new tables with their indexes and constraints, nullable columns or columns with a constant default, NOT VALID constraints then VALIDATE", () => {
    expect(
      check(
        `CREATE TABLE "notes" ("id" text PRIMARY KEY NOT NULL, "user_id" text NOT NULL, "body" text NOT NULL);--> statement-breakpoint
ALTER TABLE "notes" ADD CONSTRAINT "notes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade;--> statement-breakpoint
CREATE INDEX "notes_user_idx" ON "notes" USING btree ("user_id");--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "nickname" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "locale" text DEFAULT 'en' NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ALTER COLUMN "nickname" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "grants" ADD CONSTRAINT "grants_scope_check" CHECK (jsonb_typeof("scope") = 'array') NOT VALID;--> statement-breakpoint
CREATE INDEX "clients_name_idx" ON "clients" USING btree ("name");`,
        `ALTER TABLE "grants" VALIDATE CONSTRAINT "grants_scope_check";`,
      ),
    ).toEqual([]);
  });

  it("passes: an index on a large table built CONCURRENTLY IF NOT EXISTS in a migration that runs outside a transaction", () => {
    expect(check(`${NO_TX}CREATE INDEX CONCURRENTLY IF NOT EXISTS "users_name_idx" ON "users" USING btree ("name");`)).toEqual([]);
  });

  it("refuses a plain CREATE INDEX on a large table (users, audit_events, any table not listed as configuration), not on a new or configuration table", () => {
    for (const table of ["users", "refresh_tokens", "audit_events", "hosted_sessions", "grants", "access_tokens", "authorization_codes"]) {
      expect(messages(check(`CREATE INDEX "x_idx" ON "${table}" USING btree ("workspace_id");`))).toEqual([expect.stringContaining(`a plain CREATE INDEX on ${table} blocks its writes`)]);
    }
    expect(check(`CREATE INDEX "x_idx" ON "clients" USING btree ("workspace_id");`)).toEqual([]);
  });

  it("refuses CONCURRENTLY inside a transactional migration, and a no-transaction migration with anything but IF [NOT] EXISTS index statements", () => {
    expect(messages(check(`CREATE INDEX CONCURRENTLY IF NOT EXISTS "x_idx" ON "users" ("name");`))).toEqual([expect.stringContaining("CONCURRENTLY cannot run inside a transaction")]);
    expect(messages(check(`${NO_TX}CREATE INDEX CONCURRENTLY "x_idx" ON "users" ("name");`))).toEqual([expect.stringContaining("may hold only CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT EXISTS")]);
    expect(messages(check(`${NO_TX}ALTER TABLE "users" ADD COLUMN "nickname" text;`))).toEqual([expect.stringContaining("may hold only")]);
    // Statements sent together run in one transaction: one per breakpoint.
    const two = `CREATE INDEX CONCURRENTLY IF NOT EXISTS "a_idx" ON "users" ("name");\nCREATE INDEX CONCURRENTLY IF NOT EXISTS "b_idx" ON "users" ("email");`;
    expect(messages(check(`${NO_TX}${two}`))).toEqual([expect.stringContaining("separate the statements")]);
    expect(check(`${NO_TX}${two.replace(";\n", ";--> statement-breakpoint\n")}`)).toEqual([]);
  });

  it("refuses a NOT NULL column without a default, a volatile default, and constraints that check or index every row under the table's lock", () => {
    expect(messages(check(`ALTER TABLE "users" ADD COLUMN "locale" text NOT NULL;`))).toEqual([expect.stringContaining("adds users.locale NOT NULL without a default")]);
    expect(messages(check(`ALTER TABLE "users" ADD COLUMN "token" text DEFAULT gen_random_uuid()::text;`))).toEqual([expect.stringContaining("volatile default")]);
    expect(messages(check(`ALTER TABLE "grants" ADD CONSTRAINT "grants_user_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id");`))).toEqual([
      expect.stringContaining("add it NOT VALID here and VALIDATE CONSTRAINT in a later migration"),
    ]);
    expect(messages(check(`ALTER TABLE "users" ADD CONSTRAINT "users_email_uq" UNIQUE ("email");`))).toEqual([expect.stringContaining("USING INDEX")]);
  });
});

describe("contracting", () => {
  it("refuses dropping, renaming or retyping a column, renaming or dropping a table, without a contract comment", () => {
    const cases: [string, string][] = [
      [`ALTER TABLE "users" DROP COLUMN "name";`, "drops column users.name"],
      [`ALTER TABLE "users" RENAME COLUMN "name" TO "display_name";`, "renames column users.name"],
      [`ALTER TABLE "users" ALTER COLUMN "name" SET DATA TYPE varchar(200);`, "changes the type of column users.name"],
      [`ALTER TABLE "users" RENAME TO "people";`, "renames table users"],
      [`DROP TABLE "rate_limits";`, "drops table rate_limits"],
      [`TRUNCATE "mail_outbox";`, "empties table mail_outbox"],
      [`ALTER TABLE "grants" DROP CONSTRAINT "grants_credential_id_client_secrets_id_fk";`, "drops constraint grants_credential_id_client_secrets_id_fk"],
      [`ALTER TABLE "users" ALTER COLUMN "name" SET NOT NULL;`, "makes NOT NULL column users.name"],
      [`ALTER TABLE "users" ALTER COLUMN "status" DROP DEFAULT;`, "drops the default of column users.status"],
    ];
    for (const [sql, reason] of cases) expect(messages(check(sql)), sql).toEqual([expect.stringContaining(reason)]);
  });

  it("refuses DROP INDEX on a large table unless CONCURRENTLY, and any DROP INDEX without a contract comment", () => {
    expect(messages(check(`DROP INDEX "users_workspace_created_idx";`))).toEqual([
      expect.stringContaining("DROP INDEX on users waits for, then blocks"),
      expect.stringContaining("drops index users_workspace_created_idx"),
    ]);
  });

  it("passes a drop marked with the earlier migration of the release that stopped using the column, which db/schema no longer declares", () => {
    expect(
      check(
        `ALTER TABLE "users" ADD COLUMN "nickname" text;`,
        `ALTER TABLE "users" ALTER COLUMN "nickname" DROP NOT NULL;`,
        `-- contract: users.nickname unused since 0002_fixture\nALTER TABLE "users" DROP COLUMN "nickname";`,
      ),
    ).toEqual([]);
    expect(check(`CREATE TABLE "legacy" ("id" text);`, `-- contract: table legacy unused since 0001\nDROP TABLE "legacy";`)).toEqual([]);
    expect(
      check(`${NO_TX}CREATE INDEX CONCURRENTLY IF NOT EXISTS "users_name_idx" ON "users" ("name");`, `${NO_TX}-- contract: index users_name_idx unused since 0001\nDROP INDEX CONCURRENTLY IF EXISTS "users_name_idx";`),
    ).toEqual([]);
  });

  it("refuses a marked drop of a column db/schema still declares: no dropped or renamed column in the release that stops using it", () => {
    expect(messages(check(`ALTER TABLE "users" ADD COLUMN "x" text;`, `-- contract: users.name unused since 0001\nALTER TABLE "users" DROP COLUMN "name";`))).toEqual([
      expect.stringContaining("db/schema still declares it"),
    ]);
    expect(messages(check(`-- contract: users.name unused since 0001\nALTER TABLE "users" RENAME COLUMN "name" TO "full_name";`))).toEqual([expect.stringContaining("not earlier than this migration")]);
    expect(messages(check(`-- contract: users.nickname unused since 0099\nALTER TABLE "users" DROP COLUMN "nickname";`))).toEqual([expect.stringContaining("not in the journal")]);
    // The comment names another column than the one dropped: the drop is unmarked.
    expect(messages(check(`ALTER TABLE "users" ADD COLUMN "x" text;`, `-- contract: users.other unused since 0001\nALTER TABLE "users" DROP COLUMN "nickname";`))).toEqual([
      expect.stringContaining("drops column users.nickname"),
    ]);
  });

  it("passes SET NOT NULL on an existing column marked always set, only when db/schema declares it NOT NULL", () => {
    expect(check(`ALTER TABLE "users" ADD COLUMN "x" text;`, `-- contract: users.email always set since 0001\nALTER TABLE "users" ALTER COLUMN "email" SET NOT NULL;`)).toEqual([]);
    expect(messages(check(`ALTER TABLE "users" ADD COLUMN "x" text;`, `-- contract: users.name always set since 0001\nALTER TABLE "users" ALTER COLUMN "name" SET NOT NULL;`))).toEqual([
      expect.stringContaining("db/schema declares it nullable"),
    ]);
  });

  it("leaves the grandfathered migrations alone", () => {
    const folder = migrationFolder([`ALTER TABLE "users" DROP COLUMN "name";`, `CREATE INDEX "x" ON "users" ("name");`], { prefix: 1 });
    expect(checkMigrations({ folder, schemaDir, grandfatheredThrough: 2 })).toEqual([]);
    expect(checkMigrations({ folder, schemaDir, grandfatheredThrough: 1 })).toHaveLength(1);
  });
});
