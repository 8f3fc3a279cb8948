import { describe, expect, it } from "vitest";
import { applicationOptionOn, defineApplicationOption } from "./application-options";

const OPTION = defineApplicationOption({ key: "some_option", label: "Some option", hint: "", types: ["PUBLIC", "WEB_CONFIDENTIAL"] });

describe("applicationOptionOn", () => {
  it("is on only when stored true for a client type the option applies to", () => {
    expect(applicationOptionOn({ type: "PUBLIC", options: { some_option: true } }, OPTION)).toBe(true);
    expect(applicationOptionOn({ type: "WEB_CONFIDENTIAL", options: { some_option: true } }, OPTION)).toBe(true);
    // Stored for a type it does not apply to (the application's type changed since): off.
    expect(applicationOptionOn({ type: "M2M", options: { some_option: true } }, OPTION)).toBe(false);
    expect(applicationOptionOn({ type: "PUBLIC", options: {} }, OPTION)).toBe(false);
    expect(applicationOptionOn({ type: "PUBLIC", options: null }, OPTION)).toBe(false);
  });
});
