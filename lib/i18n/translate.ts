/**
 * The message catalogue: one table per language with English's keys. A key missing from a
 * translation is shown in English, so a new English text never breaks a page. Parameters are
 * filled in as plain text: the caller escapes the result (React does; lib/hosted/html.ts and the
 * email templates use escapeHtml), never inserting a message as markup.
 */
import { en, type MessageKey, type Messages, type Translation } from "./messages/en";
import { de } from "./messages/de";
import { fr } from "./messages/fr";
import { DEFAULT_LOCALE, type Locale } from "./locales";

export type { MessageKey, Translation } from "./messages/en";
export type Catalogues = Record<Locale, Translation>;

export const CATALOGUES: Catalogues = { en, de, fr };

/** The `{name}` parameters of a message, from its English text. */
type Placeholders<S extends string> = S extends `${string}{${infer P}}${infer Rest}` ? P | Placeholders<Rest> : never;
export type MessageParams<K extends MessageKey> = Record<Placeholders<Messages[K]>, string | number>;
/** The arguments after the key: the parameters when the message has any, nothing otherwise. */
export type ParamArgs<K extends MessageKey> = [Placeholders<Messages[K]>] extends [never] ? [] : [params: MessageParams<K>];

/** The keys whose message takes parameters. */
export type ParameterisedKey = { [K in MessageKey]: [Placeholders<Messages[K]>] extends [never] ? never : K }[MessageKey];

export type Translate = <K extends MessageKey>(key: K, ...params: ParamArgs<K>) => string;

function interpolate(text: string, params: Record<string, string | number> | undefined): string {
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}

/** The text of `key` in `locale` from `catalogues` (English where the translation lacks it). */
export function translateWith(catalogues: Catalogues, locale: Locale, key: MessageKey, params?: Record<string, string | number>): string {
  const table = catalogues[locale] ?? catalogues[DEFAULT_LOCALE];
  const text = (Object.hasOwn(table, key) ? table[key] : undefined) ?? catalogues[DEFAULT_LOCALE][key] ?? en[key];
  return interpolate(text, params);
}

export function translate<K extends MessageKey>(locale: Locale, key: K, ...params: ParamArgs<K>): string {
  return translateWith(CATALOGUES, locale, key, params[0] as Record<string, string | number> | undefined);
}

/** `t(key, params)` for one language. */
export function translator(locale: Locale): Translate {
  return (key, ...params) => translate(locale, key, ...params);
}
