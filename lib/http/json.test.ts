import { describe, expect, it } from "vitest";
import { readJsonObject, type JsonBodyRefusals } from "./json";

class Refused extends Error {}

const refuse: JsonBodyRefusals = {
  unsupportedMediaType: () => new Refused("415"),
  tooLarge: (limit) => new Refused(`413 ${limit}`),
  badRequest: (description) => new Refused(`400 ${description}`),
};

/** What the body procedure makes of `text` for `members`: the body, or the refusal's message. */
async function read(text: string, members: readonly string[], contentType = "application/json", limit = 2048): Promise<Record<string, unknown> | string> {
  const request = new Request("https://h/x", { method: "POST", headers: { "content-type": contentType }, body: text });
  try {
    return await readJsonObject(request, { limit, members, membersDescription: "exactly the members", refuse });
  } catch (error) {
    if (error instanceof Refused) return error.message;
    throw error;
  }
}

const holds = async (text: string, members: readonly string[]) => typeof (await read(text, members)) === "object";

describe("readJsonObject", () => {
  it("holds for exactly the members, once each, in any order", async () => {
    expect(await holds('{"b":1,"a":{"b":2}}', ["a", "b"])).toBe(true);
    expect(await holds('{"a":1}', ["a", "b"])).toBe(false);
    expect(await holds('{"a":1,"b":2,"c":3}', ["a", "b"])).toBe(false);
    expect(await holds('{"a":1,"b":2,"a":3}', ["a", "b"])).toBe(false);
    expect(await holds('{"a":1,"b\\u0022":2}', ["a", "b"])).toBe(false);
    expect(await holds("{}", [])).toBe(true);
  });

  it("reads the top-level member names as written, duplicates included", async () => {
    // JSON.parse keeps the last of two equal names; the rule still sees both.
    expect(await holds('{"a":1,"b":{"c":2,"d":[{"e":3}]},"a":"x"}', ["a", "b", "a"])).toBe(true);
    expect(await holds('{"a":1,"b":{"c":2,"d":[{"e":3}]},"a":"x"}', ["a", "b"])).toBe(false);
  });

  it("is not fooled by colons, quotes, escapes and braces inside strings", async () => {
    expect(await holds('{"a":"x:\\"y\\":{","b\\u0022":"}","c" :\n null}', ["a", 'b"', "c"])).toBe(true);
    expect(await holds('{"a":["b",{"c":"d"}],"e":"\\\\"}', ["a", "e"])).toBe(true);
  });

  it("answers each refusal with the endpoint's own error, in order: media type, size, JSON, object, members", async () => {
    expect(await read('{"a":1}', ["a"], "text/plain")).toBe("415");
    expect(await read(`{"a":"${"x".repeat(40)}"}`, ["a"], "application/json", 16)).toBe("413 16");
    expect(await read('{"a":', ["a"])).toBe("400 The body is not valid JSON");
    for (const text of ["[]", "null", '"a"', "1"]) expect(await read(text, [])).toBe("400 The body must be a JSON object");
    expect(await read('{"a":1,"a":2}', ["a"])).toBe("400 exactly the members");
    expect(await read('{"a":1}', ["a"])).toEqual({ a: 1 });
  });
});
