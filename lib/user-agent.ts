/**
 * Browser and operating system from a User-Agent header, for the console's device lists. Covers
 * the common browsers (Chrome, Edge, Firefox, Safari, Opera, Samsung Internet; Chrome, Firefox
 * and Edge on iOS) and systems (Windows, macOS, iOS, iPadOS, Android, ChromeOS, Linux); anything
 * else reads as "Unknown browser" / "Unknown system". Order matters: Edge and Opera also say
 * "Chrome", Chrome also says "Safari", every iOS browser says "Safari".
 */

export interface Device {
  browser: string;
  /** Major version, when the header gives one. */
  version: string | null;
  os: string;
  mobile: boolean;
  /** "Chrome 120 on Windows", "Safari on iOS", "Unknown browser". */
  label: string;
}

const BROWSERS: ReadonlyArray<[name: string, pattern: RegExp]> = [
  ["Edge", /\b(?:Edg|EdgA|EdgiOS)\/(\d+)/],
  ["Opera", /\b(?:OPR|OPiOS)\/(\d+)/],
  ["Samsung Internet", /\bSamsungBrowser\/(\d+)/],
  ["Firefox", /\b(?:Firefox|FxiOS)\/(\d+)/],
  ["Chrome", /\b(?:Chrome|CriOS)\/(\d+)/],
  ["Safari", /\bVersion\/(\d+)[\d.]*(?: Mobile\/\w+)? Safari\//],
];

function osOf(ua: string): string | null {
  if (/\bWindows NT\b/.test(ua)) return "Windows";
  if (/\biPad\b/.test(ua)) return "iPadOS";
  if (/\biPhone\b|\biPod\b/.test(ua)) return "iOS";
  if (/\bAndroid\b/.test(ua)) return "Android";
  if (/\bCrOS\b/.test(ua)) return "ChromeOS";
  if (/\bMac OS X\b|\bMacintosh\b/.test(ua)) return "macOS";
  if (/\bLinux\b/.test(ua)) return "Linux";
  return null;
}

export function parseUserAgent(header: string | null | undefined): Device {
  const ua = (header ?? "").slice(0, 512);
  let browser: string | null = null;
  let version: string | null = null;
  for (const [name, pattern] of BROWSERS) {
    const m = pattern.exec(ua);
    if (m) {
      browser = name;
      version = m[1] ?? null;
      break;
    }
  }
  // Mobile Safari without a Version/ token (in-app views) is still WebKit on iOS.
  const os = osOf(ua);
  if (!browser && (os === "iOS" || os === "iPadOS") && /AppleWebKit/.test(ua)) browser = "Safari";
  const mobile = /\bMobile\b|\biPhone\b|\bAndroid\b.*\bMobile\b/.test(ua);
  const name = browser ?? "Unknown browser";
  const label = browser ? `${name}${version ? ` ${version}` : ""}${os ? ` on ${os}` : ""}` : os ? `Unknown browser on ${os}` : "Unknown browser";
  return { browser: name, version, os: os ?? "Unknown system", mobile, label };
}
