/**
 * A rolling upgrade: instances of the previous release keep serving while the new release's
 * migrations are applied under them. The previous release is the commit before the newest
 * migration was added (this repository tags no releases); its checkout runs its own tests of a
 * federated sign-in (social and enterprise, which write federated_identities), refresh rotation and console
 * changes, in a vitest run of its own, on databases that its own setup migrated and then this
 * checkout's migrations upgraded (tests/migrations/upgrade-setup.ts). On PostgreSQL when
 * DATABASE_URL is set, always on the embedded database.
 *
 * What it proves: the previous release's code reads and writes every table those flows touch on
 * the new schema (no column it does not write became required, none it reads is gone). What it
 * does not: both releases serving one database at the same moment (each instance's caches are
 * per process and the schema is the only thing they share).
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { realJournal, root } from "./fixtures";

const OLD_TESTS = [
  "tests/integration/federation/flow-social.test.ts",
  "tests/integration/federation/flow-enterprise.test.ts",
  "tests/integration/refresh-rotation.test.ts",
  "tests/integration/console-admin-applications.test.ts",
];

const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();

/**
 * The commit before the one that added the newest migration (HEAD while that migration is not
 * committed yet), or why there is none here.
 */
function previousRelease(): { commit: string } | { missing: string } {
  const newest = `db/migrations/${realJournal().entries.at(-1)!.tag}.sql`;
  try {
    if (!git("ls-tree", "--name-only", "HEAD", newest)) return { commit: git("rev-parse", "HEAD") };
    const added = git("log", "-1", "--format=%H", "--diff-filter=A", "--", newest);
    if (!added) return { missing: `no commit adds ${newest} (a shallow clone: fetch the history)` };
    return { commit: git("rev-parse", `${added}^`) };
  } catch {
    return { missing: "no git history in this checkout" };
  }
}

const previous = previousRelease();

describe("a rolling upgrade: the previous release on this release's schema", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "latchkey-previous-"));
  const checkout = path.join(dir, "release");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes the previous release's own tests of federated sign-in, refresh rotation and console changes", async () => {
    if ("missing" in previous) throw new Error(`the previous release is needed: ${previous.missing}`);
    // Its files at that commit (git archive: the repository's worktrees are left alone).
    mkdirSync(checkout);
    execFileSync("sh", ["-c", `git archive ${previous.commit} | tar -x -C "${checkout}"`], { cwd: root, stdio: "ignore" });
    symlinkSync(path.join(root, "node_modules"), path.join(checkout, "node_modules"), "dir");
    // Its own configuration, with this checkout's migrations applied after its own global setup.
    writeFileSync(
      path.join(checkout, "vitest.upgrade.config.ts"),
      `import { mergeConfig } from "vitest/config";\nimport base from "./vitest.config";\nexport default mergeConfig(base, { test: { globalSetup: [${JSON.stringify(path.join(root, "tests", "migrations", "upgrade-setup.ts"))}] } });\n`,
    );
    const files = OLD_TESTS.filter((file) => existsSync(path.join(checkout, file)));
    expect(files.length, "the previous release has these test files").toBeGreaterThanOrEqual(3);
    // With DATABASE_URL (here the run's database), its setup makes a database of its own on that server.
    const reportFile = path.join(dir, "upgrade.jsonl");
    const env = { ...process.env, LATCHKEY_UPGRADE_REPORT: reportFile };
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(root, "node_modules", "vitest", "vitest.mjs"), "run", "--config", "vitest.upgrade.config.ts", ...files], { cwd: checkout, env });
      let output = "";
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
      child.on("close", (code) => resolve({ code, output }));
    });
    const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
    // This checkout's newer migrations were applied to each database the previous release's run used.
    const upgraded = existsSync(reportFile) ? readFileSync(reportFile, "utf8").trim().split("\n").map((line) => JSON.parse(line) as { database: string; applied: string[] }) : [];
    const newest = realJournal().entries.at(-1)!.tag;
    expect(upgraded.filter((u) => u.database === "embedded" && u.applied.includes(newest)), plain.slice(0, 2000)).toHaveLength(1);
    if (process.env.DATABASE_URL) expect(upgraded.filter((u) => u.database === "postgres" && u.applied.includes(newest))).toHaveLength(1);
    expect(code, plain.slice(-4000)).toBe(0);
    expect(plain).toMatch(/Tests\s+\d+ passed/);
    expect(plain).not.toMatch(/Tests\s+.*failed/);
  }, 600_000);
});
