import { afterEach, describe, expect, it } from "vitest";
import { createLogger, currentRequestId, inRequest, logError, prettyLine, serverLog, setServerLog, type Logger } from "./log";
import { failureResponse } from "./errors";
import { oauthFailures } from "../oauth/errors";

function captured(format: "json" | "pretty", level: "info" | "debug" | "warn" | "silent" = "info"): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger({ format, level }, { write: (text: string) => void lines.push(text) }), lines };
}

describe("the server's log", () => {
  const unconfigured = serverLog();
  afterEach(() => setServerLog(unconfigured));

  it("json: one JSON object per line, with an ISO time and the level by name", () => {
    const { log, lines } = captured("json");
    log.info({ request_id: "r-1", method: "GET", family: "token", workspace: undefined, status: 200 }, "request");
    expect(lines).toHaveLength(1);
    expect(lines[0].endsWith("\n")).toBe(true);
    const record = JSON.parse(lines[0]);
    expect(record).toMatchObject({ level: "info", request_id: "r-1", method: "GET", family: "token", status: 200, msg: "request" });
    expect(record).not.toHaveProperty("workspace");
    expect(new Date(record.time).toISOString()).toBe(record.time);
  });

  it("writes nothing below its level, and nothing at all when silent", () => {
    const info = captured("json", "info");
    info.log.debug({ request_id: "probe" }, "request");
    expect(info.lines).toEqual([]);
    const silent = captured("json", "silent");
    silent.log.error({ err: "x" }, "failed");
    expect(silent.lines).toEqual([]);
  });

  it("pretty: one readable line per record", () => {
    const { log, lines } = captured("pretty");
    log.info({ request_id: "r-2", method: "POST", family: "token", workspace: "acme", status: 401, duration_ms: 2.5, client: "192.0.2.1" }, "request");
    log.error({ request_id: "r-3", err: "Error: boom" }, "dispatch failed");
    expect(lines).toEqual(["[latchkey] 401 POST token acme 2.5 ms 192.0.2.1 (request r-2)\n", "[latchkey] dispatch failed (request r-3): Error: boom\n"]);
    expect(prettyLine({ level: "info", msg: "request", request_id: "r-4", method: "GET", family: "health", status: 200, duration_ms: 0.1, aborted: true })).toBe(
      "[latchkey] 200 GET health 0.1 ms - aborted (request r-4)",
    );
  });

  it("an error logged while a request is answered names the request's id (the failure mapping included)", () => {
    const { log, lines } = captured("json");
    setServerLog(log);
    expect(currentRequestId()).toBeUndefined();
    logError("outside", "detail");
    inRequest("req-42", () => {
      expect(currentRequestId()).toBe("req-42");
      logError("inside", "detail");
      expect(failureResponse(oauthFailures, new TypeError("boom"), "POST /oauth2/token").status).toBe(500);
    });
    const records = lines.map((line) => JSON.parse(line));
    expect(records[0]).toMatchObject({ level: "error", msg: "outside", err: "detail" });
    expect(records[0]).not.toHaveProperty("request_id");
    expect(records[1]).toMatchObject({ level: "error", msg: "inside", request_id: "req-42" });
    expect(records[2]).toMatchObject({ level: "error", request_id: "req-42" });
    expect(records[2].msg).toMatch(/^POST \/oauth2\/token: internal error \([0-9a-f-]{36}\)$/);
    expect(records[2].err).toMatch(/^TypeError: boom\n\s+at /);
  });
});
