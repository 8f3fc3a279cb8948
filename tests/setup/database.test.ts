import { sql, type SQL } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { DatabaseHandle } from "@/db/client";
import { openTestDatabase } from "./test-database";

describe("test database plumbing", () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openTestDatabase();
  });
  afterAll(async () => {
    await handle?.close();
  });

  /** Rows of a raw query: postgres-js returns an array, PGlite an object with `rows`. */
  async function rows<T>(query: SQL): Promise<T[]> {
    const result: unknown = await handle.db.execute(query);
    return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
  }

  it("hands workers a fresh database when DATABASE_URL is set, PGlite otherwise", async () => {
    const provided = inject("databaseUrl");
    if (provided) {
      const name = new URL(provided).pathname.slice(1);
      // The run's tag (LATCHKEY_TEST_RUN, scripts/test.mjs), then a random part.
      expect(name).toMatch(/^latchkey_test_[0-9a-z]+_[0-9a-f]{8}$/);
      expect(process.env.DATABASE_URL).toBe(provided);
      expect(handle.kind).toBe("postgres");
      expect(await rows<{ name: string }>(sql`select current_database() as name`)).toEqual([{ name }]);
    } else {
      expect(process.env.DATABASE_URL ?? "").toBe("");
      expect(handle.kind).toBe("pglite");
    }
  });

  it("has the migrations applied", async () => {
    const tables = await rows<{ name: string }>(
      sql`select table_name as name from information_schema.tables where table_schema = 'public'`,
    );
    expect(tables.map((table) => table.name)).toContain("workspaces");
    expect(tables.length).toBeGreaterThan(5);
  });
});
