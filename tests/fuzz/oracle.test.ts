/**
 * The fuzz oracle's own rules (./oracle.ts): a request is matched to its route by the server's
 * request-target rule, whatever its workspace segment (an encoded slash is one segment), and no
 * 405 is acceptable without `Allow`, whichever route or path answered it.
 */
import { describe, expect, it } from "vitest";
import { expectAtHost, expectRoute, judge, namesRoute } from "./oracle";
import { ROUTES } from "./cases";
import type { WireAnswer } from "./wire";

const logo = ROUTES.find((r) => r.path === "/branding/logo")!;
const zeros = `/branding/logo/${"0".repeat(64)}`;
const answer = (status: number, headers: Record<string, string> = {}): WireAnswer => ({
  status,
  headers: new Map(Object.entries(headers).map(([n, v]) => [n, [v]])),
  body: Buffer.from('{"error":"invalid_request"}'),
});

describe("the fuzz oracle", () => {
  it("matches a target to the route's path as the server decides it: one workspace segment, whatever it holds", () => {
    expect(namesRoute(`/t/demo${zeros}`, zeros)).toBe(true);
    expect(namesRoute(`/t/a%2Fb${zeros}`, zeros)).toBe(true);
    expect(namesRoute(`/t/a%2Fb${zeros}?v=1`, zeros)).toBe(true);
    expect(namesRoute(`/t/a/b${zeros}`, zeros)).toBe(false);
    expect(namesRoute(`/t/${zeros}`, zeros)).toBe(false);
    expect(namesRoute(`/t/demo${zeros}/`, zeros)).toBe(false);
    // Not in normal form: the server refuses it (400) before any route.
    expect(namesRoute(`/t/demo/x/..${zeros}`, zeros)).toBe(false);
    expect(expectAtHost({ kind: "default" }, `/t/demo/x/%2e%2e${zeros}`, "demo")?.allowed).toEqual(new Set([400]));
  });

  it("expects a 405 with Allow, or a 404 for a name that is no workspace, for another method on the logo under an encoded slash", () => {
    const expectation = expectRoute(logo, "PUT", { kind: "path", raw: "a%2Fb" }, `/t/a%2Fb${zeros}`, zeros);
    expect([...expectation.allowed].sort()).toEqual([400, 404, 405, 429, 501]);
    expect(judge("PUT", [], answer(405), expectation, [], false)).toBe("405 without an Allow header");
    expect(judge("PUT", [], answer(405, { allow: "GET, HEAD" }), expectation, [], false)).toBeNull();
  });

  it("finds database error text in what the server wrote, not in a random token that spells pg_ nor in an OAuth URN quoted back", () => {
    const expectation = expectRoute(logo, "GET", { kind: "real" }, `/t/demo${zeros}`, zeros);
    const cookie = { "set-cookie": "lk_session=-PG_IqV0610WBJlMs7GffA.NAD1Svc; Path=/t/demo; Secure; HttpOnly", location: "https://a.example/cb?code=x-pg_abcDEF&state=pg_Zz" };
    expect(judge("GET", [], answer(303, cookie), { allowed: new Set([303]), rule: "" }, [], false)).toBeNull();
    const leaked = (text: string): WireAnswer => ({ status: 400, headers: new Map(), body: Buffer.from(text) });
    expect(judge("GET", [], leaked('{"error":"relation pg_catalog.pg_class is locked"}'), expectation, [], false)).toMatch(/^database error text/);
    expect(judge("GET", [], leaked("function pg_advisory_xact_lock(bigint) failed"), expectation, [], false)).toMatch(/^database error text/);
    expect(judge("GET", [], leaked('duplicate key value violates unique constraint "x"'), expectation, [], false)).toMatch(/^database error text/);
    expect(judge("GET", [], leaked('{"error":"x","error_description":"Failed query: select 1\\nparams: 2"}'), expectation, [], false)).toMatch(/^database error text/);
    // An OAuth URN quoted back is not Drizzle's "params: ".
    expect(judge("GET", [], leaked('{"error":"unsupported_grant_type","error_description":"grant_type urn:ietf:params: is not supported"}'), { allowed: new Set([400]), rule: "" }, [], false)).toBeNull();
  });

  it("knows what a workspace hostname serves as the server does: its issuer and the shared documents, the related-origins one included", () => {
    const hostname = { kind: "hostname" } as const;
    expect(expectAtHost(hostname, "/.well-known/webauthn", "demo")).toBeNull();
    expect(expectAtHost(hostname, "/t/demo/oidc/userinfo", "demo")).toBeNull();
    expect(expectAtHost(hostname, "/_next/static/x.js", "demo")).toBeNull();
    expect(expectAtHost(hostname, "/t/other/oidc/userinfo", "demo")?.allowed).toEqual(new Set([404]));
    expect(expectAtHost(hostname, "/console", "demo")?.allowed).toEqual(new Set([404]));
  });

  it("refuses a 405 without Allow anywhere, a path of another shape included", () => {
    const expectation = expectRoute(logo, "PUT", { kind: "real" }, `/t/demo${zeros}/x`, zeros);
    expect(expectation.rule).toMatch(/another shape/);
    expect(judge("PUT", [], answer(405), expectation, [], false)).toBe("405 without an Allow header");
  });
});
