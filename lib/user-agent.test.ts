import { describe, expect, it } from "vitest";
import { parseUserAgent } from "./user-agent";

const cases: Array<[string, string, string, string]> = [
  ["Chrome on Windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", "Chrome", "Windows"],
  ["Edge on Windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91", "Edge", "Windows"],
  ["Firefox on Linux", "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0", "Firefox", "Linux"],
  ["Firefox on macOS", "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.2; rv:121.0) Gecko/20100101 Firefox/121.0", "Firefox", "macOS"],
  ["Safari on macOS", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15", "Safari", "macOS"],
  ["Safari on iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1", "Safari", "iOS"],
  ["Safari on iPad", "Mozilla/5.0 (iPad; CPU OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1", "Safari", "iPadOS"],
  ["Chrome on iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/120.0.6099.119 Mobile/15E148 Safari/604.1", "Chrome", "iOS"],
  ["Firefox on iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/121.0 Mobile/15E148 Safari/605.1.15", "Firefox", "iOS"],
  ["Chrome on Android", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36", "Chrome", "Android"],
  ["Samsung Internet on Android", "Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36", "Samsung Internet", "Android"],
  ["Opera on Windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 OPR/106.0.0.0", "Opera", "Windows"],
  ["Headless Chrome on Linux", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36", "Chrome", "Linux"],
  ["Chrome on ChromeOS", "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", "Chrome", "ChromeOS"],
];

describe("parseUserAgent", () => {
  it.each(cases)("%s", (_name, ua, browser, os) => {
    const d = parseUserAgent(ua);
    expect([d.browser, d.os]).toEqual([browser, os]);
  });

  it("labels with the major version and system", () => {
    expect(parseUserAgent(cases[0][1]).label).toBe("Chrome 120 on Windows");
    expect(parseUserAgent(cases[5][1])).toMatchObject({ label: "Safari 17 on iOS", mobile: true });
    expect(parseUserAgent(cases[0][1]).mobile).toBe(false);
  });

  it("falls back for unknown, empty and missing headers", () => {
    expect(parseUserAgent("curl/8.4.0")).toMatchObject({ browser: "Unknown browser", os: "Unknown system", label: "Unknown device" });
    expect(parseUserAgent("")).toMatchObject({ label: "Unknown device" });
    expect(parseUserAgent(null)).toMatchObject({ label: "Unknown device" });
    expect(parseUserAgent("SomeBot/1.0 (Linux)").label).toBe("Unknown browser on Linux");
  });
});
