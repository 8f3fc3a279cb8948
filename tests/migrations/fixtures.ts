/** Throwaway drizzle-kit migration folders (a journal and one .sql per entry) for the migration tests. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export const root = path.resolve(import.meta.dirname, "..", "..");
export const realFolder = path.join(root, "db", "migrations");

const made: string[] = [];

/** Removes the folders `migrationFolder` made (each test file, in its afterAll). */
export function removeMigrationFolders(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

interface RealJournal {
  entries: { idx: number; version: string; when: number; tag: string; breakpoints: boolean }[];
}

export function realJournal(): RealJournal {
  return JSON.parse(readFileSync(path.join(realFolder, "meta", "_journal.json"), "utf8")) as RealJournal;
}

/**
 * A folder holding `sql` as migrations 0000, 0001, … (tags `000N_fixture`), one `when` apart by a
 * second from `firstWhen`. `prefix`: real migrations copied first (their tags and `when`s), the
 * fixture's following them.
 */
export function migrationFolder(sql: string[], options: { prefix?: number; firstWhen?: number } = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "lk-migrations-"));
  made.push(dir);
  mkdirSync(path.join(dir, "meta"));
  const real = realJournal().entries.slice(0, options.prefix ?? 0);
  for (const entry of real) writeFileSync(path.join(dir, `${entry.tag}.sql`), readFileSync(path.join(realFolder, `${entry.tag}.sql`)));
  let when = options.firstWhen ?? (real.at(-1)?.when ?? 1_800_000_000_000) + 1000;
  const entries = [...real];
  sql.forEach((text, i) => {
    const idx = real.length + i;
    const tag = `${String(idx).padStart(4, "0")}_fixture`;
    writeFileSync(path.join(dir, `${tag}.sql`), text);
    entries.push({ idx, version: "7", when, tag, breakpoints: true });
    when += 1000;
  });
  writeFileSync(path.join(dir, "meta", "_journal.json"), JSON.stringify({ version: "7", dialect: "postgresql", entries }, null, 2));
  return dir;
}
