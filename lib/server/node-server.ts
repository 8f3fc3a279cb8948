// The production server's request listener (server.ts): machine-facing endpoints are answered
// straight from the route table, everything else goes to Next. Shared with the dispatch-
// equivalence test (tests/dispatch), which runs this listener beside a Next-only one.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Service } from "../service";
import { answerHealth, HEALTH_PATHS, readinessProbe, type ReadinessProbe } from "../http/health";
import { addressGroup, CLIENT_ADDRESS_HEADER, clientAddressOf, nodeHeaders } from "../http/client-address";
import { REQUEST_ID_HEADER, requestIdOf } from "../http/request-id";
import { loggableError } from "../http/errors";
import { inRequest, logError, serverLog, type Logger } from "../http/log";
import { notFoundResponse } from "../oauth/errors";
import { gateForNext, type GateAnswer } from "../http/next-gate";
import { mayBeIssuerPath } from "../http/issuer-paths";
import { requestTargetOf } from "../http/request-target";
import { nodeRequest } from "../http/node-request";
import { rawResponse } from "../http/response";
import { ISSUER_ROUTE_CSP, SECURITY_HEADERS } from "../http/security-headers";
import { directDecision, dispatch, hostServes, isHostRoute, refusedPasswordPost, runDecision, type Decision } from "./router";
import { observeRequest, type RequestObserver } from "./request-log";

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/**
 * Request bodies of at most this many bytes (by Content-Length) are read before the endpoint
 * runs; every machine endpoint refuses far smaller bodies (8 KiB) with 413. Larger or unsized
 * bodies stay streamed, so the endpoint's own limit stops reading them early.
 */
const BUFFERED_BODY_LIMIT = 64 * 1024;

function readSmallBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/**
 * What Next adds to every answer of the route table under /t/ (next.config.ts `headers()` and
 * proxy.ts's fixed policy): the direct path sends the same, so both paths answer alike
 * (tests/dispatch checks it). Both are built from lib/http/security-headers.ts.
 */
export const ISSUER_PATH_HEADERS: Readonly<Record<string, string>> = Object.fromEntries([
  ["content-security-policy", ISSUER_ROUTE_CSP],
  ...Object.entries(SECURITY_HEADERS).map(([name, value]) => [name.toLowerCase(), value]),
]);

export async function writeResponse(response: Response, res: ServerResponse, extraHeaders: Readonly<Record<string, string>> = {}): Promise<void> {
  const raw = rawResponse(response);
  if (raw) {
    // The hot path: a light response is written as it is, head and string body in one write.
    const headers: Record<string, string> = { ...extraHeaders, ...raw.headers };
    if (raw.body === null) {
      res.writeHead(raw.status, headers);
      res.end();
      return;
    }
    headers["content-length"] = String(Buffer.byteLength(raw.body));
    res.writeHead(raw.status, headers);
    res.end(raw.body);
    return;
  }
  const headers: Record<string, string | string[]> = { ...extraHeaders };
  let cookies = false;
  response.headers.forEach((value, name) => {
    if (name === "set-cookie") cookies = true;
    else headers[name] = value;
  });
  if (cookies) headers["set-cookie"] = response.headers.getSetCookie();
  if (!response.body) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  const body = Buffer.from(await response.arrayBuffer());
  headers["content-length"] = String(body.length);
  res.writeHead(response.status, headers);
  // As a latin1 string (byte for byte the same), Node sends head and body in one write instead
  // of a writev of two buffers: measurably cheaper on small answers.
  res.end(body.toString("latin1"), "latin1");
}

async function answerDirectly(req: IncomingMessage, res: ServerResponse, service: Service, origin: string, decision: Decision): Promise<void> {
  const method = req.method ?? "GET";
  let body: Buffer | undefined;
  if (method !== "GET" && method !== "HEAD") {
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) <= BUFFERED_BODY_LIMIT && req.headers["transfer-encoding"] === undefined) body = await readSmallBody(req);
  }
  await writeResponse(await runDecision(decision, nodeRequest(req, origin, body), service), res, ISSUER_PATH_HEADERS);
}

/**
 * The methods the application answers (Next's route handlers and pages, and the route table).
 * Anything else (TRACE, CONNECT-style tunnels, WebDAV verbs) never reaches Next, whose handling
 * of them is undefined: the table's own paths answer 405 with Allow, every other path 501.
 */
const SERVED_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export interface ListenerOptions {
  /** false: every request goes to `next` (the equivalence test's Next side). */
  direct?: boolean;
  /** The readiness state `/readyz` reports (default: a probe of the service's database). */
  readiness?: ReadinessProbe;
  /** Waits before a refused password post is answered (default: REFUSAL_HOLD_MS; tests hold and release it). */
  holdRefusal?: () => Promise<void>;
  /** Where each request's line and the errors go (default: the process's log, lib/http/log.ts). */
  log?: Logger;
  /**
   * Answers some requests before the rest of the listener, after the health checks, and returns
   * whether it did (server.ts: the demo application at the default host, lib/demo/serve.ts).
   */
  ahead?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /**
   * Answers some page requests instead of `next`, after the same gates, and returns whether it
   * did (server.ts: the sign-in page's kept renders, lib/server/sign-in-page.ts).
   */
  pages?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/**
 * How long the listener holds a password post it refuses (its address has its share of password
 * work in progress) before answering 429. A client that posts again as soon as it is answered then
 * sends at most one post per second per connection, instead of turning the refusals themselves
 * into the flood every other request waits behind on the event loop. A held post costs a socket
 * and a timer; the connections an address may hold bound them (HTTP_CONNECTIONS_PER_ADDRESS).
 */
export const REFUSAL_HOLD_MS = 1000;
const holdFor = (ms: number) => () => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The listener: stamps the client address the limiter keys on (overwriting whatever a client
 * sent under that name) and the request's id, decides the request target (a path not in normal
 * form, or a target in neither origin nor absolute form: 400; lib/http/request-target.ts),
 * observes the request until its answer is done (one log line, the HTTP metrics:
 * ./request-log.ts), answers `/healthz` and `/readyz`, serves nothing at a host that is neither
 * the default host nor a verified hostname (./router.ts `hostServes`), then
 * machine-facing endpoints directly
 * (under `/t/`, and RFC 8414's `/.well-known/oauth-authorization-server/t/…`),
 * methods the application does not serve with 405/501, and hands the rest to `next`.
 */
export function createRequestListener(service: Service, origin: string, next: NodeHandler, options: ListenerOptions = {}) {
  const direct = options.direct ?? true;
  const readiness = options.readiness ?? readinessProbe(service.db);
  const holdRefusal = options.holdRefusal ?? holdFor(REFUSAL_HOLD_MS);
  const log = options.log ?? serverLog();
  const observer: RequestObserver = { log, trustProxy: service.config.trustProxy };
  const ahead = options.ahead;
  const pages = direct ? options.pages : undefined;
  return (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    req.headers[CLIENT_ADDRESS_HEADER] = req.socket.remoteAddress ?? "unknown";
    // Every answer names its request: the server's own id, after the one it came with when that is a short token.
    const requestId = requestIdOf(req.headers[REQUEST_ID_HEADER]);
    req.headers[REQUEST_ID_HEADER] = requestId;
    res.setHeader("X-Request-Id", requestId);
    // The request target, decided once (lib/http/request-target.ts): every rule below, the log's
    // and Next's routing included, sees the same path; an absolute-form target's authority is its host.
    const target = requestTargetOf(req.url ?? "/");
    if (target.ok && target.authority !== null) {
      req.url = `${target.path}${target.query}`;
      req.headers.host = target.authority;
    } else {
      // Node keeps the first of several Host lines; a proxy in front may have read another. All
      // of them are the host, which is then no valid one.
      const lines = hostLines(req.rawHeaders);
      if (lines.length > 1) req.headers.host = lines.join(", ");
    }
    observeRequest(observer, req, res, requestId, started);
    if (!target.ok) return refuse(res, { status: 400, error: target.error });
    // Errors logged while it is answered (lib/http/errors.ts, here) name it.
    inRequest(requestId, () => listen(req, res, requestId, target.path));
  };

  function listen(req: IncomingMessage, res: ServerResponse, requestId: string, pathname: string): void {
    const method = req.method ?? "GET";
    if (HEALTH_PATHS.has(pathname)) {
      answerHealth(req, res, pathname, readiness).catch((error) => failed(res, error));
      return;
    }
    if (ahead?.(req, res)) return;
    const served = hostServes(service, nodeHeaders(req), pathname);
    if (served === true) return proceed(req, res, pathname, method);
    // Another host: a verified workspace hostname serves its own workspace only; any other host,
    // or one that is not a valid host name, nothing.
    served.then(
      (serves) => {
        if (serves) return proceed(req, res, pathname, method);
        void writeResponse(notFoundResponse(), res, ISSUER_PATH_HEADERS);
      },
      (error) => {
        // The verified hostnames could not be read: nothing is served under a host we cannot place (fail closed).
        logError("hostname lookup failed", loggableError(error), requestId, log);
        if (!res.headersSent) res.writeHead(503, { ...ISSUER_PATH_HEADERS, "content-type": "application/json", "retry-after": "5" });
        res.end('{"error":"temporarily_unavailable"}');
      },
    );
  }

  function failed(res: ServerResponse, error: unknown): void {
    logError("dispatch failed", loggableError(error), String(res.getHeader("x-request-id")), log);
    if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
    res.end('{"error":"server_error"}');
  }

  function proceed(req: IncomingMessage, res: ServerResponse, pathname: string, method: string): void {
    // The features' paths at the root of every host (the WebAuthn related origins document):
    // answered here whatever the method (the edge rule: 405 with Allow for one it does not serve), as their route files answer them.
    if (isHostRoute(pathname)) {
      dispatch(nodeRequest(req, origin), service)
        .then((response) => writeResponse(response ?? notFoundResponse(), res, ISSUER_PATH_HEADERS))
        .catch((error) => failed(res, error));
      return;
    }
    const served = SERVED_METHODS.has(method);
    const decision = (direct || !served) && mayBeIssuerPath(pathname) ? directDecision(method, pathname) : null;
    if (!decision) {
      if (!served) return refuse(res, { status: 501, error: "Method not implemented" });
      const refused = gateForNext(method, pathname, req.headers);
      if (refused?.status === 404) return void writeResponse(notFoundResponse(), res, ISSUER_PATH_HEADERS);
      if (refused) return refuse(res, refused);
      const early = direct && method === "POST" ? refusedPasswordPost(method, pathname, clientAddressOf(nodeHeaders(req), service.config.trustProxy) ?? "unknown") : null;
      // Refused unread (Node discards the body once the answer is sent), after the hold.
      if (early) {
        return void holdRefusal()
          .then(() => runDecision(early, nodeRequest(req, origin), service))
          .then((response) => writeResponse(response, res, ISSUER_PATH_HEADERS))
          .catch((error) => failed(res, error));
      }
      if (pages?.(req, res)) return;
      void next(req, res);
      return;
    }
    answerDirectly(req, res, service, origin, decision).catch((error) => failed(res, error));
  }
}

/** The values of every `Host` line of a request, in order. */
function hostLines(raw: string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === "host") values.push(raw[i + 1]);
  return values;
}

/**
 * A request the listener answers itself (a method the application does not serve, or one Next
 * must not see: lib/http/next-gate.ts), as JSON with the security headers.
 */
function refuse(res: ServerResponse, answer: Omit<GateAnswer, "status"> & { status: GateAnswer["status"] | 501 }): void {
  const body = JSON.stringify({ error: answer.status === 403 ? "access_denied" : "invalid_request", error_description: answer.error });
  res.writeHead(answer.status, {
    ...ISSUER_PATH_HEADERS,
    ...(answer.allow ? { allow: answer.allow } : {}),
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "content-length": String(Buffer.byteLength(body)),
  });
  res.end(body);
}

// ---- the HTTP server: timeouts, a per-address connection cap, graceful stop ----

export interface ServerLimits {
  /** Time a client has to send the complete request head (Node's default: 60 s). */
  headersTimeoutMs: number;
  /** Time a client has to send the complete request, body included (Node's default: 300 s). */
  requestTimeoutMs: number;
  /** Idle keep-alive connections are closed after this long. */
  keepAliveTimeoutMs: number;
  /** Open connections one client address (an IPv6 /64) may hold at once; 0 disables. */
  connectionsPerAddress: number;
}

/** The key the connection cap counts under: the address's group (lib/http/client-address.ts `addressGroup`). */
export function addressKey(address: string | undefined): string {
  return address ? addressGroup(address) : "unknown";
}

/** Counts open connections per address key; `admit` refuses one past the limit. */
export class ConnectionCap {
  readonly #limit: number;
  readonly #open = new Map<string, number>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  admit(key: string): boolean {
    if (this.#limit <= 0) return true;
    const open = this.#open.get(key) ?? 0;
    if (open >= this.#limit) return false;
    this.#open.set(key, open + 1);
    return true;
  }

  release(key: string): void {
    if (this.#limit <= 0) return;
    const open = (this.#open.get(key) ?? 1) - 1;
    if (open <= 0) this.#open.delete(key);
    else this.#open.set(key, open);
  }

  /** Addresses holding at least one connection (bounded by the open connections). */
  get addresses(): number {
    return this.#open.size;
  }
}

export interface NodeServer {
  server: Server;
  /**
   * Stops accepting, closes idle keep-alive connections, lets requests in flight finish (their
   * answers carry `Connection: close`) and, after `graceMs`, cuts whatever is still open.
   * Resolves once every connection is closed; `forced` tells whether the bound was reached.
   */
  stop(graceMs: number): Promise<{ forced: boolean }>;
}

/** An HTTP server for `listener` with the limits an authentication server needs against slow or greedy clients. */
export function createNodeServer(listener: NodeHandler, limits: ServerLimits): NodeServer {
  const inFlight = new Set<ServerResponse>();
  let stopping = false;
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node enforces both timeouts only when it sweeps its connections (every 30 s by default).
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    (req, res) => {
      if (stopping) res.setHeader("connection", "close");
      inFlight.add(res);
      res.once("close", () => {
        inFlight.delete(res);
        // While stopping, a connection whose last answer just went out is idle: close it now.
        if (stopping) server.closeIdleConnections();
      });
      void listener(req, res);
    },
  );

  const cap = new ConnectionCap(limits.connectionsPerAddress);
  // Before Node's HTTP machinery sees the socket: one past the cap is closed without a read.
  server.prependListener("connection", (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    if (!cap.admit(key)) {
      socket.destroy();
      return;
    }
    socket.once("close", () => cap.release(key));
  });

  return {
    server,
    stop(graceMs) {
      stopping = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader("connection", "close");
      return new Promise((resolve) => {
        let forced = false;
        const timer = setTimeout(() => {
          forced = true;
          server.closeAllConnections();
        }, graceMs);
        server.close(() => {
          clearTimeout(timer);
          resolve({ forced });
        });
        server.closeIdleConnections();
      });
    },
  };
}
