import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { openDatabase, runMigrations, type Database, type DatabaseHandle } from "../db/client";
import { listen, type Listener } from "../db/listener";
import { fileOffsetClock, systemClock, type Clock } from "./clock";
import { loadConfig, type Config } from "./config";
import { RateLimiter } from "./limits/rate-limit";
import { databaseSignals } from "./signals/database";
import { outboundFetch } from "./outbound/fetch";

/** Everything an endpoint needs besides the request: database, configuration, clock. */
export interface Service {
  db: Database;
  config: Config;
  clock: Clock;
  /**
   * Per-process caches. What each holds and how stale it may be: "Caches and changes" below. An
   * entry of one workspace's data is dropped when a change to it commits, in this process and,
   * announced through the database, in every other (`announceChange`).
   */
  cache: Map<string, unknown>;
  limiter: RateLimiter;
  /**
   * How the service calls other servers (upstream identity providers, lib/federation): public
   * addresses only, checked after name resolution and on every redirect, bounded in size and time
   * (lib/outbound/fetch.ts; `upstreamAllow` admits the installation's own networks and hosts,
   * `allowPrivateUpstreams` lifts the address check for development).
   * Tests may route it to in-process services.
   */
  fetch: typeof fetch;
}

interface Holder {
  service?: Promise<{ service: Service; handle: DatabaseHandle; changes?: Listener }>;
}

// One service per process: the custom server and Next's route bundles import this module
// separately, and the embedded database must be opened exactly once.
const KEY = Symbol.for("latchkey.service");
const holder: Holder = ((globalThis as Record<symbol, unknown>)[KEY] as Holder) ?? {};
(globalThis as Record<symbol, unknown>)[KEY] = holder;

export function createService(db: Database, config: Config, clock: Clock = systemClock): Service {
  return { db, config, clock, cache: new Map(), limiter: new RateLimiter(db, clock), fetch: outboundFetch({ allowPrivate: config.allowPrivateUpstreams === true, allow: config.upstreamAllow }) };
}

/** The system clock, or the end-to-end tests' shifted clock (never with an https PUBLIC_URL: production). */
export function clockFor(config: Pick<Config, "publicUrl">, testClockFile: string | undefined): Clock {
  if (!testClockFile) return systemClock;
  if (config.publicUrl.startsWith("https:")) throw new Error("LATCHKEY_TEST_CLOCK_FILE is for end-to-end tests only and is refused with an https PUBLIC_URL");
  return fileOffsetClock(testClockFile);
}

async function start(): Promise<{ service: Service; handle: DatabaseHandle; changes?: Listener }> {
  const config = loadConfig();
  // Statement timings, signalled while observed (lib/signals: the metrics, once METRICS_PORT enables them), and the pool's state.
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, observer: databaseSignals(), ...config.databaseBounds });
  // On a database with pending migrations, what is applied and how long it took; while another
  // instance migrates, that this one waits (docs/operations.md, "Upgrades").
  await runMigrations(handle, config.databaseUrl, { log: (line) => console.log(`latchkey: ${line}`), waitTimeoutMs: config.migrationWaitTimeoutMs });
  const service = createService(handle.db, config, clockFor(config, process.env.LATCHKEY_TEST_CLOCK_FILE));
  // Other processes on the same PostgreSQL database announce their changes; the embedded database has no other process.
  const changes = config.databaseUrl ? followChanges(service, config.databaseListenUrl ?? config.databaseUrl) : undefined;
  return { service, handle, changes };
}

/** The process-wide service, opened and migrated on first use. */
export async function getService(): Promise<Service> {
  holder.service ??= start().catch((error) => {
    holder.service = undefined;
    throw error;
  });
  return (await holder.service).service;
}

export async function closeService(): Promise<void> {
  const current = holder.service;
  holder.service = undefined;
  if (!current) return;
  const { handle, changes } = await current;
  await changes?.close();
  await handle.close();
}

// ---------------------------------------------------------------------------------------------
// Caches and changes.
//
// Each process keeps a few things in `cache` to save a database round trip per request, each for
// at most a short time (its TTL), so a change made anywhere is seen within that time whatever
// happens. On top of that, a change is seen at once: the transaction that makes it announces it
// (`announceChange`, a NOTIFY delivered by PostgreSQL to every listening process when, and only
// if, the transaction commits), and every process drops what it held of that workspace as the
// message arrives (`followChanges`; about when the commit is acknowledged, a few milliseconds
// when CPUs are busy: docs/operations.md). The process that made the change also drops it itself
// right after the commit (`forgetWorkspace`), without waiting for its own message.
//
//   key                      holds                                  TTL     owner
//   workspace:<id>           the workspace exists, its name          5 s     lib/server/router.ts
//   signing-key:<id>         the active signing key (private)       30 s     lib/oauth/keys.ts
//   cors-origins:<id>        origins confirmed for reading errors    600 s    lib/oauth/cors.ts
//                            while the database is away (only then)
//   across:host-directory    every verified hostname → workspace      5 s     lib/hostnames/directory.ts
//                            (any workspace's change may affect it: `acrossWorkspacesKey`)
//   discovery:<id>           discovery documents as built bytes      30 s     lib/oauth/discovery.ts
//                            and ETag, per issuer and client_id (or
//                            none), at most 100, least recently
//                            asked for out first; active clients only
//   jwks:<id>                JWKS as built bytes and ETag            30 s     lib/oauth/discovery.ts
//                            (and no later than the first retired
//                            key's unpublishAt, which is by time)
//   hosted-pages:<id>        the token the kept sign-in pages of     30 s     lib/server/sign-in-page.ts
//                            the workspace were rendered under (the
//                            pages themselves, at most 256 across
//                            workspaces, are answered only while it
//                            is the same token)
//   sign-in-settings:<id>    what the sign-in page shows of the     30 s     lib/sign-in/page-settings.ts
//                            password policy (a reset link) and
//                            the bot protection's mode (the posts
//                            read both from the database)
//
// The public documents are built from clients, APIs, API grants and signing keys, the sign-in
// settings from the password and bot-protection policies, the kept sign-in pages from the workspace's branding (the rest of what they show is read per request and is part
// of their key), and every writer of those announces (console operations, the workspace import,
// the demo workspace's repairs, key publication and activation). Nothing else cached decides anything a change can affect: client
// secrets, clients, tokens, sessions and grants are read from the database on every request that
// decides with them (the credential memo of
// lib/oauth/client-memo.ts maps a secret to its row, and every use re-checks the row's liveness in
// SQL); the other entries derive from the configuration (the pairwise key, the default host), say
// what this process already did (the console's workspace prepared) or are informational (when a
// secret was last used).
//
// While the listening connection is down (the database restarting, a network failure) messages are
// lost: the TTLs above still bound every entry, and every workspace's entries are dropped when
// listening resumes.

/** The PostgreSQL channel changes are announced on. */
export const CHANGES_CHANNEL = "latchkey_changes";
/** How long a process waits for its own probe message before saying that messages do not arrive. */
const PROBE_TIMEOUT_MS = 5_000;
const PROBE_PREFIX = "probe:";

/** The keys of `Service.cache` that hold one workspace's data. */
export type WorkspaceCacheKind = "workspace" | "signing-key" | "cors-origins" | "discovery" | "jwks" | "hosted-pages" | "sign-in-settings";
const WORKSPACE_CACHE_KINDS: readonly WorkspaceCacheKind[] = ["workspace", "signing-key", "cors-origins", "discovery", "jwks", "hosted-pages", "sign-in-settings"];

export function workspaceCacheKey(kind: WorkspaceCacheKind, workspaceId: string): string {
  return `${kind}:${workspaceId}`;
}

/** The keys of entries that any workspace's change may affect, dropped with every workspace's. */
const ACROSS_WORKSPACES = new Set<string>();

/** The key of a cache entry that any workspace's change may affect (`across:<name>`): dropped whenever one changes. */
export function acrossWorkspacesKey(name: string): string {
  const key = `across:${name}`;
  ACROSS_WORKSPACES.add(key);
  return key;
}

/**
 * Announces that `workspaceId`'s configuration changed, inside the transaction `tx` that changes
 * it: every process listening (`followChanges`) drops what it caches of the workspace when the
 * transaction commits, and hears nothing if it rolls back. Harmless on the embedded database (one
 * process, nobody listening).
 */
export async function announceChange(tx: Database, workspaceId: string): Promise<void> {
  await tx.execute(sql`select pg_notify(${CHANGES_CHANNEL}, ${workspaceId})`);
}

// Per cache, process-wide: the custom server and Next's route bundles each load this module.
const GENERATIONS = Symbol.for("latchkey.cache-generations");
const generations = ((globalThis as Record<symbol, unknown>)[GENERATIONS] ??= new WeakMap()) as WeakMap<Map<string, unknown>, number>;

/**
 * Counts the changes this process has heard of. A cache filled from a read begun before a change
 * must not keep the result: read the generation before the read, and store only if it is the
 * same after (`cacheIfCurrent`).
 */
export function cacheGeneration(service: Pick<Service, "cache">): number {
  return generations.get(service.cache) ?? 0;
}

/** Stores `value` under `key` unless a change was heard of since `generation` was read (the value may predate it). */
export function cacheIfCurrent(service: Pick<Service, "cache">, generation: number, key: string, value: unknown): void {
  if (cacheGeneration(service) === generation) service.cache.set(key, value);
}

/** Drops what this process caches of `workspaceId` (and what any workspace's change may affect): its next request reads the database. */
export function forgetWorkspace(service: Pick<Service, "cache">, workspaceId: string): void {
  generations.set(service.cache, cacheGeneration(service) + 1);
  for (const kind of WORKSPACE_CACHE_KINDS) service.cache.delete(workspaceCacheKey(kind, workspaceId));
  for (const key of ACROSS_WORKSPACES) service.cache.delete(key);
}

const WORKSPACE_KEY_PREFIXES = WORKSPACE_CACHE_KINDS.map((kind) => `${kind}:`);

/** Drops what this process caches of every workspace (messages may have been missed). */
export function forgetEveryWorkspace(service: Pick<Service, "cache">): void {
  generations.set(service.cache, cacheGeneration(service) + 1);
  for (const key of service.cache.keys()) if (WORKSPACE_KEY_PREFIXES.some((prefix) => key.startsWith(prefix))) service.cache.delete(key);
  for (const key of ACROSS_WORKSPACES) service.cache.delete(key);
}

/**
 * Listens for the changes other processes announce on the database at `databaseUrl`, and drops
 * what `service` caches of each changed workspace as its message arrives. Each time listening
 * starts (again), every workspace's entries are dropped, since messages sent meanwhile were lost,
 * and a probe message checks that messages do arrive: through a transaction-pooling proxy
 * (PgBouncer's transaction mode) LISTEN seems to work but nothing is delivered, and the log says so.
 */
export function followChanges(service: Service, databaseUrl: string, log: Pick<Console, "warn" | "log"> = console): Listener {
  const probes = new Map<string, NodeJS.Timeout>();
  let wasLost = false;
  const listener = listen(databaseUrl, CHANGES_CHANNEL, {
    message(payload) {
      if (payload.startsWith(PROBE_PREFIX)) {
        clearTimeout(probes.get(payload));
        probes.delete(payload);
        return;
      }
      forgetWorkspace(service, payload);
    },
    listening() {
      forgetEveryWorkspace(service);
      if (wasLost) log.log("[latchkey] listening for changes of other instances again; cached workspace data dropped");
      wasLost = false;
      const probe = `${PROBE_PREFIX}${randomBytes(9).toString("base64url")}`;
      const timer = setTimeout(() => {
        probes.delete(probe);
        log.warn(
          `[latchkey] a change announced through the database (NOTIFY) did not arrive on the listening connection within ${PROBE_TIMEOUT_MS / 1000} s: ` +
            "does it go through a transaction-pooling proxy (PgBouncer in transaction mode)? Set DATABASE_LISTEN_URL to a direct connection; until then caches see other instances' changes only after their TTLs (docs/operations.md, Several instances).",
        );
      }, PROBE_TIMEOUT_MS);
      timer.unref();
      probes.set(probe, timer);
      service.db.execute(sql`select pg_notify(${CHANGES_CHANNEL}, ${probe})`).catch(() => {});
    },
    lost(error) {
      wasLost = true;
      log.warn(`[latchkey] not listening for changes of other instances (${error instanceof Error ? error.message : String(error)}); caches see them only after their TTLs until listening resumes`);
    },
  });
  return {
    get active() {
      return listener.active;
    },
    async close() {
      for (const timer of probes.values()) clearTimeout(timer);
      probes.clear();
      await listener.close();
    },
  };
}
