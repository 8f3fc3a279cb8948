import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fileOffsetClock, MINUTE } from "./clock";
import { clockFor } from "./service";

const dir = mkdtempSync(path.join(tmpdir(), "latchkey-clock-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the end-to-end tests' shifted clock", () => {
  it("is the system time plus the file's milliseconds, re-read as the file changes; no file is no shift", async () => {
    const file = path.join(dir, "offset");
    const clock = fileOffsetClock(file);
    expect(Math.abs(clock.now().getTime() - Date.now())).toBeLessThan(1000);
    writeFileSync(file, String(11 * MINUTE));
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(clock.now().getTime() - Date.now()).toBeGreaterThan(11 * MINUTE - 1000);
    writeFileSync(file, "not a number");
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(Math.abs(clock.now().getTime() - Date.now())).toBeLessThan(1000);
  });

  it("is refused with an https PUBLIC_URL (production); without the setting the clock is the system's", () => {
    expect(() => clockFor({ publicUrl: "https://auth.example.com" }, path.join(dir, "x"))).toThrow(/end-to-end tests only/);
    expect(clockFor({ publicUrl: "https://auth.example.com" }, undefined).now()).toBeInstanceOf(Date);
    expect(() => clockFor({ publicUrl: "http://localhost:3000" }, path.join(dir, "x"))).not.toThrow();
  });
});
