import { describe, expect, it } from "vitest";
import { en } from "./messages/en";
import { de } from "./messages/de";
import { fr } from "./messages/fr";
import { CATALOGUES, translate, translateWith, translator, type Catalogues } from "./translate";
import { currentLocale, withLocale, withRequestLocale } from "./request-locale";
import { LOCALES } from "./locales";

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("the message catalogue", () => {
  it("has no key in a translation that English lacks, and the same parameters as English", () => {
    for (const locale of LOCALES) {
      const table: Record<string, string | undefined> = CATALOGUES[locale];
      const unknown = Object.keys(table).filter((key) => !Object.hasOwn(en, key));
      expect([locale, unknown]).toEqual([locale, []]);
      for (const [key, text] of Object.entries(table)) {
        expect([locale, key, placeholders(text ?? "")]).toEqual([locale, key, placeholders(en[key as keyof typeof en])]);
        expect([locale, key, (text ?? "").trim().length > 0]).toEqual([locale, key, true]);
      }
    }
  });

  it("lists the keys German and French have not translated (none today)", () => {
    const missing = (table: Record<string, string | undefined>) => Object.keys(en).filter((key) => !Object.hasOwn(table, key));
    expect({ de: missing(de), fr: missing(fr) }).toEqual({ de: [], fr: [] });
  });

  it("says 'or' once between two ways: the divider says it, so the text after it does not start with it again", () => {
    const or = (locale: "en" | "de" | "fr") => translate(locale, "signIn.or");
    for (const locale of LOCALES) {
      // The enrolment's security key and passkey come after the authenticator app's divider.
      expect(translate(locale, "passkey.enrollIntro").toLowerCase().startsWith(`${or(locale).toLowerCase()} `), locale).toBe(false);
    }
  });

  it("fills parameters in as text, and leaves an unknown one as written", () => {
    expect(translate("en", "signIn.title.signIn", { application: "Acme" })).toBe("Sign in to Acme");
    expect(translate("de", "signIn.title.signIn", { application: "Acme" })).toBe("Bei Acme anmelden");
    expect(translate("fr", "emailCode.validFor", { minutes: 10 })).toBe("Le code est valable 10 minutes.");
    expect(translate("en", "signIn.title.signIn", { application: "<b>{x}</b>" })).toBe("Sign in to <b>{x}</b>");
    expect(translator("fr")("signIn.password")).toBe("Mot de passe");
  });

  it("shows English for a key a translation lacks", () => {
    const withoutKey: Catalogues = { en, de, fr: { ...fr } };
    delete withoutKey.fr["signIn.password"];
    expect(translateWith(withoutKey, "fr", "signIn.password")).toBe("Password");
    expect(translateWith(withoutKey, "fr", "signIn.email")).toBe("Adresse e-mail");
    // And a key whose translation is present but empty-valued by mistake is not shown empty either.
    expect(translateWith({ en, de: { "signIn.password": undefined }, fr }, "de", "signIn.password")).toBe("Password");
  });

  it("knows the request's language inside withLocale / withRequestLocale, English outside", async () => {
    expect(currentLocale()).toBe("en");
    expect(withLocale("fr", () => currentLocale())).toBe("fr");
    const request = new Request("https://auth.example.test/", { headers: { "accept-language": "de-AT,de;q=0.9" } });
    expect(await withRequestLocale(request, async () => {
      await new Promise((r) => setTimeout(r, 1));
      return currentLocale();
    })).toBe("de");
    expect(currentLocale()).toBe("en");
  });
});
