import { describe, expect, it } from "vitest";
import type { Service } from "../service";
import { guarded, sameOrigin, sameOriginRequest, type Guard } from "./guards";

const PUBLIC_URL = "https://auth.example.test";
const post = (headers: Record<string, string>) => new Request(`${PUBLIC_URL}/t/demo/sign-in/password`, { method: "POST", headers });

describe("the same-origin rule", () => {
  it("accepts our own origin, and Origin null when Sec-Fetch-Site says same-origin (no-referrer forms)", () => {
    expect(sameOriginRequest(post({ origin: PUBLIC_URL }), PUBLIC_URL)).toBe(true);
    expect(sameOriginRequest(post({ origin: PUBLIC_URL, "sec-fetch-site": "same-origin" }), PUBLIC_URL)).toBe(true);
    expect(sameOriginRequest(post({ origin: "null", "sec-fetch-site": "same-origin" }), PUBLIC_URL)).toBe(true);
    expect(sameOriginRequest(post({ "sec-fetch-site": "same-origin" }), PUBLIC_URL)).toBe(true);
  });

  it("refuses another origin, whatever Sec-Fetch-Site claims", () => {
    for (const origin of ["https://evil.example", "", "https://auth.example.test.evil.example", "http://auth.example.test", `${PUBLIC_URL}/`]) {
      expect([origin, sameOriginRequest(post({ origin }), PUBLIC_URL)]).toEqual([origin, false]);
      expect([origin, sameOriginRequest(post({ origin, "sec-fetch-site": "same-origin" }), PUBLIC_URL)]).toEqual([origin, false]);
    }
  });

  it("refuses a Sec-Fetch-Site other than same-origin, even with our Origin", () => {
    for (const site of ["cross-site", "same-site", "none", ""]) {
      expect([site, sameOriginRequest(post({ origin: PUBLIC_URL, "sec-fetch-site": site }), PUBLIC_URL)]).toEqual([site, false]);
    }
  });

  it("fails closed: neither header, or Origin null alone, is refused", () => {
    expect(sameOriginRequest(post({}), PUBLIC_URL)).toBe(false);
    expect(sameOriginRequest(post({ origin: "null" }), PUBLIC_URL)).toBe(false);
  });
});

describe("declared guards", () => {
  const ctx = { service: { config: { publicUrl: PUBLIC_URL } } as unknown as Service, origin: PUBLIC_URL };

  it("run in order before the endpoint; the first refusal is the answer and the endpoint never runs", async () => {
    const ran: string[] = [];
    const pass: Guard = () => (ran.push("pass"), null);
    const refuse: Guard = async () => (ran.push("refuse"), new Response("refused", { status: 403 }));
    const never: Guard = () => (ran.push("never"), null);
    const endpoint = guarded(async () => (ran.push("endpoint"), new Response("ok")), { use: [pass, refuse, never] });
    const res = await endpoint(post({}), ctx);
    expect([res.status, await res.text()]).toEqual([403, "refused"]);
    expect(ran).toEqual(["pass", "refuse"]);
  });

  it("sameOrigin answers with the route's own refusal", async () => {
    const endpoint = guarded(async () => new Response("ok"), { use: [sameOrigin(() => new Response("not from here", { status: 403 }))] });
    expect((await endpoint(post({ origin: PUBLIC_URL }), ctx)).status).toBe(200);
    const refused = await endpoint(post({}), ctx);
    expect([refused.status, await refused.text()]).toEqual([403, "not from here"]);
  });
});
