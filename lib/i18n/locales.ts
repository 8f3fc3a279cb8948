/**
 * The languages of the hosted pages and emails, and how one is chosen from a request's
 * Accept-Language (RFC 9110 §12.5.4, matched by RFC 4647 "lookup"): the most preferred range
 * that a supported language answers, else English.
 */
export const LOCALES = ["en", "de", "fr"] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = "en";

/**
 * A text a feature holds in its own folder, in every language (the type check fails until each has
 * it): a factor's field label, say. The shared catalogue (./messages) holds the texts of the pages
 * themselves; a feature that brings a text of its own keeps it beside its rules.
 */
export type LocalizedText = Readonly<Record<Locale, string>>;

/** The request header proxy.ts sets to the hosted page's language, read by the root layout for `<html lang>`. */
export const LOCALE_HEADER = "x-latchkey-locale";

export function isLocale(value: unknown): value is Locale {
  return typeof value === "string" && (LOCALES as readonly string[]).includes(value);
}

/** The most a header is read: a browser's list is a few dozen characters. */
const MAX_HEADER = 1024;
const MAX_RANGES = 32;
const RANGE = /^(?:\*|[a-z]{1,8}(?:-[a-z0-9]{1,8})*)$/i;
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

interface Range {
  tag: string;
  q: number;
  order: number;
}

/** The header's well-formed ranges; a malformed element is skipped, never guessed at. */
function parseRanges(header: string): Range[] {
  const ranges: Range[] = [];
  for (const [order, element] of header.slice(0, MAX_HEADER).split(",").slice(0, MAX_RANGES).entries()) {
    const [rawTag, ...params] = element.split(";").map((part) => part.trim());
    if (!rawTag || !RANGE.test(rawTag)) continue;
    let q = 1;
    let valid = true;
    for (const param of params) {
      const match = /^q\s*=\s*(.*)$/i.exec(param);
      if (!match) continue; // Other parameters carry no weight (RFC 9110 defines only q).
      if (!QVALUE.test(match[1])) valid = false;
      else q = Number(match[1]);
    }
    if (valid) ranges.push({ tag: rawTag.toLowerCase(), q, order });
  }
  return ranges;
}

/** RFC 4647 §3.4 lookup of one range: `de-CH-1996` tries `de-ch-1996`, `de-ch`, then `de`. */
function lookup(tag: string): Locale | null {
  const subtags = tag.split("-");
  while (subtags.length > 0) {
    const candidate = subtags.join("-");
    if (isLocale(candidate)) return candidate;
    subtags.pop();
    // A single-letter subtag (an extension or private-use singleton) is dropped with what follows it.
    if (subtags.length > 0 && subtags[subtags.length - 1].length === 1) subtags.pop();
  }
  return null;
}

/** The language for a request's Accept-Language header: never throws, always a supported locale. */
export function negotiateLocale(acceptLanguage: string | null | undefined): Locale {
  if (typeof acceptLanguage !== "string" || acceptLanguage.length === 0) return DEFAULT_LOCALE;
  const ranges = parseRanges(acceptLanguage);
  // "q=0" means "not acceptable": such a language is never chosen, not even for "*".
  const refused = new Set(ranges.filter((r) => r.q === 0 && r.tag !== "*").map((r) => lookup(r.tag) === r.tag ? r.tag : null));
  const preferred = ranges.filter((r) => r.q > 0).sort((a, b) => b.q - a.q || a.order - b.order);
  for (const range of preferred) {
    if (range.tag === "*") {
      const any = LOCALES.find((l) => !refused.has(l));
      if (any) return any;
      continue;
    }
    const locale = lookup(range.tag);
    if (locale && !refused.has(locale)) return locale;
  }
  return DEFAULT_LOCALE;
}
