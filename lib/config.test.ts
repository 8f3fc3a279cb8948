import { mkdtempSync, readFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, isLoopbackPublicUrl, loadConfig, mailSettings, parseMasterKey } from "./config";

const dir = () => mkdtempSync(path.join(tmpdir(), "latchkey-config-"));

describe("configuration", () => {
  it("has defaults for a first run: port 3000, localhost URL, generated master key in DATA_DIR", () => {
    const dataDir = dir();
    const config = loadConfig({ DATA_DIR: dataDir });
    expect(config.port).toBe(3000);
    expect(config.publicUrl).toBe("http://localhost:3000");
    expect(config.databaseUrl).toBeUndefined();
    expect(config.masterKey).toHaveLength(32);
    expect(readFileSync(path.join(dataDir, "master.key"), "utf8").trim()).toBe(config.masterKey.toString("hex"));
    // The same key on the next start.
    expect(loadConfig({ DATA_DIR: dataDir }).masterKey.equals(config.masterKey)).toBe(true);
  });

  it("runs one server process unless WEB_CONCURRENCY asks for more, with PostgreSQL", () => {
    expect(loadConfig({ DATA_DIR: dir() }).workers).toBe(1);
    expect(loadConfig({ DATA_DIR: dir(), WEB_CONCURRENCY: "1" }).workers).toBe(1);
    expect(loadConfig({ DATA_DIR: dir(), WEB_CONCURRENCY: "4", DATABASE_URL: "postgres://localhost/x", MASTER_KEY: "a".repeat(64) }).workers).toBe(4);
    // auto: one per core with PostgreSQL; the embedded database admits one process.
    expect(loadConfig({ DATA_DIR: dir(), WEB_CONCURRENCY: "auto", DATABASE_URL: "postgres://localhost/x", MASTER_KEY: "a".repeat(64) }).workers).toBe(Math.min(64, availableParallelism()));
    expect(loadConfig({ DATA_DIR: dir(), WEB_CONCURRENCY: "auto" }).workers).toBe(1);
  });

  it("listens for other instances' changes on DATABASE_URL unless DATABASE_LISTEN_URL names another connection", () => {
    const base = { DATA_DIR: dir(), DATABASE_URL: "postgres://pooler/x", MASTER_KEY: "a".repeat(64) };
    expect(loadConfig(base).databaseListenUrl).toBeUndefined();
    expect(loadConfig({ ...base, DATABASE_LISTEN_URL: "postgres://direct/x" }).databaseListenUrl).toBe("postgres://direct/x");
  });

  it("bounds slow clients well below Node's defaults (60 s for the head, 300 s per request) and caps connections per address", () => {
    expect(loadConfig({ DATA_DIR: dir() }).server).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, connectionsPerAddress: 256, shutdownTimeoutMs: 10_000 });
    const tuned = loadConfig({ DATA_DIR: dir(), HTTP_HEADERS_TIMEOUT: "5", HTTP_REQUEST_TIMEOUT: "20", HTTP_CONNECTIONS_PER_ADDRESS: "32", SHUTDOWN_TIMEOUT: "25" });
    expect(tuned.server).toEqual({ headersTimeoutMs: 5000, requestTimeoutMs: 20_000, connectionsPerAddress: 32, shutdownTimeoutMs: 25_000 });
    // Behind a trusted proxy every connection comes from the proxy: no cap unless one is set.
    expect(loadConfig({ DATA_DIR: dir(), TRUST_PROXY: "true" }).server?.connectionsPerAddress).toBe(0);
    expect(loadConfig({ DATA_DIR: dir(), TRUST_PROXY: "true", HTTP_CONNECTIONS_PER_ADDRESS: "1000" }).server?.connectionsPerAddress).toBe(1000);
  });

  it("serves no metrics unless METRICS_PORT is set; then on loopback unless METRICS_HOST says otherwise", () => {
    expect(loadConfig({ DATA_DIR: dir() }).metrics).toBeNull();
    expect(loadConfig({ DATA_DIR: dir(), METRICS_PORT: "9464" }).metrics).toEqual({ port: 9464, host: "127.0.0.1" });
    expect(loadConfig({ DATA_DIR: dir(), METRICS_PORT: "9464", METRICS_HOST: "0.0.0.0" }).metrics).toEqual({ port: 9464, host: "0.0.0.0" });
  });

  it("logs readable lines at info in development, JSON lines in production (NODE_ENV), unless LOG_FORMAT and LOG_LEVEL say otherwise", () => {
    expect(loadConfig({ DATA_DIR: dir() }).log).toEqual({ format: "pretty", level: "info" });
    expect(loadConfig({ DATA_DIR: dir(), NODE_ENV: "production" }).log).toEqual({ format: "json", level: "info" });
    expect(loadConfig({ DATA_DIR: dir(), NODE_ENV: "production", LOG_FORMAT: "pretty" }).log).toEqual({ format: "pretty", level: "info" });
    expect(loadConfig({ DATA_DIR: dir(), LOG_FORMAT: "json", LOG_LEVEL: "DEBUG" }).log).toEqual({ format: "json", level: "debug" });
    expect(loadConfig({ DATA_DIR: dir(), LOG_LEVEL: "silent" }).log).toEqual({ format: "pretty", level: "silent" });
  });

  it("keeps every audit event unless AUDIT_RETENTION_DAYS names a number of days", () => {
    expect(loadConfig({ DATA_DIR: dir() }).auditRetentionDays).toBeNull();
    expect(loadConfig({ DATA_DIR: dir(), AUDIT_RETENTION_DAYS: "0" }).auditRetentionDays).toBeNull();
    expect(loadConfig({ DATA_DIR: dir(), AUDIT_RETENTION_DAYS: "400" }).auditRetentionDays).toBe(400);
    for (const bad of ["-1", "1.5", "a year", "36501"]) expect(() => loadConfig({ DATA_DIR: dir(), AUDIT_RETENTION_DAYS: bad })).toThrow(/AUDIT_RETENTION_DAYS must be a number of days/);
  });

  it("bounds a database statement's wait for a connection (2 s) and its run (5 s) unless DATABASE_CONNECT_TIMEOUT and DATABASE_STATEMENT_TIMEOUT say otherwise", () => {
    expect(loadConfig({ DATA_DIR: dir() }).databaseBounds).toEqual({ connectionWaitMs: 2000, statementTimeoutMs: 5000 });
    expect(loadConfig({ DATA_DIR: dir(), DATABASE_CONNECT_TIMEOUT: "3", DATABASE_STATEMENT_TIMEOUT: "30" }).databaseBounds).toEqual({ connectionWaitMs: 3000, statementTimeoutMs: 30_000 });
    for (const bad of ["0", "-1", "1.5", "soon", "61"]) expect(() => loadConfig({ DATA_DIR: dir(), DATABASE_CONNECT_TIMEOUT: bad })).toThrow(/DATABASE_CONNECT_TIMEOUT must be a whole number of seconds from 1 to 60/);
    for (const bad of ["0", "3601"]) expect(() => loadConfig({ DATA_DIR: dir(), DATABASE_STATEMENT_TIMEOUT: bad })).toThrow(/DATABASE_STATEMENT_TIMEOUT must be a whole number of seconds from 1 to 3600/);
  });

  it("keeps DATABASE_POOL_SIZE PostgreSQL connections per process (1-100); unset, the database client's default", () => {
    expect(loadConfig({ DATA_DIR: dir() }).databaseBounds?.poolSize).toBeUndefined();
    expect(loadConfig({ DATA_DIR: dir(), DATABASE_POOL_SIZE: "12" }).databaseBounds?.poolSize).toBe(12);
    expect(loadConfig({ DATA_DIR: dir(), DATABASE_POOL_SIZE: " 1 " }).databaseBounds?.poolSize).toBe(1);
    for (const bad of ["0", "101", "2.5", "-3", "many"]) expect(() => loadConfig({ DATA_DIR: dir(), DATABASE_POOL_SIZE: bad })).toThrow(/DATABASE_POOL_SIZE must be a whole number of connections from 1 to 100/);
  });

  it("waits 30 minutes for another instance's migration unless MIGRATION_WAIT_TIMEOUT says otherwise (0: no bound)", () => {
    expect(loadConfig({ DATA_DIR: dir() }).migrationWaitTimeoutMs).toBe(1_800_000);
    expect(loadConfig({ DATA_DIR: dir(), MIGRATION_WAIT_TIMEOUT: "0" }).migrationWaitTimeoutMs).toBe(0);
    expect(loadConfig({ DATA_DIR: dir(), MIGRATION_WAIT_TIMEOUT: "120" }).migrationWaitTimeoutMs).toBe(120_000);
    for (const bad of ["-1", "1.5", "an hour", "86401"]) expect(() => loadConfig({ DATA_DIR: dir(), MIGRATION_WAIT_TIMEOUT: bad })).toThrow(/MIGRATION_WAIT_TIMEOUT must be a whole number of seconds/);
  });

  it("looks up no place for the security alerts unless ALERT_PLACE_LOOKUP_URL is an http(s) URL with {address}", () => {
    expect(loadConfig({ DATA_DIR: dir() }).alertPlaceLookupUrl).toBeUndefined();
    expect(loadConfig({ DATA_DIR: dir(), ALERT_PLACE_LOOKUP_URL: "https://ipinfo.io/{address}/json" }).alertPlaceLookupUrl).toBe("https://ipinfo.io/{address}/json");
    for (const bad of ["https://ipinfo.io/json", "ftp://ipinfo.io/{address}", "not a url {address}"]) {
      expect(() => loadConfig({ DATA_DIR: dir(), ALERT_PLACE_LOOKUP_URL: bad }), bad).toThrow(/ALERT_PLACE_LOOKUP_URL/);
    }
  });

  it("derives PUBLIC_URL from PORT and keeps an explicit origin without a trailing slash", () => {
    expect(loadConfig({ DATA_DIR: dir(), PORT: "4000" }).publicUrl).toBe("http://localhost:4000");
    expect(loadConfig({ DATA_DIR: dir(), PUBLIC_URL: "https://auth.example.com/" }).publicUrl).toBe("https://auth.example.com");
  });

  const invalid: [string, Record<string, string>][] = [
    ["PORT", { PORT: "http" }],
    ["PORT", { PORT: "70000" }],
    ["PUBLIC_URL", { PUBLIC_URL: "not a url" }],
    ["PUBLIC_URL", { PUBLIC_URL: "https://auth.example.com/t/demo" }],
    ["PUBLIC_URL", { PUBLIC_URL: "ftp://auth.example.com" }],
    ["DATABASE_URL", { DATABASE_URL: "mysql://localhost/x" }],
    ["DATABASE_LISTEN_URL", { DATABASE_URL: "postgres://localhost/x", MASTER_KEY: "a".repeat(64), DATABASE_LISTEN_URL: "mysql://localhost/x" }],
    // The embedded database has no other process to hear from.
    ["DATABASE_LISTEN_URL", { DATABASE_LISTEN_URL: "postgres://localhost/x" }],
    ["MASTER_KEY", { DATABASE_URL: "postgres://localhost/x" }],
    ["MASTER_KEY", { MASTER_KEY: "too-short" }],
    ["RATE_LIMIT_PER_MINUTE", { RATE_LIMIT_PER_MINUTE: "-1" }],
    ["TRUST_PROXY", { TRUST_PROXY: "maybe" }],
    ["WEB_CONCURRENCY", { WEB_CONCURRENCY: "0" }],
    ["WEB_CONCURRENCY", { WEB_CONCURRENCY: "two" }],
    ["WEB_CONCURRENCY", { WEB_CONCURRENCY: "65", DATABASE_URL: "postgres://localhost/x", MASTER_KEY: "a".repeat(64) }],
    // The embedded database admits one process.
    ["WEB_CONCURRENCY", { WEB_CONCURRENCY: "2" }],
    ["HTTP_HEADERS_TIMEOUT", { HTTP_HEADERS_TIMEOUT: "0" }],
    ["HTTP_HEADERS_TIMEOUT", { HTTP_HEADERS_TIMEOUT: "40", HTTP_REQUEST_TIMEOUT: "30" }],
    ["HTTP_REQUEST_TIMEOUT", { HTTP_REQUEST_TIMEOUT: "1.5" }],
    ["HTTP_CONNECTIONS_PER_ADDRESS", { HTTP_CONNECTIONS_PER_ADDRESS: "many" }],
    ["SHUTDOWN_TIMEOUT", { SHUTDOWN_TIMEOUT: "-1" }],
    ["METRICS_PORT", { METRICS_PORT: "0" }],
    ["METRICS_PORT", { METRICS_PORT: "metrics" }],
    // Never the issuer's listener.
    ["METRICS_PORT", { PORT: "4000", METRICS_PORT: "4000" }],
    ["METRICS_HOST", { METRICS_HOST: "0.0.0.0" }],
    ["METRICS_HOST", { METRICS_PORT: "9464", METRICS_HOST: "bad host" }],
    ["LOG_FORMAT", { LOG_FORMAT: "text" }],
    ["LOG_LEVEL", { LOG_LEVEL: "verbose" }],
  ];
  for (const [variable, env] of invalid) {
    it(`stops with one line naming ${variable} for ${JSON.stringify(env)}`, () => {
      let error: unknown;
      try {
        loadConfig({ DATA_DIR: dir(), ...env });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message.startsWith(variable)).toBe(true);
      expect(message).not.toContain("\n");
    });
  }

  it("calls a PUBLIC_URL a development one only on plain http to this machine (hosted error pages say more there)", () => {
    for (const url of ["http://localhost:3000", "http://127.0.0.1:8080", "http://[::1]:3000", "http://LOCALHOST"]) expect(isLoopbackPublicUrl(loadConfig({ PUBLIC_URL: url, DATA_DIR: dir() }).publicUrl), url).toBe(true);
    expect(isLoopbackPublicUrl(loadConfig({ DATA_DIR: dir() }).publicUrl)).toBe(true);
    for (const url of ["https://localhost:3000", "https://auth.example.com", "http://auth.example.com", "http://10.0.0.1:3000", "http://localhost.example.com"]) {
      expect(isLoopbackPublicUrl(loadConfig({ PUBLIC_URL: url, DATA_DIR: dir() }).publicUrl), url).toBe(false);
    }
  });

  it("accepts a master key as hex or base64url", () => {
    const hex = "ab".repeat(32);
    expect(parseMasterKey(hex).toString("hex")).toBe(hex);
    expect(parseMasterKey(Buffer.from(hex, "hex").toString("base64url")).toString("hex")).toBe(hex);
  });
});

describe("email settings", () => {
  it("without SMTP_URL: the development outbox on an http PUBLIC_URL, unavailable on https (production)", () => {
    expect(loadConfig({ DATA_DIR: dir() }).mail).toEqual({ transport: "outbox", print: true, from: "Latchkey <no-reply@localhost>", fromIsDefault: true });
    // Printed to stdout unless NODE_ENV=production (npm start) or MAIL_OUTBOX_PRINT says otherwise.
    expect(loadConfig({ DATA_DIR: dir(), NODE_ENV: "production" }).mail).toMatchObject({ transport: "outbox", print: false });
    expect(loadConfig({ DATA_DIR: dir(), NODE_ENV: "production", MAIL_OUTBOX_PRINT: "true" }).mail).toMatchObject({ transport: "outbox", print: true });
    expect(loadConfig({ DATA_DIR: dir(), PUBLIC_URL: "https://auth.example.com" }).mail).toEqual({ transport: "unavailable", from: "Latchkey <no-reply@auth.example.com>", fromIsDefault: true });
    // A Config built without mail settings follows the same rule.
    expect(mailSettings({ publicUrl: "https://auth.example.com" }).transport).toBe("unavailable");
    expect(mailSettings({ publicUrl: "http://localhost:3000" }).transport).toBe("outbox");
  });

  it("with SMTP_URL (smtp:// or smtps://): SMTP, from MAIL_FROM", () => {
    const smtp = loadConfig({ DATA_DIR: dir(), PUBLIC_URL: "https://auth.example.com", SMTP_URL: "smtps://u:p@smtp.example.com:465", MAIL_FROM: "Example <login@example.com>" });
    expect(smtp.mail).toEqual({ transport: "smtp", smtpUrl: "smtps://u:p@smtp.example.com:465", from: "Example <login@example.com>", fromIsDefault: false });
    expect(loadConfig({ DATA_DIR: dir(), SMTP_URL: "smtp://127.0.0.1:2525", MAIL_FROM: "login@example.com" }).mail).toMatchObject({ transport: "smtp", from: "login@example.com" });
  });

  it("refuses another scheme, a URL without host, and a MAIL_FROM that is not an address, in one line that does not echo the SMTP password", () => {
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig({ DATA_DIR: dir(), ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error("accepted");
    };
    const scheme = refused({ SMTP_URL: "http://user:s3cret@smtp.example.com" });
    expect(scheme).toMatch(/^SMTP_URL must use smtps:\/\//);
    expect(scheme).not.toContain("s3cret");
    expect(refused({ SMTP_URL: "not a url s3cret" })).not.toContain("s3cret");
    expect(refused({ SMTP_URL: "smtp://" })).toMatch(/^SMTP_URL/);
    expect(refused({ MAIL_FROM: "nobody" })).toMatch(/^MAIL_FROM/);
    expect(refused({ MAIL_FROM: "Evil <a@b>\r\nBcc: x@y" })).toMatch(/^MAIL_FROM/);
  });
});
