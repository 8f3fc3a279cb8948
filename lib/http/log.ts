/**
 * The server's log (docs/configuration.md "Logs"): one line per request, written by the listener
 * once the answer is sent (lib/server/request-log.ts), and the errors that concern a request,
 * under its id. `json`: one JSON object per line on stdout, written asynchronously (pino's
 * destination), for a log shipper; `pretty`: one readable line per record, for development.
 *
 * The process's logger is kept on globalThis, like the service (lib/service.ts), so that Next's
 * route bundles, which carry their own copy of this module, write through the one server.ts
 * configured; before that (tests, tools) warnings and errors go to the console as readable lines.
 * The request being answered is known through an AsyncLocalStorage the listener opens
 * (`inRequest`), so an error logged deep in an endpoint names the request's id.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import pino, { type DestinationStream, type Logger } from "pino";
import type { LogSettings } from "../config";

export type { Logger } from "pino";

/**
 * At most this many bytes per write of the JSON destination: Linux's PIPE_BUF, below which a write
 * to a pipe is atomic, so the lines of several server processes sharing stdout (WEB_CONCURRENCY)
 * never interleave mid-line. The destination writes whole lines, as many as fit.
 */
const PIPE_BUF = 4096;
/**
 * Lines are written once this many bytes wait (a write per line cost a system call and a trip
 * through libuv's thread pool: measurable under load), and at the latest FLUSH_MS after they were
 * logged; whatever waits is written when the process exits.
 */
const BATCH_BYTES = 2048;
const FLUSH_MS = 250;

/**
 * The `time` field: ISO 8601 in UTC, formatted once per millisecond (under load many lines share
 * one; formatting a date costs about as much as the rest of the line).
 */
let stampedAt = -1;
let stamp = "";
function isoTime(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

/** The level a record carries, as pino numbers them. */
const LEVEL_NUMBER = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

/** Where a readable line goes: the console (errors and warnings to stderr) unless a destination is given. */
type LineSink = (text: string, level: string) => void;

const consoleSink: LineSink = (text, level) => {
  if (LEVEL_NUMBER[level as keyof typeof LEVEL_NUMBER] >= LEVEL_NUMBER.warn) console.error(text);
  else console.log(text);
};

/** A record of the log (a request line or a message), as the JSON format writes it. */
interface LogRecord {
  level: string;
  time?: string;
  msg?: string;
  request_id?: string;
  method?: string;
  family?: string;
  workspace?: string;
  status?: number;
  duration_ms?: number;
  client?: string;
  aborted?: boolean;
  err?: string;
  [field: string]: unknown;
}

/** One readable line for a record: a request as `[latchkey] 200 POST token demo 3.1 ms 127.0.0.1 (request …)`, a message as before. */
export function prettyLine(record: LogRecord): string {
  if (record.msg === "request" && record.status !== undefined) {
    const place = record.workspace ? `${record.family} ${record.workspace}` : record.family;
    const aborted = record.aborted ? " aborted" : "";
    return `[latchkey] ${record.status} ${record.method} ${place} ${record.duration_ms} ms ${record.client ?? "-"}${aborted} (request ${record.request_id})`;
  }
  const request = record.request_id ? ` (request ${record.request_id})` : "";
  return `[latchkey] ${record.msg ?? ""}${request}${record.err ? `: ${record.err}` : ""}`;
}

/** pino's destination for the readable format: each JSON line it writes, turned into one readable line. */
function prettyDestination(sink: LineSink): DestinationStream {
  return {
    write(line: string) {
      const record = JSON.parse(line) as LogRecord;
      sink(prettyLine(record), record.level);
    },
  };
}

/**
 * A logger for `settings`. `destination` receives what would be written (tests capture lines
 * with it): JSON lines, or readable lines in the pretty format. Without one, JSON goes to stdout
 * through an asynchronous destination in batches (flushed when the process exits), readable lines
 * to the console.
 */
export function createLogger(settings: LogSettings, destination?: { write(text: string): unknown }): Logger {
  const stream =
    settings.format === "pretty"
      ? prettyDestination(destination ? (text) => void destination.write(`${text}\n`) : consoleSink)
      : (destination ?? pino.destination({ dest: 1, sync: false, minLength: BATCH_BYTES, maxWrite: PIPE_BUF, periodicFlush: FLUSH_MS }));
  return pino(
    {
      level: settings.level,
      base: { pid: process.pid },
      timestamp: isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    stream as DestinationStream,
  );
}

/** Before server.ts configures the log: warnings and errors, readable, on the console (as tests and tools always saw them). */
const UNCONFIGURED: LogSettings = { format: "pretty", level: "warn" };

interface LogHolder {
  logger?: Logger;
  requests: AsyncLocalStorage<string>;
}

const HOLDER = Symbol.for("latchkey.log");
const holder: LogHolder = ((globalThis as Record<symbol, LogHolder | undefined>)[HOLDER] ??= { requests: new AsyncLocalStorage<string>() });

/** Makes `logger` the process's log (server.ts, at start). */
export function setServerLog(logger: Logger): void {
  holder.logger = logger;
}

/** The process's log. */
export function serverLog(): Logger {
  return (holder.logger ??= createLogger(UNCONFIGURED));
}

/** Runs `run` as the handling of the request `requestId` (the listener, around each request). */
export function inRequest<T>(requestId: string, run: () => T): T {
  return holder.requests.run(requestId, run);
}

/** The id of the request being answered, if any. */
export function currentRequestId(): string | undefined {
  return holder.requests.getStore();
}

/**
 * An error line: `message`, the error's text (`detail`, as lib/http/errors.ts `loggableError`
 * gives it) and the id of the request it concerns (by default the one being answered).
 */
export function logError(message: string, detail?: string, requestId = currentRequestId(), logger = serverLog()): void {
  logger.error({ request_id: requestId, err: detail }, message);
}

/** A warning line (a refusal an operator should know of), under the id of the request it concerns; as `logError`. */
export function logWarning(message: string, detail?: string, requestId = currentRequestId(), logger = serverLog()): void {
  logger.warn({ request_id: requestId, err: detail }, message);
}
