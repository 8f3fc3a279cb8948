#!/usr/bin/env node
/**
 * Playwright's web server for the e2e suite: the production build of Latchkey on a fresh,
 * seeded data store.
 *
 * 1. The production build (`next build`, then the compiled server), unless it is newer than every
 *    source file (scripts/build-if-stale.mjs; E2E_REBUILD=1 forces a build, E2E_SKIP_BUILD=1
 *    skips it).
 * 2. A fresh data store: with DATABASE_URL, a new database `latchkey_e2e_<ts>_<rand>` on that
 *    server (MASTER_KEY is taken from the environment or generated); otherwise a new embedded
 *    database in .test-data/e2e-<ts>.
 * 3. `latchkey workspace import` of e2e/fixtures/e2e-idp-workspace.json (the enterprise identity
 *    provider of the federation spec, a second workspace on this server), then of
 *    e2e/fixtures/e2e-workspace.json, whose upstream client secrets are environment references
 *    (upstreamSecrets below), and of e2e/fixtures/e2e-hostnames-workspace.json (the workspace
 *    `acme` with its own hostname, verified on the operator's word as only a command-line import
 *    may); before the server starts: the embedded database admits one process at a time.
 * 4. The compiled server, started as `npm start` starts it (scripts/server-command.mjs), on port
 *    3111 (E2E_PORT). SIGTERM/SIGINT are forwarded; when the server
 *    exits the database is dropped (or the data directory removed; E2E_KEEP_DATA=1 keeps it).
 *
 * Specs that must reach the same data store (e.g. to run the CLI against it) read
 * .test-data/e2e-server-<port>.json: { pid, issuer, env: { DATA_DIR | DATABASE_URL, MASTER_KEY } }.
 *
 * The port is held from the start (answering 503, which Playwright does not take for ready) so
 * that another server appearing on it during the build fails instead of being tested.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { ensureBuild } from "../scripts/build-if-stale.mjs";
import { SERVER_ENTRY, serverNodeArgs } from "../scripts/server-command.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
process.chdir(root);

// Defaults match e2e/env.ts; the fixture's redirect URIs name the app on port 3112.
const PORT = Number(process.env.E2E_PORT || 3111);
const APP_PORT = Number(process.env.E2E_APP_PORT || 3112);
const PUBLIC_URL = `http://localhost:${PORT}`;
const WORKSPACE_FILE = "e2e/fixtures/e2e-workspace.json";
const IDP_WORKSPACE_FILE = "e2e/fixtures/e2e-idp-workspace.json";
const HOSTNAMES_WORKSPACE_FILE = "e2e/fixtures/e2e-hostnames-workspace.json";
const tsx = path.join(root, "node_modules", ".bin", "tsx");

const log = (message) => console.log(`[e2e] ${message}`);

let child; // the process currently running (build, import or server)
let stopping = false;
let cleanup = async () => {};
let releasePort = async () => {};

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    stopping = true;
    if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
    else void finish(signal === "SIGINT" ? 130 : 143);
  });
}

async function finish(code) {
  try {
    await releasePort();
    await cleanup();
  } catch (error) {
    console.error(`[e2e] cleanup failed: ${error.message}`);
  }
  process.exit(code);
}

/** Runs a command to completion, inheriting stdio; resolves with its exit code. */
function run(command, args, env) {
  return new Promise((resolve, reject) => {
    child = spawn(command, args, { env, stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** The production build, as `npm start` makes it (scripts/build-if-stale.mjs), while the port answers 503. */
async function build() {
  if (process.env.E2E_SKIP_BUILD === "1") return log("E2E_SKIP_BUILD=1: using the existing build");
  await ensureBuild({ log, force: process.env.E2E_REBUILD === "1", onChild: (c) => (child = c) });
}

/** A fresh data store for this run; returns the environment pointing at it. */
async function freshDataStore(env) {
  // The test run's tag when scripts/test.mjs runs it (LATCHKEY_TEST_RUN): its end check finds what a run left.
  const stamp = `${process.env.LATCHKEY_TEST_RUN ?? Date.now()}_${randomBytes(4).toString("hex")}`;
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const name = `latchkey_e2e_${stamp}`;
    const admin = () => postgres(serverUrl, { max: 1, onnotice: () => {}, connect_timeout: 10 });
    const sql = admin();
    try {
      await sql.unsafe(`create database "${name}"`);
    } finally {
      await sql.end({ timeout: 5 });
    }
    cleanup = async () => {
      const sql = admin();
      try {
        await sql.unsafe(`drop database if exists "${name}" with (force)`);
        log(`dropped database ${name}`);
      } finally {
        await sql.end({ timeout: 5 });
      }
    };
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    log(`fresh PostgreSQL database ${name}`);
    return { ...env, DATABASE_URL: url.toString(), MASTER_KEY: process.env.MASTER_KEY || randomBytes(32).toString("hex") };
  }
  const dataDir = path.join(root, ".test-data", `e2e-${stamp}`);
  mkdirSync(dataDir, { recursive: true });
  cleanup = async () => {
    if (process.env.E2E_KEEP_DATA === "1") return log(`kept ${dataDir}`);
    rmSync(dataDir, { recursive: true, force: true });
  };
  log(`fresh embedded database in ${path.relative(root, dataDir)}`);
  const embedded = { ...env, DATA_DIR: dataDir };
  delete embedded.DATABASE_URL;
  return embedded;
}

/** Listens on the port with a placeholder until the real server takes over. */
async function holdPort(port) {
  const placeholder = http.createServer((_req, res) => res.writeHead(503, { "retry-after": "5" }).end("starting\n"));
  await new Promise((resolve, reject) => {
    placeholder.once("error", (error) =>
      reject(error.code === "EADDRINUSE" ? new Error(`port ${port} is in use; stop what runs there or set E2E_PORT`) : error),
    );
    placeholder.listen(port, resolve);
  });
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    placeholder.closeAllConnections();
    await new Promise((resolve) => placeholder.close(resolve));
  };
}

/** Tells specs where this run's data store is; removed on exit. */
function publishStore(env) {
  const file = path.join(root, ".test-data", `e2e-server-${PORT}.json`);
  mkdirSync(path.dirname(file), { recursive: true });
  const published = { DATA_DIR: env.DATA_DIR, DATABASE_URL: env.DATABASE_URL, MASTER_KEY: env.MASTER_KEY };
  writeFileSync(file, JSON.stringify({ pid: process.pid, issuer: `${PUBLIC_URL}/t/e2e`, env: published }, null, 2), { mode: 0o600 });
  const previous = cleanup;
  cleanup = async () => {
    rmSync(file, { force: true });
    await previous();
  };
}

/** The server's clock offset file, starting at 0; removed on exit. The path is e2e/env.ts SERVER_CLOCK_FILE's. */
function testClockFile() {
  const file = path.join(root, ".test-data", `e2e-clock-${PORT}`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, "0");
  const previous = cleanup;
  cleanup = async () => {
    rmSync(file, { force: true });
    await previous();
  };
  return file;
}

/**
 * A fixture, with its URLs moved when the app (redirect URIs) or the server (the upstream issuer
 * and the callback registered with it) does not listen on the default port.
 */
function workspaceFile(fixture) {
  if (APP_PORT === 3112 && PORT === 3111) return fixture;
  const file = path.join(tmpdir(), `latchkey-${path.basename(fixture, ".json")}-${process.pid}.json`);
  const moved = readFileSync(fixture, "utf8")
    .replaceAll("http://localhost:3112", `http://localhost:${APP_PORT}`)
    .replaceAll("http://localhost:3111", PUBLIC_URL);
  writeFileSync(file, moved);
  return file;
}

/**
 * The values of the fixture's `{"env": NAME}` upstream secrets: the enterprise connection's is the
 * secret of the e2e-idp client it signs in with; the social providers' are the ones the upstreams
 * of e2e/federation.spec.ts check (e2e/env.ts CONTOSO_CLIENT and GITHUB_CLIENT).
 */
function upstreamSecrets() {
  const idp = JSON.parse(readFileSync(IDP_WORKSPACE_FILE, "utf8"));
  return {
    E2E_ACME_SSO_CLIENT_SECRET: idp.applications.find((a) => a.client_id === "e2e-acme-sso").secret,
    E2E_CONTOSO_CLIENT_SECRET: "contoso-e2e-secret-0123456789abcdef",
    E2E_GITHUB_CLIENT_SECRET: "github-e2e-secret-0123456789abcdef",
  };
}

/** Imports a fixture (moved to this run's ports); throws when the import fails. */
async function importFixture(fixture, env) {
  const file = workspaceFile(fixture);
  log(`importing ${fixture}`);
  const imported = await run(tsx, ["cli/latchkey.ts", "workspace", "import", file], env);
  if (file !== fixture) rmSync(file, { force: true });
  if (imported !== 0) throw new Error(`workspace import of ${fixture} failed (exit ${imported})`);
}

async function main() {
  releasePort = await holdPort(PORT);
  const base = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
  await build();
  if (stopping) return finish(143);

  const env = { ...(await freshDataStore(base)), ...upstreamSecrets() };
  await importFixture(IDP_WORKSPACE_FILE, env);
  if (stopping) return finish(143);
  await importFixture(WORKSPACE_FILE, env);
  if (stopping) return finish(143);
  await importFixture(HOSTNAMES_WORKSPACE_FILE, env);
  if (stopping) return finish(143);

  publishStore(env);
  await releasePort();
  log(`starting the compiled server on ${PUBLIC_URL}`);
  // e2e/console.spec.ts opens the console's first-run setup link, so it must know the token:
  // the server uses a configured CONSOLE_SETUP_TOKEN instead of a random one (docs/console.md).
  const CONSOLE_SETUP_TOKEN = process.env.CONSOLE_SETUP_TOKEN || "e2e-console-setup-token-0123456789abcdef";
  // The server's clock is the system's shifted by the milliseconds in this file (lib/clock.ts
  // fileOffsetClock): specs that test a lifetime move the time with e2e/env.ts shiftServerClock.
  const LATCHKEY_TEST_CLOCK_FILE = testClockFile();
  // The federation spec's upstream identity providers listen on loopback (e2e/federation-upstreams.ts):
  // a development setting lets the server's requests reach them (docs/configuration.md).
  const ALLOW_PRIVATE_UPSTREAMS = "true";
  const code = await run(process.execPath, [...serverNodeArgs(), SERVER_ENTRY], { ...env, NODE_ENV: "production", PORT: String(PORT), PUBLIC_URL, CONSOLE_SETUP_TOKEN, LATCHKEY_TEST_CLOCK_FILE, ALLOW_PRIVATE_UPSTREAMS });
  log(`server exited (${code})`);
  await finish(stopping ? 0 : code || 1);
}

main().catch(async (error) => {
  console.error(`[e2e] ${error.message}`);
  await finish(1);
});
