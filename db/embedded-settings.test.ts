/**
 * The embedded database in DATA_DIR runs with the settings of EMBEDDED_SERVER_SETTINGS (its
 * shared buffers, most of `npm start`'s resident memory otherwise), at its first start and at every
 * start after.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "./client";

const dir = mkdtempSync(path.join(tmpdir(), "latchkey-embedded-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function sharedBuffers(): Promise<string> {
  const handle = await openDatabase({ dataDir: dir });
  try {
    const rows = (await handle.db.execute(sql`show shared_buffers`)) as unknown as { rows?: { shared_buffers: string }[] } | { shared_buffers: string }[];
    const list = Array.isArray(rows) ? rows : (rows.rows ?? []);
    return list[0].shared_buffers;
  } finally {
    await handle.close();
  }
}

describe("the embedded database in DATA_DIR", () => {
  it("keeps 16 MB of shared buffers (PostgreSQL's default is 128 MB), on a new data directory and on the next start", async () => {
    expect(await sharedBuffers()).toBe("16MB");
    expect(await sharedBuffers()).toBe("16MB");
  });
});
