import { describe, expect, it } from "vitest";
import { LOCALES } from "../i18n/locales";
import { en } from "../i18n/messages/en";
import { CATALOGUES } from "../i18n/translate";
import { alertMessage, alertTime, type AlertFacts } from "./messages";
import { ALERT_EVENT_TYPES } from "./policy";

const facts = (over: Partial<AlertFacts> = {}): AlertFacts => ({
  type: "account_security.credential_added",
  data: { kind: "passkey" },
  at: new Date("2026-11-21T12:34:00Z"),
  ip: "203.0.113.7",
  to: "ada@example.test",
  locale: "en",
  workspaceName: "Acme <Corp>",
  applicationName: null,
  portalUrl: "https://auth.example.test/t/acme/auth/account?client_id=web&x=1",
  ...over,
});

describe("a security alert's message", () => {
  it("is written in every language for every alerting event", () => {
    const keys = Object.keys(en).filter((k) => k.startsWith("email.alert."));
    for (const locale of LOCALES) expect(keys.filter((k) => !(k in CATALOGUES[locale])), locale).toEqual([]);
    for (const locale of LOCALES) {
      for (const type of ALERT_EVENT_TYPES) {
        const m = alertMessage(facts({ type, locale }));
        expect(m.subject, `${locale} ${type}`).toContain("Acme <Corp>");
        expect(m.text).toContain("203.0.113.7");
        expect(m.text).toContain(facts().portalUrl!);
      }
    }
  });

  it("says when in UTC, in the account's language", () => {
    expect(alertTime(new Date("2026-11-21T12:34:00Z"), "en")).toBe("November 21, 2026 at 12:34 PM UTC");
    expect(alertTime(new Date("2026-11-21T12:34:00Z"), "de")).toBe("21. November 2026 um 12:34 UTC");
  });

  it("escapes the HTML part and links the portal once", () => {
    const m = alertMessage(facts());
    expect(m.html).toContain("Acme &lt;Corp&gt;");
    expect(m.html).not.toContain("<Corp>");
    expect(m.html.match(/<a href=/g)).toHaveLength(1);
    expect(m.html).toContain('<a href="https://auth.example.test/t/acme/auth/account?client_id=web&amp;x=1">');
  });

  it("gives no link where no application offers the portal", () => {
    const m = alertMessage(facts({ portalUrl: null }));
    expect(m.text).toContain("sign in and change your password now");
    expect(m.html).not.toContain("<a ");
    expect(alertMessage(facts({ type: "console.user.password_set", portalUrl: null })).text).toContain("If you did not expect this, contact the administrator.");
  });

  it("says the browser when the event knows it, and an unknown address when it does not", () => {
    const m = alertMessage(facts({ type: "sign_in.succeeded", data: { new_browser: true, browser: "Firefox 121 on Windows" }, ip: null }));
    expect(m.text).toContain("Browser: Firefox 121 on Windows");
    expect(m.text).toContain("From: an unknown address");
  });
});
