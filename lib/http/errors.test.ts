import { describe, expect, it, vi } from "vitest";
import { failureResponse, RuleError, type ErrorFamily } from "./errors";

const status = (code: number) => () => new Response(null, { status: code });
/** A family that tells the classes of failure apart by status alone. */
const probe: ErrorFamily = { name: "oauth", rule: () => null, unstorable: status(400), unavailable: status(503), internal: status(500), rateLimited: status(429), notFound: status(404) };

/** Whether the one failure mapping (`failureResponse`) takes `error` for a dependency failure: a 503. */
function isDependencyFailure(error: unknown): boolean {
  const log = vi.spyOn(console, "error").mockImplementation(() => {});
  try {
    return failureResponse(probe, error).status === 503;
  } finally {
    log.mockRestore();
  }
}

/** A database error as drizzle reports it: the driver's error (with its SQLSTATE) as the cause. */
const wrapped = (code: string) => new Error("Failed query: select 1", { cause: Object.assign(new Error("database error"), { code }) });

describe("isDependencyFailure", () => {
  it.each(["08006", "08001", "28P01", "28000", "53300", "53100", "55000", "55P03", "57P01", "57P03", "57014", "58030", "3D000", "25006", "25P03", "40001", "40P01"])(
    "SQLSTATE %s leaves authority unconfirmed",
    (code) => {
      expect(isDependencyFailure(wrapped(code))).toBe(true);
    },
  );

  it.each(["23505", "23503", "22021", "22P05", "42P01", "42703", "P0001", "25P02"])("SQLSTATE %s is a statement refused on its merits, not an outage", (code) => {
    expect(isDependencyFailure(wrapped(code))).toBe(false);
  });

  it("reads driver and socket failures, an AggregateError's attempts and time-outs", () => {
    for (const code of ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EAI_AGAIN", "CONNECT_TIMEOUT", "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED"]) {
      expect(isDependencyFailure(wrapped(code)), code).toBe(true);
    }
    expect(isDependencyFailure(new AggregateError([Object.assign(new Error("connect"), { code: "ECONNREFUSED" })], "all attempts failed"))).toBe(true);
    expect(isDependencyFailure(new DOMException("The operation timed out", "TimeoutError"))).toBe(true);
    expect(isDependencyFailure(new Error("PGlite is closed"))).toBe(true);
  });

  it("never classes a rule's refusal as an outage, whatever it wraps", () => {
    expect(isDependencyFailure(new RuleError("denied", { cause: wrapped("08006") }))).toBe(false);
    expect(isDependencyFailure(new Error("plain"))).toBe(false);
    expect(isDependencyFailure("08006")).toBe(false);
  });
});
