import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import path from "node:path";

export interface Config {
  port: number;
  /** Origin of the authentication host, without a trailing slash. */
  publicUrl: string;
  databaseUrl: string | undefined;
  /**
   * DATABASE_LISTEN_URL: the PostgreSQL connection on which a process listens for the changes
   * other processes announce (lib/service.ts), when DATABASE_URL goes through a transaction
   * pooler, where LISTEN does not work; left out: DATABASE_URL.
   */
  databaseListenUrl?: string;
  dataDir: string;
  /** 32-byte key that encrypts private signing keys and other secrets at rest. */
  masterKey: Buffer;
  rateLimits: RateLimitConfig;
  /** Take the client address from the left-most X-Forwarded-For (only behind a trusted proxy). */
  trustProxy: boolean;
  /** Server processes sharing the port (WEB_CONCURRENCY); above 1 only with DATABASE_URL. */
  workers: number;
  /** The HTTP server's limits and shutdown bound (always set by `loadConfig`; tests that build a Config may leave it out). */
  server?: ServerSettings;
  /** How email is sent (always set by `loadConfig`; a Config built without it: see `mailSettings`). */
  mail?: MailSettings;
  /**
   * Server-side requests (upstream identity providers) may reach loopback, private and other
   * non-public addresses (ALLOW_PRIVATE_UPSTREAMS; development and tests only, refused with an
   * https PUBLIC_URL). Off when left out.
   */
  allowPrivateUpstreams?: boolean;
  /**
   * UPSTREAM_ALLOW: the installation's own networks and identity-provider hosts that server-side
   * requests may reach although they are not public (lib/outbound/addresses.ts). Left out: none.
   */
  upstreamAllow?: UpstreamAllow;
  /**
   * The Prometheus listener (METRICS_PORT, METRICS_HOST): a port of its own, never the issuer's;
   * null or left out: none (lib/metrics/listener.ts, docs/configuration.md).
   */
  metrics?: MetricsSettings | null;
  /**
   * AUDIT_RETENTION_DAYS: audit events older than this many days are deleted by the background
   * purge; null or left out: every event is kept.
   */
  auditRetentionDays?: number | null;
  /**
   * The server's log (LOG_FORMAT, LOG_LEVEL): one line per request and the errors (lib/http/log.ts,
   * docs/configuration.md "Logs"); left out: human-readable lines at info.
   */
  log?: LogSettings;
  /**
   * MIGRATION_WAIT_TIMEOUT: how long an instance that starts while another migrates the database
   * waits for it before giving up (db/migrator.ts); 0: no bound. Left out: 30 minutes.
   */
  migrationWaitTimeoutMs?: number;
  /**
   * DATABASE_CONNECT_TIMEOUT and DATABASE_STATEMENT_TIMEOUT: how long a statement may wait for a
   * PostgreSQL connection, and run, before it fails with 503 (db/client.ts). Left out: 2 s and 5 s.
   * DATABASE_POOL_SIZE: the PostgreSQL connections each server process keeps. Left out:
   * db/client.ts's DEFAULT_POOL_SIZE.
   */
  databaseBounds?: { connectionWaitMs: number; statementTimeoutMs: number; poolSize?: number };
  /**
   * PASSWORD_BREACH_RANGE_URL: the k-anonymity range service the workspaces that screen passwords
   * also ask (lib/passwords/breach-range.ts; the first 5 hex characters of the SHA-1 are appended).
   * Left out: none (the bundled list and the score still apply).
   */
  passwordBreachRangeUrl?: string;
  /**
   * ALERT_PLACE_LOOKUP_URL: where the security alerts by email look up an approximate place for a
   * client address (lib/security-alerts/place.ts; `{address}` is replaced). Left out: none (the
   * alerts show the address only).
   */
  alertPlaceLookupUrl?: string;
}

/** The levels of the server's log, most detailed first; `silent` writes nothing. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogSettings {
  /** `json`: one JSON object per line (production's default); `pretty`: one readable line (development's). */
  format: "json" | "pretty";
  /** Lines below this level are not written (request lines are `info`, health checks `debug`). */
  level: LogLevel;
}

export interface MetricsSettings {
  port: number;
  /** The address it binds: loopback unless METRICS_HOST says otherwise (a scraper on another host needs 0.0.0.0). */
  host: string;
}

/**
 * Email (one-time codes, sign-up): over SMTP when SMTP_URL is set; otherwise into the development
 * outbox (listed in the console), except in production (an https PUBLIC_URL), where email methods
 * are unavailable rather than silently undelivered.
 */
/**
 * `from`: MAIL_FROM, or the default `Latchkey <no-reply@{PUBLIC_URL's host}>`; `fromIsDefault`:
 * MAIL_FROM was not given, so the sender follows the hostname a flow started at. `print`: the
 * outbox also prints each message's recipient and subject (a code is its first word) to stdout
 * (MAIL_OUTBOX_PRINT; by default on, and off with NODE_ENV=production, as `npm start` runs;
 * `loadConfig` always sets it, and settings built by hand that leave it out print).
 */
export type MailSettings = { from: string; fromIsDefault?: boolean } & ({ transport: "smtp"; smtpUrl: string } | { transport: "outbox"; print?: boolean } | { transport: "unavailable" });

/** A settable MAIL_FROM: an address, or a display name and an address in angle brackets. */
const MAIL_FROM_PATTERN = /^(?:[^<>\r\n"]{1,100} <[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/;

function parseSmtpUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`SMTP_URL must be a URL such as smtps://user:password@smtp.example.com:465 (got an unparsable value)`);
  }
  // The URL may carry a password: never echo it.
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") throw new ConfigError(`SMTP_URL must use smtps:// (implicit TLS) or smtp:// (STARTTLS when offered) (got ${url.protocol}//)`);
  if (!url.hostname) throw new ConfigError("SMTP_URL must name a host");
  return raw;
}

export function parseMailSettings(env: Record<string, string | undefined>, publicUrl: string): MailSettings {
  const smtpUrl = parseSmtpUrl(env.SMTP_URL);
  const rawFrom = env.MAIL_FROM?.trim();
  if (rawFrom && !MAIL_FROM_PATTERN.test(rawFrom)) throw new ConfigError(`MAIL_FROM must be an address, or a name and an address: Example <no-reply@example.com> (got "${rawFrom}")`);
  const from = rawFrom || defaultSender(new URL(publicUrl).hostname);
  const fromIsDefault = !rawFrom;
  const print = env.MAIL_OUTBOX_PRINT === undefined || env.MAIL_OUTBOX_PRINT === "" ? env.NODE_ENV !== "production" : parseBoolean("MAIL_OUTBOX_PRINT", env.MAIL_OUTBOX_PRINT);
  if (smtpUrl) return { transport: "smtp", smtpUrl, from, fromIsDefault };
  if (publicUrl.startsWith("https:")) return { transport: "unavailable", from, fromIsDefault };
  return { transport: "outbox", print, from, fromIsDefault };
}

/** The sender when MAIL_FROM is not set: no-reply at the authentication host the mail is about. */
export function defaultSender(hostname: string): string {
  return `Latchkey <no-reply@${hostname}>`;
}

/** The mail settings in force: as loaded, or (a Config built by hand) derived from PUBLIC_URL with no SMTP_URL. */
export function mailSettings(config: Pick<Config, "mail" | "publicUrl">): MailSettings {
  return config.mail ?? parseMailSettings({}, config.publicUrl);
}

export interface ServerSettings {
  /** A client must send the whole request head within this long (HTTP_HEADERS_TIMEOUT, seconds). */
  headersTimeoutMs: number;
  /** A client must send the whole request, body included, within this long (HTTP_REQUEST_TIMEOUT, seconds). */
  requestTimeoutMs: number;
  /** Open connections per client address (an IPv6 /64) and server process; 0 disables (HTTP_CONNECTIONS_PER_ADDRESS). */
  connectionsPerAddress: number;
  /** On SIGTERM, requests in flight get this long to finish (SHUTDOWN_TIMEOUT, seconds). */
  shutdownTimeoutMs: number;
}

export const DEFAULT_SERVER_SETTINGS: ServerSettings = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  connectionsPerAddress: 256,
  shutdownTimeoutMs: 10_000,
};

export interface RateLimitConfig {
  /** Requests per minute per client address, and per client, on each workspace; 0 disables. */
  requestsPerMinute: number;
  /** Failed client authentications or sign-ins per 5 minutes per client (or account) and address; 0 disables. */
  failuresPer5Minutes: number;
}

export const DEFAULT_RATE_LIMITS: RateLimitConfig = { requestsPerMinute: 1200, failuresPer5Minutes: 10 };

function parseCount(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) > 10_000_000) throw new ConfigError(`${name} must be a whole number (0 disables) (got "${raw}")`);
  return Number(raw);
}

/** DATABASE_POOL_SIZE, 1-100; unset: db/client.ts's default (DEFAULT_POOL_SIZE, where the reasons are). */
function parsePoolSize(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const value = raw.trim();
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 100) throw new ConfigError(`DATABASE_POOL_SIZE must be a whole number of connections from 1 to 100 (got "${raw}")`);
  return Number(value);
}

/** AUDIT_RETENTION_DAYS: unset or 0 keeps every audit event (the default); otherwise 1–36500 days. */
function parseAuditRetention(raw: string | undefined): number | null {
  if (raw === undefined || raw.trim() === "" || raw.trim() === "0") return null;
  const value = raw.trim();
  if (!/^\d+$/.test(value) || Number(value) > 36_500) throw new ConfigError(`AUDIT_RETENTION_DAYS must be a number of days from 1 to 36500, or 0 to keep every event (got "${raw}")`);
  return Number(value);
}

/** MIGRATION_WAIT_TIMEOUT: seconds (0–86400, 0 for no bound); unset: 1800. */
function parseMigrationWait(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return 1800_000;
  const value = raw.trim();
  if (!/^\d+$/.test(value) || Number(value) > 86_400) throw new ConfigError(`MIGRATION_WAIT_TIMEOUT must be a whole number of seconds from 0 (no bound) to 86400 (got "${raw}")`);
  return Number(value) * 1000;
}

function parseBoolean(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === "" || raw === "0" || raw === "false") return false;
  if (raw === "1" || raw === "true") return true;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
}

function parseSeconds(name: string, raw: string | undefined, fallbackMs: number, max: number): number {
  if (raw === undefined || raw === "") return fallbackMs;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) throw new ConfigError(`${name} must be a whole number of seconds from 1 to ${max} (got "${raw}")`);
  return Number(raw) * 1000;
}

function parseServerSettings(env: Record<string, string | undefined>, trustProxy: boolean): ServerSettings {
  const headersTimeoutMs = parseSeconds("HTTP_HEADERS_TIMEOUT", env.HTTP_HEADERS_TIMEOUT, DEFAULT_SERVER_SETTINGS.headersTimeoutMs, 300);
  const requestTimeoutMs = parseSeconds("HTTP_REQUEST_TIMEOUT", env.HTTP_REQUEST_TIMEOUT, DEFAULT_SERVER_SETTINGS.requestTimeoutMs, 3600);
  // Node refuses a head timeout longer than the whole request's.
  if (headersTimeoutMs > requestTimeoutMs) throw new ConfigError(`HTTP_HEADERS_TIMEOUT must not exceed HTTP_REQUEST_TIMEOUT (got ${headersTimeoutMs / 1000} and ${requestTimeoutMs / 1000})`);
  // Behind a trusted proxy every connection comes from the proxy: no cap unless one is set.
  const connectionsPerAddress = parseCount(
    "HTTP_CONNECTIONS_PER_ADDRESS",
    env.HTTP_CONNECTIONS_PER_ADDRESS,
    trustProxy ? 0 : DEFAULT_SERVER_SETTINGS.connectionsPerAddress,
  );
  const shutdownTimeoutMs = parseSeconds("SHUTDOWN_TIMEOUT", env.SHUTDOWN_TIMEOUT, DEFAULT_SERVER_SETTINGS.shutdownTimeoutMs, 600);
  return { headersTimeoutMs, requestTimeoutMs, connectionsPerAddress, shutdownTimeoutMs };
}

/** ALLOW_PRIVATE_UPSTREAMS: a development setting, so it cannot be on in production (an https PUBLIC_URL). */
function parseAllowPrivateUpstreams(raw: string | undefined, publicUrl: string): boolean {
  const on = parseBoolean("ALLOW_PRIVATE_UPSTREAMS", raw);
  if (on && publicUrl.startsWith("https:")) {
    throw new ConfigError("ALLOW_PRIVATE_UPSTREAMS is for development only and is refused with an https PUBLIC_URL: list the identity providers on your own network in UPSTREAM_ALLOW");
  }
  return on;
}

/** UPSTREAM_ALLOW as validated: host names lowercase without a trailing dot; networks as `address/prefix`. */
export interface UpstreamAllow {
  hosts: string[];
  networks: string[];
}

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * UPSTREAM_ALLOW: comma-separated host names and networks (an IPv4 or IPv6 address with an
 * optional /prefix length; a bare address is the one address). Works with an https PUBLIC_URL.
 */
function parseUpstreamAllow(raw: string | undefined): UpstreamAllow {
  const allow: UpstreamAllow = { hosts: [], networks: [] };
  for (const part of (raw ?? "").split(",")) {
    const entry = part.trim();
    if (entry === "") continue;
    const slash = entry.indexOf("/");
    const address = (slash >= 0 ? entry.slice(0, slash) : entry).replace(/^\[(.*)\]$/, "$1");
    const family = isIP(address);
    if (family !== 0) {
      if (address.includes("%")) throw new ConfigError(`UPSTREAM_ALLOW: "${entry}" names an interface (%zone); give the network without it`);
      const max = family === 4 ? 32 : 128;
      const bits = slash >= 0 ? entry.slice(slash + 1) : String(max);
      if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) throw new ConfigError(`UPSTREAM_ALLOW: "${entry}" needs a prefix length from 1 to ${max}`);
      if (Number(bits) === 0) throw new ConfigError(`UPSTREAM_ALLOW: "${entry}" would admit every address; list the internal networks themselves (such as 10.0.0.0/8)`);
      allow.networks.push(`${address.toLowerCase()}/${Number(bits)}`);
      continue;
    }
    const host = entry.toLowerCase().replace(/\.$/, "");
    const labels = host.split(".");
    if (slash >= 0 || host.length > 253 || !labels.every((l) => HOST_LABEL.test(l)) || /^\d+$/.test(labels[labels.length - 1]!)) {
      throw new ConfigError(`UPSTREAM_ALLOW: "${entry}" is neither a host name (idp.corp.example) nor a network (10.0.0.0/8, fd00::/8)`);
    }
    allow.hosts.push(host);
  }
  return allow;
}

/** A configuration problem: the message is one line naming the variable. */
export class ConfigError extends Error {}

function parsePort(raw: string | undefined): number {
  if (raw === undefined || raw === "") return 3000;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 65535) {
    throw new ConfigError(`PORT must be an integer from 1 to 65535 (got "${raw}")`);
  }
  return Number(raw);
}

function parsePublicUrl(raw: string | undefined, port: number): string {
  if (raw === undefined || raw === "") return `http://localhost:${port}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute URL such as https://auth.example.com (got "${raw}")`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigError(`PUBLIC_URL must use https (or http for local development) (got "${raw}")`);
  }
  if (url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`PUBLIC_URL must be an origin only, with no path, query or credentials (got "${raw}")`);
  }
  return url.origin;
}

const MAX_WORKERS = 64;

function parseWorkers(raw: string | undefined, databaseUrl: string | undefined): number {
  if (raw === undefined || raw === "") return 1;
  // One process per core the server may use (docs/operations.md, "Sizing"); the embedded database admits one.
  if (raw.trim() === "auto") return databaseUrl ? Math.min(MAX_WORKERS, availableParallelism()) : 1;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_WORKERS) {
    throw new ConfigError(`WEB_CONCURRENCY must be a whole number of server processes from 1 to ${MAX_WORKERS}, or auto (got "${raw}")`);
  }
  const workers = Number(raw);
  if (workers > 1 && !databaseUrl) {
    throw new ConfigError("WEB_CONCURRENCY above 1 needs DATABASE_URL: the embedded database admits one process");
  }
  return workers;
}

function parseMetricsSettings(env: Record<string, string | undefined>, port: number): MetricsSettings | null {
  const raw = env.METRICS_PORT;
  if (raw === undefined || raw === "") {
    if (env.METRICS_HOST) throw new ConfigError("METRICS_HOST needs METRICS_PORT");
    return null;
  }
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 65535) throw new ConfigError(`METRICS_PORT must be a port number from 1 to 65535 (got "${raw}")`);
  if (Number(raw) === port) throw new ConfigError("METRICS_PORT must differ from PORT: metrics are never served on the issuer's listener");
  const host = env.METRICS_HOST === undefined || env.METRICS_HOST === "" ? "127.0.0.1" : env.METRICS_HOST;
  if (!/^[0-9A-Za-z.:-]{1,253}$/.test(host)) throw new ConfigError(`METRICS_HOST must be an address or a host name (got "${host}")`);
  return { port: Number(raw), host };
}

/**
 * LOG_FORMAT (json or pretty; by default json when NODE_ENV is production, as `npm start` runs the
 * server, and readable lines otherwise, as `npm run dev`) and LOG_LEVEL (info by default).
 */
export function parseLogSettings(env: Record<string, string | undefined>): LogSettings {
  const rawFormat = env.LOG_FORMAT?.trim() ?? "";
  if (rawFormat !== "" && rawFormat !== "json" && rawFormat !== "pretty") throw new ConfigError(`LOG_FORMAT must be json or pretty (got "${rawFormat}")`);
  const format = rawFormat === "" ? (env.NODE_ENV === "production" ? "json" : "pretty") : rawFormat;
  const rawLevel = env.LOG_LEVEL?.trim().toLowerCase() ?? "";
  if (rawLevel !== "" && !(LOG_LEVELS as readonly string[]).includes(rawLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")} (got "${env.LOG_LEVEL}")`);
  return { format, level: rawLevel === "" ? "info" : (rawLevel as LogLevel) };
}

function parseDatabaseUrl(raw: string | undefined, name = "DATABASE_URL"): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a postgres:// URL`);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new ConfigError(`${name} must be a postgres:// or postgresql:// URL`);
  }
  return raw;
}

/** DATABASE_LISTEN_URL: another URL of the same database, for the listening connection; only with DATABASE_URL. */
function parseDatabaseListenUrl(raw: string | undefined, databaseUrl: string | undefined): string | undefined {
  const url = parseDatabaseUrl(raw, "DATABASE_LISTEN_URL");
  if (url && !databaseUrl) throw new ConfigError("DATABASE_LISTEN_URL needs DATABASE_URL: the embedded database has no other process to hear from");
  return url;
}

/** Accepts 64 hex characters or 32 bytes as base64/base64url. */
export function parseMasterKey(raw: string): Buffer {
  const value = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, "hex");
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const buf = Buffer.from(value.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (buf.length === 32) return buf;
  }
  throw new ConfigError("MASTER_KEY must be 32 bytes as 64 hex characters or base64url (generate one with: openssl rand -hex 32)");
}

function loadOrCreateMasterKey(raw: string | undefined, databaseUrl: string | undefined, dataDir: string): Buffer {
  if (raw !== undefined && raw !== "") return parseMasterKey(raw);
  if (databaseUrl) {
    throw new ConfigError("MASTER_KEY is required when DATABASE_URL is set (generate one with: openssl rand -hex 32)");
  }
  const file = path.join(/*turbopackIgnore: true*/ dataDir, "master.key");
  if (existsSync(file)) {
    try {
      return parseMasterKey(readFileSync(file, "utf8"));
    } catch {
      throw new ConfigError(`MASTER_KEY: the generated key file ${file} is unreadable or corrupt`);
    }
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, key.toString("hex") + "\n", { mode: 0o600, flag: "wx" });
  return key;
}

/**
 * Whether PUBLIC_URL is plain http on this machine (localhost, 127.0.0.1, [::1]): a development
 * issuer, which only someone on that machine reaches under that name. Its hosted error pages say
 * more than a production issuer tells an unauthenticated caller (an application's registered
 * redirect URIs on a mismatch, lib/oauth/authorize.ts).
 */
export function isLoopbackPublicUrl(publicUrl: string): boolean {
  const url = new URL(publicUrl);
  return url.protocol === "http:" && isLoopbackHost(url.hostname);
}

/**
 * The names of this machine that plain http is allowed for (development): the one list for
 * redirect URIs (lib/uris.ts), upstream identity providers (lib/federation) and the
 * development issuer above. `hostname` as the URL parser gives it (IPv6 in brackets).
 */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname.toLowerCase());
}

/** PUBLIC_URL as `loadConfig` reads it, without the rest (for code that needs only the site's origin, such as proxy.ts). */
export function configuredPublicUrl(env: Record<string, string | undefined> = process.env): string {
  return parsePublicUrl(env.PUBLIC_URL, parsePort(env.PORT));
}

/** TRUST_PROXY as `loadConfig` reads it, for code that has no Config (proxy.ts reads the request's host by it). */
export function configuredTrustProxy(env: Record<string, string | undefined> = process.env): boolean {
  return parseBoolean("TRUST_PROXY", env.TRUST_PROXY);
}

/** PASSWORD_BREACH_RANGE_URL: an absolute http(s) URL the 5-character prefix is appended to; empty or unset: none. */
function parseBreachRangeUrl(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new ConfigError("PASSWORD_BREACH_RANGE_URL must be an absolute http(s) URL, such as https://api.pwnedpasswords.com/range/");
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.search || url.hash || url.username || url.password) {
    throw new ConfigError("PASSWORD_BREACH_RANGE_URL must be an absolute http(s) URL without a query, such as https://api.pwnedpasswords.com/range/");
  }
  return url.href;
}

/** ALERT_PLACE_LOOKUP_URL: an absolute http(s) URL with `{address}` in it; empty or unset: none. */
function parsePlaceLookupUrl(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const wanted = "ALERT_PLACE_LOOKUP_URL must be an absolute http(s) URL with {address} where the client address goes, such as https://ipinfo.io/{address}/json";
  let url: URL;
  try {
    url = new URL(value.trim().replace("{address}", "0.0.0.0"));
  } catch {
    throw new ConfigError(wanted);
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password || !value.includes("{address}")) throw new ConfigError(wanted);
  return value.trim();
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const port = parsePort(env.PORT);
  const publicUrl = parsePublicUrl(env.PUBLIC_URL, port);
  const databaseUrl = parseDatabaseUrl(env.DATABASE_URL);
  const databaseListenUrl = parseDatabaseListenUrl(env.DATABASE_LISTEN_URL, databaseUrl);
  if (env.DATA_DIR !== undefined && env.DATA_DIR.trim() === "") throw new ConfigError("DATA_DIR must not be empty");
  const dataDir = path.resolve(/*turbopackIgnore: true*/ env.DATA_DIR ?? ".data");
  const workers = parseWorkers(env.WEB_CONCURRENCY, databaseUrl);
  const masterKey = loadOrCreateMasterKey(env.MASTER_KEY, databaseUrl, dataDir);
  const rateLimits = {
    requestsPerMinute: parseCount("RATE_LIMIT_PER_MINUTE", env.RATE_LIMIT_PER_MINUTE, DEFAULT_RATE_LIMITS.requestsPerMinute),
    failuresPer5Minutes: parseCount("RATE_LIMIT_FAILURES", env.RATE_LIMIT_FAILURES, DEFAULT_RATE_LIMITS.failuresPer5Minutes),
  };
  const trustProxy = parseBoolean("TRUST_PROXY", env.TRUST_PROXY);
  const server = parseServerSettings(env, trustProxy);
  const mail = parseMailSettings(env, publicUrl);
  const allowPrivateUpstreams = parseAllowPrivateUpstreams(env.ALLOW_PRIVATE_UPSTREAMS, publicUrl);
  const upstreamAllow = parseUpstreamAllow(env.UPSTREAM_ALLOW);
  const metrics = parseMetricsSettings(env, port);
  const auditRetentionDays = parseAuditRetention(env.AUDIT_RETENTION_DAYS);
  const log = parseLogSettings(env);
  const migrationWaitTimeoutMs = parseMigrationWait(env.MIGRATION_WAIT_TIMEOUT);
  const databaseBounds = {
    connectionWaitMs: parseSeconds("DATABASE_CONNECT_TIMEOUT", env.DATABASE_CONNECT_TIMEOUT, 2000, 60),
    statementTimeoutMs: parseSeconds("DATABASE_STATEMENT_TIMEOUT", env.DATABASE_STATEMENT_TIMEOUT, 5000, 3600),
    poolSize: parsePoolSize(env.DATABASE_POOL_SIZE),
  };
  const passwordBreachRangeUrl = parseBreachRangeUrl(env.PASSWORD_BREACH_RANGE_URL);
  const alertPlaceLookupUrl = parsePlaceLookupUrl(env.ALERT_PLACE_LOOKUP_URL);
  return { ...(passwordBreachRangeUrl ? { passwordBreachRangeUrl } : {}), ...(alertPlaceLookupUrl ? { alertPlaceLookupUrl } : {}), port, publicUrl, databaseUrl, ...(databaseListenUrl ? { databaseListenUrl } : {}), dataDir, masterKey, rateLimits, trustProxy, workers, server, mail, allowPrivateUpstreams, upstreamAllow, metrics, auditRetentionDays, log, migrationWaitTimeoutMs, databaseBounds };
}
