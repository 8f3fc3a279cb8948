import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { failureResponse, type ErrorFamily } from "./errors";
import { hostedFailures, invalidGrant, oauthFailures } from "../oauth/errors";
import { checkFailures, invalidCheckToken } from "../authz/errors";
import { handoffFailures, versionConflict } from "../account-security/errors";

/** Each family, a rule error of its own, and what each class of failure looks like in it. */
const FAMILIES: {
  name: string;
  family: ErrorFamily;
  rule: Error;
  ruleStatus: number;
  /** The kind of body: a code read from it, so every family is checked the same way. */
  code: (res: Response) => Promise<string>;
  codes: { rule: string; unstorable: string; unavailable: string; internal: string };
}[] = [
  {
    name: "OAuth JSON",
    family: oauthFailures,
    rule: invalidGrant("The code is invalid"),
    ruleStatus: 400,
    code: async (res) => (await res.json()).error,
    codes: { rule: "invalid_grant", unstorable: "invalid_request", unavailable: "temporarily_unavailable", internal: "server_error" },
  },
  {
    name: "permission check problem document",
    family: checkFailures,
    rule: invalidCheckToken(),
    ruleStatus: 401,
    code: async (res) => (await res.json()).type,
    codes: {
      rule: "urn:latchkey:authorization-check:invalid_token",
      unstorable: "urn:latchkey:authorization-check:bad_request",
      unavailable: "urn:latchkey:authorization-check:unavailable",
      internal: "urn:latchkey:authorization-check:server_error",
    },
  },
  {
    name: "account-security handoff",
    family: handoffFailures,
    rule: versionConflict(3),
    ruleStatus: 409,
    code: async (res) => (await res.json()).error,
    codes: { rule: "VERSION_CONFLICT", unstorable: "INVALID_REQUEST", unavailable: "TEMPORARILY_UNAVAILABLE", internal: "SERVER_ERROR" },
  },
  {
    name: "hosted page",
    family: hostedFailures,
    rule: invalidGrant("The code is invalid"),
    ruleStatus: 400,
    // Pages carry their status and media type; a rule error and a 500 are the OAuth boundary's JSON.
    code: async (res) => (res.headers.get("content-type")?.startsWith("text/html") ? `page ${res.status}` : (await res.json()).error),
    codes: { rule: "invalid_grant", unstorable: "page 400", unavailable: "page 503", internal: "server_error" },
  },
];

/** A database error as drizzle reports it: the driver's error (with its SQLSTATE) as the cause; its message carries the parameters. */
const database = (code: string) =>
  Object.assign(new Error("Failed query: select $1\nparams: secret-parameter", { cause: Object.assign(new Error("database error"), { code }) }), {
    query: "select $1",
    params: ["secret-parameter"],
  });

let logged: string[];
beforeEach(() => {
  logged = [];
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void logged.push(args.join(" ")));
});
afterEach(() => vi.restoreAllMocks());

describe.each(FAMILIES)("the one failure mapping, $name family", ({ family, rule, ruleStatus, code, codes }) => {
  it("answers a rule error of the family with its own status, logging nothing", async () => {
    const res = failureResponse(family, rule, "route");
    expect(res.status).toBe(ruleStatus);
    expect(await code(res)).toBe(codes.rule);
    expect(logged).toEqual([]);
  });

  it("answers text the database cannot store (22021, 22P05) with 400, logging nothing", async () => {
    for (const sqlstate of ["22021", "22P05"]) {
      const res = failureResponse(family, database(sqlstate), "route");
      expect(res.status).toBe(400);
      expect(await code(res)).toBe(codes.unstorable);
    }
    expect(logged).toEqual([]);
  });

  it("answers a dependency failure (SQLSTATE, connection error) with 503 and Retry-After, logged in one line without parameters", async () => {
    const failures = [database("08006"), database("57P01"), Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })];
    for (const failure of failures) {
      const res = failureResponse(family, failure, "route");
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      expect(await code(res)).toBe(codes.unavailable);
    }
    expect(logged).toHaveLength(failures.length);
    for (const line of logged) {
      expect(line).toMatch(/^\[latchkey\] route: dependency failure: /);
      expect(line).not.toContain("\n");
      expect(line).not.toContain("secret-parameter");
    }
  });

  it("answers anything else with a 500 naming only the request id it logs the error under", async () => {
    const bug = Object.assign(new TypeError("Cannot read properties of undefined (reading 'internalDetail')"), { query: "select $1", params: ["secret-parameter"] });
    const res = failureResponse(family, bug, "route");
    expect(res.status).toBe(500);
    const text = await res.clone().text();
    expect(text).not.toContain("internalDetail");
    expect(text).not.toContain("TypeError");
    expect(text).not.toContain("select");
    expect(await code(res)).toBe(codes.internal);
    const id = /request ([0-9a-f-]{36})/.exec(text)?.[1];
    expect(id).toBeDefined();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain(`[latchkey] route: internal error (${id}): TypeError`);
    expect(logged[0]).not.toContain("secret-parameter");
  });

  it("answers a limit with 429 and its Retry-After", () => {
    const res = family.rateLimited(42);
    expect([res.status, res.headers.get("retry-after")]).toEqual([429, "42"]);
  });
});
