/**
 * README.md's "Run it" holds on a fresh clone: the Node.js step comes before `npm install && npm
 * start`, `npm start` on an older Node says that step in one line and exits non-zero
 * (scripts/start.mjs, scripts/node-version.mjs), the sample start-up output has the lines the server
 * prints (their full order is compared with a real first start in e2e/first-start.spec.ts), and the
 * committed lockfile has every platform's optional packages, so `npm install` on another machine
 * has nothing to add (.ci/run fails when it changes the lockfile).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { mailStartupLine } from "../../lib/authn/email/transport";
import { parseMailSettings } from "../../lib/config";
import { demoClientsLine } from "../../lib/workspaces/demo";
import { MINIMUM_NODE, nodeVersionProblem } from "../../scripts/node-version.mjs";

const root = path.resolve(import.meta.dirname, "..", "..");
const readme = readFileSync(path.join(root, "README.md"), "utf8");
const runIt = readme.slice(readme.indexOf("## Run it"), readme.indexOf("### Sign in to the demo"));
const codeBlocks = (text: string, lang: string) => [...text.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map((m) => m[1]!);

/** A Node.js on this machine older than the minimum (Debian's system Node is 20), if there is one. */
const olderNode = ["/usr/bin/node", "/usr/local/bin/node"].find((candidate) => {
  if (!existsSync(candidate)) return false;
  const version = spawnSync(candidate, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
  return version !== "" && nodeVersionProblem(version) !== null;
});

describe("README: Run it", () => {
  it("puts `. scripts/use-node.sh` before `npm install && npm start`, and says when it is needed", () => {
    const [commands] = codeBlocks(runIt, "sh");
    const lines = commands!.trim().split("\n");
    expect(lines[0]).toMatch(/^\. scripts\/use-node\.sh\b/);
    expect(lines[1]).toBe("npm install && npm start");
    expect(runIt.indexOf(". scripts/use-node.sh")).toBeLessThan(runIt.indexOf("npm install && npm start"));
    expect(runIt).toContain(`${MINIMUM_NODE.join(".")} or newer`);
    const engines = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).engines.node;
    expect(engines).toBe(`>=${MINIMUM_NODE.join(".")}`);
  });

  it("npm start's check: too old below 22.12, with the one line that names the step", () => {
    for (const version of ["20.20.2", "18.19.0", "22.11.0", "21.7.3"]) {
      const line = nodeVersionProblem(version)!;
      expect(line).toBe(`Latchkey needs Node.js 22.12 or newer and this is v${version}: run \`. scripts/use-node.sh\` first (it installs Node.js 24 for this shell), then \`npm start\` again.`);
      expect(line).not.toContain("\n");
    }
    for (const version of ["22.12.0", "22.20.1", "23.0.0", "24.21.0", "26.1.0"]) expect(nodeVersionProblem(version)).toBeNull();
  });

  it.runIf(olderNode)("npm start on the system's older Node prints exactly that line and exits non-zero, before building anything", () => {
    const version = spawnSync(olderNode!, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
    const run = spawnSync(olderNode!, ["scripts/start.mjs"], { cwd: root, encoding: "utf8", timeout: 20_000 });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(`${nodeVersionProblem(version)}\n`);
  });

  it("shows the start-up lines the server prints, the Email: line among them", () => {
    const sample = runIt.slice(runIt.indexOf("then prints something like:"));
    const [output] = codeBlocks(sample, "");
    const lines = output!.split("\n");
    const labelled = lines.filter((l) => /^ {2}\S[^:]*: /.test(l)).map((l) => l.slice(2, l.indexOf(":")));
    expect(labelled).toEqual(["Demo issuer", "Discovery", "Email", "Try it", "Demo sign-in", "Demo clients", "demo-web secret", "Console setup"]);
    // Lines whose text the README gives in full: as the server prints them on a fresh clone under
    // `npm start` (no SMTP_URL, http://localhost:3000, and NODE_ENV=production, which scripts/start.mjs sets).
    expect(readFileSync(path.join(root, "scripts", "start.mjs"), "utf8")).toContain('NODE_ENV: "production"');
    const publicUrl = "http://localhost:3000";
    expect(lines).toContain(`  ${mailStartupLine({ mail: parseMailSettings({ NODE_ENV: "production" }, publicUrl), publicUrl })}`);
    expect(lines).toContain(`  Demo clients:    ${demoClientsLine()}`);
  });
});

describe("package-lock.json", () => {
  it("has an entry for every optional dependency of every package, whatever the platform (so npm install adds none)", () => {
    const lock = JSON.parse(readFileSync(path.join(root, "package-lock.json"), "utf8")) as {
      lockfileVersion: number;
      packages: Record<string, { optionalDependencies?: Record<string, string> }>;
    };
    expect(lock.lockfileVersion).toBe(3);
    const missing: string[] = [];
    for (const [at, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        // Node's resolution: this package's own node_modules, then each enclosing one, then the top.
        let found = false;
        for (let scope = at; ; scope = scope.slice(0, Math.max(0, scope.lastIndexOf("/node_modules/")))) {
          if (lock.packages[`${scope ? `${scope}/` : ""}node_modules/${name}`]) {
            found = true;
            break;
          }
          if (!scope) break;
        }
        if (!found) missing.push(`${at || "(root)"} → ${name}`);
      }
    }
    expect(missing).toEqual([]);
    // The platform packages the issue saw added: Next's SWC and Tailwind's oxide, for every platform.
    for (const name of ["@next/swc-darwin-arm64", "@next/swc-win32-x64-msvc", "@next/swc-linux-arm64-musl", "@tailwindcss/oxide-darwin-arm64", "@tailwindcss/oxide-wasm32-wasi"]) {
      expect(lock.packages[`node_modules/${name}`], name).toBeDefined();
    }
  });

  it(".ci/run fails when npm install changes the lockfile", () => {
    const ci = readFileSync(path.join(root, ".ci", "run"), "utf8");
    const install = ci.indexOf("npm install --no-audit --no-fund");
    expect(install).toBeGreaterThan(0);
    expect(ci.indexOf("git diff --exit-code -- package-lock.json", install)).toBeGreaterThan(install);
  });
});
