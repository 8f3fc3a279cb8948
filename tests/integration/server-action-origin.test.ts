/**
 * Server actions (the console's forms) follow the same-origin rule of every form post, in proxy.ts
 * before Next handles them: a `Next-Action` POST from another origin, or with neither `Origin` nor
 * `Sec-Fetch-Site: same-origin`, answers 403 (Next alone answers a foreign origin with a 500 and
 * lets a missing one through); one from the console's own pages goes on to Next.
 */
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { proxy } from "../../proxy";

const SITE = "https://auth.example.test";

beforeAll(() => {
  vi.stubEnv("PUBLIC_URL", SITE);
});
afterAll(() => {
  vi.unstubAllEnvs();
});

function action(path: string, headers: Record<string, string>, method = "POST") {
  return proxy(new NextRequest(`${SITE}${path}`, { method, headers: { "next-action": "7f3a9c0d1e2b", "content-type": "text/plain;charset=UTF-8", ...headers }, body: method === "POST" ? "[]" : undefined }));
}

/** Proxy let the request through to Next (NextResponse.next()). */
const passedOn = (response: Response) => response.headers.get("x-middleware-next") === "1";

describe("a server action", () => {
  it.each([
    ["from another origin", { origin: "https://evil.example" }],
    ["from another origin claiming same-origin", { origin: "https://evil.example", "sec-fetch-site": "same-origin" }],
    ["from a sibling site", { origin: SITE, "sec-fetch-site": "same-site" }],
    ["saying neither where it came from", {}],
    ["with Origin: null alone", { origin: "null" }],
    ["from our host over http", { origin: "http://auth.example.test" }],
  ])("%s answers 403 before Next", async (_what, headers) => {
    for (const path of ["/console", "/console/w/acme/roles", "/t/acme/sign-in"]) {
      const response = action(path, headers);
      expect(response.status).toBe(403);
      expect(passedOn(response)).toBe(false);
      expect(await response.text()).toContain("Forbidden");
    }
  });

  it("from the console's own pages goes on to Next", () => {
    expect(passedOn(action("/console/w/acme/roles", { origin: SITE }))).toBe(true);
    expect(passedOn(action("/console/w/acme/roles", { origin: "null", "sec-fetch-site": "same-origin" }))).toBe(true);
    expect(passedOn(action("/console/w/acme/roles", { origin: SITE, "sec-fetch-site": "same-origin" }))).toBe(true);
  });

  it("is the only thing refused: other posts and other methods are Next's to answer", () => {
    expect(passedOn(proxy(new NextRequest(`${SITE}/console`, { method: "POST", headers: { origin: "https://evil.example" }, body: "x" })))).toBe(true);
    expect(passedOn(action("/console", { origin: "https://evil.example" }, "GET"))).toBe(true);
  });
});
