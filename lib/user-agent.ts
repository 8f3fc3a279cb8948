/**
 * Browser and operating system from a User-Agent header: the one parser for every device list (the
 * console's users and sessions, the portal's application sessions), so a browser has one name
 * everywhere. Covers the common browsers (Chrome, headless Chrome included, Edge, Firefox, Safari,
 * Opera, Samsung Internet; Chrome, Firefox and Edge on iOS) and systems (Windows, macOS, iOS,
 * iPadOS, Android, ChromeOS, Linux); anything else reads as "Unknown browser" / "Unknown system".
 * Order matters: Edge and Opera also say "Chrome", Chrome also says "Safari", every iOS browser
 * says "Safari". The raw header is never shown (it is long and client-chosen).
 */

export interface Device {
  browser: string;
  /** Major version, when the header gives one. */
  version: string | null;
  os: string;
  mobile: boolean;
  /** Whether the browser, and the system, were recognised. */
  known: { browser: boolean; os: boolean };
  /** "Chrome 120 on Windows", "Safari on iOS", "Unknown browser on Linux", "Unknown device" (`deviceLabel` in English). */
  label: string;
}

/** The words a device's name is made of, in one language (the portal's come from lib/i18n). */
export interface DeviceWords {
  /** "Chrome 120 on Windows". */
  on: (browser: string, system: string) => string;
  unknownBrowser: string;
  /** Neither browser nor system recognised (or no header). */
  unknownDevice: string;
}

export const ENGLISH_DEVICE_WORDS: DeviceWords = {
  on: (browser, system) => `${browser} on ${system}`,
  unknownBrowser: "Unknown browser",
  unknownDevice: "Unknown device",
};

const BROWSERS: ReadonlyArray<[name: string, pattern: RegExp]> = [
  ["Edge", /\b(?:Edg|EdgA|EdgiOS)\/(\d+)/],
  ["Opera", /\b(?:OPR|OPiOS)\/(\d+)/],
  ["Samsung Internet", /\bSamsungBrowser\/(\d+)/],
  ["Firefox", /\b(?:Firefox|FxiOS)\/(\d+)/],
  ["Chrome", /\b(?:Chrome|HeadlessChrome|CriOS)\/(\d+)/],
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
  const device: Omit<Device, "label"> = { browser: browser ?? "Unknown browser", version, os: os ?? "Unknown system", mobile, known: { browser: browser !== null, os: os !== null } };
  return { ...device, label: deviceLabel(device) };
}

/** A device's name in `words`' language: "Chrome 120 on Windows", "Chrome 120", "Unknown browser on Linux", "Unknown device". */
export function deviceLabel(device: Omit<Device, "label">, words: DeviceWords = ENGLISH_DEVICE_WORDS): string {
  const browser = device.known.browser ? `${device.browser}${device.version ? ` ${device.version}` : ""}` : null;
  if (device.known.os) return words.on(browser ?? words.unknownBrowser, device.os);
  return browser ?? words.unknownDevice;
}
