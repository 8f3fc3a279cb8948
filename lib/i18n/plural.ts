/**
 * A count with its noun in the form the language's plural rule asks for (Intl.PluralRules, CLDR):
 * "1 user", "2 users", "0 users"; in French 0 and 1 both take the singular. The console (English)
 * prints every count of things through it, so none reads "1 users".
 */
import { DEFAULT_LOCALE, type Locale } from "./locales";

const rules = new Map<Locale, Intl.PluralRules>();

function ruleOf(locale: Locale): Intl.PluralRules {
  let rule = rules.get(locale);
  if (!rule) rules.set(locale, (rule = new Intl.PluralRules(locale)));
  return rule;
}

/** `one` or `other`, as `n` asks in `locale`. */
export function pluralForm(n: number, one: string, other: string, locale: Locale = DEFAULT_LOCALE): string {
  return ruleOf(locale).select(n) === "one" ? one : other;
}

/** "1 user", "3 users": the number and its noun. */
export function countOf(n: number, one: string, other: string, locale: Locale = DEFAULT_LOCALE): string {
  return `${n} ${pluralForm(n, one, other, locale)}`;
}
