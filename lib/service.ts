import { openDatabase, runMigrations, type Database, type DatabaseHandle } from "../db/client";
import { fileOffsetClock, systemClock, type Clock } from "./clock";
import { loadConfig, type Config } from "./config";
import { RateLimiter } from "./limits/rate-limit";
import { outboundFetch } from "./outbound/fetch";

/** Everything an endpoint needs besides the request: database, configuration, clock. */
export interface Service {
  db: Database;
  config: Config;
  clock: Clock;
  /** Per-process caches that never outlive a change they depend on (see lib/oauth/keys.ts). */
  cache: Map<string, unknown>;
  limiter: RateLimiter;
  /**
   * How the service calls other servers (upstream identity providers, lib/federation): public
   * addresses only, checked after name resolution and on every redirect, bounded in size and time
   * (lib/outbound/fetch.ts; `allowPrivateUpstreams` lifts the address check for development).
   * Tests may route it to in-process services.
   */
  fetch: typeof fetch;
}

interface Holder {
  service?: Promise<{ service: Service; handle: DatabaseHandle }>;
}

// One service per process: the custom server and Next's route bundles import this module
// separately, and the embedded database must be opened exactly once.
const KEY = Symbol.for("latchkey.service");
const holder: Holder = ((globalThis as Record<symbol, unknown>)[KEY] as Holder) ?? {};
(globalThis as Record<symbol, unknown>)[KEY] = holder;

export function createService(db: Database, config: Config, clock: Clock = systemClock): Service {
  return { db, config, clock, cache: new Map(), limiter: new RateLimiter(db, clock), fetch: outboundFetch({ allowPrivate: config.allowPrivateUpstreams === true }) };
}

/** The system clock, or the end-to-end tests' shifted clock (never with an https PUBLIC_URL: production). */
export function clockFor(config: Pick<Config, "publicUrl">, testClockFile: string | undefined): Clock {
  if (!testClockFile) return systemClock;
  if (config.publicUrl.startsWith("https:")) throw new Error("LATCHKEY_TEST_CLOCK_FILE is for end-to-end tests only and is refused with an https PUBLIC_URL");
  return fileOffsetClock(testClockFile);
}

async function start(): Promise<{ service: Service; handle: DatabaseHandle }> {
  const config = loadConfig();
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  // On a database with pending migrations, what is applied and how long it took; while another
  // instance migrates, that this one waits (docs/operations.md, "Upgrades").
  await runMigrations(handle, config.databaseUrl, { log: (line) => console.log(`latchkey: ${line}`), waitTimeoutMs: config.migrationWaitTimeoutMs });
  return { service: createService(handle.db, config, clockFor(config, process.env.LATCHKEY_TEST_CLOCK_FILE)), handle };
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
  if (current) await (await current).handle.close();
}
