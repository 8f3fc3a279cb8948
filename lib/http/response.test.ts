import { describe, expect, it } from "vitest";
import { lightResponse, rawResponse, toWebResponse, withHeaders } from "./response";

describe("light responses", () => {
  it("are Responses to every caller: status, case-insensitive headers, body readers", async () => {
    const res = lightResponse('{"a":1}', 201, { "Content-Type": "application/json", "Cache-Control": "no-store" });
    expect(res).toBeInstanceOf(Response);
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("CACHE-CONTROL")).toBe("no-store");
    expect(await res.json()).toEqual({ a: 1 });
    expect(await res.clone().text()).toBe('{"a":1}');
    expect(new TextDecoder().decode(await res.clone().arrayBuffer())).toBe('{"a":1}');
  });

  it("give a real stream when a caller reads body", async () => {
    const res = lightResponse("hello", 200, {});
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe("hello");
    expect(lightResponse(null, 204, {}).body).toBeNull();
  });

  it("join repeated names as Headers does and refuse Set-Cookie", () => {
    const raw = rawResponse(lightResponse("x", 200, { Vary: "Accept", vary: "Origin" }))!;
    expect(raw.headers.vary).toBe(new Headers([["Vary", "Accept"], ["vary", "Origin"]]).get("vary"));
    expect(() => lightResponse("x", 200, { "Set-Cookie": "a=b" })).toThrow(/Set-Cookie/);
  });

  it("keep headers a caller changed through the Headers object", () => {
    const res = lightResponse("x", 429, { "Content-Type": "text/plain" });
    res.headers.set("Retry-After", "7");
    expect(rawResponse(res)!.headers["retry-after"]).toBe("7");
    res.headers.append("Set-Cookie", "a=b");
    expect(rawResponse(res)).toBeNull();
  });

  it("convert to an undici Response with the same status, headers and bytes", async () => {
    const light = lightResponse("{}", 400, { "Content-Type": "application/json", "WWW-Authenticate": 'Basic realm="x"' });
    const web = toWebResponse(light);
    expect(rawResponse(web)).toBeNull();
    expect(web.status).toBe(400);
    expect([...web.headers]).toEqual([...light.headers]);
    expect(await web.text()).toBe("{}");
  });

  it("add headers with set semantics, appending Vary, on light and real responses alike", async () => {
    const extra = { "Access-Control-Allow-Origin": "https://app.test", Vary: "Origin" };
    for (const res of [lightResponse("{}", 200, { Vary: "Accept", "Content-Type": "application/json" }), new Response("{}", { headers: { Vary: "Accept", "Content-Type": "application/json" } })]) {
      const out = withHeaders(res, extra);
      expect(out.headers.get("vary")).toBe("Accept, Origin");
      expect(out.headers.get("access-control-allow-origin")).toBe("https://app.test");
      expect(await out.text()).toBe("{}");
    }
  });
});
