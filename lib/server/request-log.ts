/**
 * One place observes each request the listener answers (lib/server/node-server.ts): when its
 * answer is done (sent, or the client gone), one log line and the signal `request_answered`
 * (lib/signals: with METRICS_PORT, the HTTP metrics observe it), both from the same family
 * (./request-family.ts).
 *
 * The line holds what an operator needs to follow a request and nothing a client could use:
 * time, level, request id, method, family, workspace (a well-formed one the path names), status,
 * duration, client address (the TRUST_PROXY rule: lib/http/client-address.ts) and the answer's
 * length when it declared one. Never the query string, the path beyond its family, a body, a
 * header (Authorization, Cookie) or an email address: tests/dispatch/request-log.test.ts sends
 * every kind of credential through the listener and looks for each in the log.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../http/log";
import { clientAddressOf, nodeHeaders } from "../http/client-address";
import { requestPlace } from "./request-family";
import { observed, signal } from "../signals";

export interface RequestObserver {
  log: Logger;
  /** Whether the client address is the left-most X-Forwarded-For (TRUST_PROXY). */
  trustProxy: boolean;
}

/** Health probes come every few seconds: logged only at debug, so they do not flood the log. */
const PROBE_LEVEL = "debug";
const REQUEST_LEVEL = "info";

/** Observes `req` from now (`started`: performance.now() at its arrival) until its answer is done. */
export function observeRequest(observer: RequestObserver, req: IncomingMessage, res: ServerResponse, requestId: string, started: number): void {
  // The target as it arrived: Next may rewrite req.url while it answers.
  const target = req.url ?? "/";
  res.once("close", () => {
    const ms = performance.now() - started;
    const { family, workspace } = requestPlace(target);
    const method = req.method ?? "GET";
    const finished = res.writableFinished;
    const status = res.statusCode;
    if (observed("request_answered")) signal("request_answered", { family, method, status: finished ? status : "aborted", seconds: ms / 1000 });
    const level = family === "health" ? PROBE_LEVEL : REQUEST_LEVEL;
    if (!observer.log.isLevelEnabled(level)) return;
    const length = res.getHeader("content-length");
    observer.log[level](
      {
        request_id: requestId,
        method,
        family,
        workspace: workspace ?? undefined,
        status,
        duration_ms: Math.round(ms * 10) / 10,
        client: clientAddressOf(nodeHeaders(req), observer.trustProxy) ?? undefined,
        bytes: length === undefined ? undefined : Number(length),
        aborted: finished ? undefined : true,
      },
      "request",
    );
  });
}
