import { describe, expect, it } from "vitest";
import { OAuthError } from "./errors";
import { OAUTH_BODY_LIMIT, parseParams, readOAuthForm } from "./form";

const post = (body: string, type = "application/x-www-form-urlencoded") => new Request("https://x.test/", { method: "POST", body, headers: { "content-type": type } });

async function failure(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    return e as OAuthError;
  }
  throw new Error("expected a failure");
}

describe("OAuth form bodies", () => {
  it("parses a form", async () => {
    const form = await readOAuthForm(post("a=1&b=two+words"));
    expect(Object.fromEntries(form)).toEqual({ a: "1", b: "two words" });
  });
  it("accepts a charset parameter on the media type", async () => {
    expect((await readOAuthForm(post("a=1", "application/x-www-form-urlencoded; charset=UTF-8"))).get("a")).toBe("1");
  });
  it("refuses another media type with 415", async () => {
    expect((await failure(readOAuthForm(post("{}", "application/json")))).status).toBe(415);
  });
  it("refuses a body over 8 KiB with 413, and accepts exactly 8 KiB", async () => {
    expect((await failure(readOAuthForm(post("a=" + "x".repeat(OAUTH_BODY_LIMIT - 1))))).status).toBe(413);
    expect((await readOAuthForm(post("a=" + "x".repeat(OAUTH_BODY_LIMIT - 2)))).get("a")).toHaveLength(OAUTH_BODY_LIMIT - 2);
  });
  it("refuses duplicated parameters, even when one is empty", () => {
    expect(() => parseParams(new URLSearchParams("a=1&a=2"))).toThrow(/duplicated/);
    expect(() => parseParams(new URLSearchParams("a=&a=2"))).toThrow(/duplicated/);
  });
  it("refuses unrecognized parameters when a set is given", () => {
    expect(() => parseParams(new URLSearchParams("a=1&z=2"), new Set(["a"]))).toThrow(/not recognized/);
  });
  it("treats empty values as absent", () => {
    expect(parseParams(new URLSearchParams("a=&b=1")).has("a")).toBe(false);
  });
});
