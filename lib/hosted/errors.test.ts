import { describe, expect, it } from "vitest";
import { HOSTED_ERRORS, hostedError, hostedErrorText, isHostedErrorCode, SIGN_IN_FORM_ERRORS, signInFormMessage, type HostedErrorCode } from "./errors";
import { en } from "../i18n/messages/en";
import { withLocale } from "../i18n/request-locale";
import { LOCALES, type Locale } from "../i18n/locales";

/** Sample parameters for the codes whose message names something from the request. */
const SAMPLE: Record<string, Record<string, string>> = { name: { name: "state" }, reason: { reason: "It expired." } };
const paramsFor = (code: HostedErrorCode) => (/\{\w+\}/.test(en[HOSTED_ERRORS[code].message]) ? (code === "console_sign_in_failed" ? SAMPLE.reason : SAMPLE.name) : undefined);
const textOf = (code: HostedErrorCode, locale: Locale = "en") =>
  (hostedErrorText as (c: HostedErrorCode, p?: unknown, o?: unknown) => { title: string; message: string })(
    code,
    ...(paramsFor(code) ? [paramsFor(code), { locale }] : [{ locale }]),
  );

describe("the hosted error catalogue", () => {
  it("gives every code an error status, a title, a message and a page code, all non-empty", () => {
    const codes = Object.keys(HOSTED_ERRORS) as HostedErrorCode[];
    expect(codes.length).toBeGreaterThan(20);
    for (const code of codes) {
      const entry = HOSTED_ERRORS[code];
      const { title, message } = textOf(code);
      expect([code, entry.status >= 400 && entry.status < 600]).toEqual([code, true]);
      expect([code, title.trim().length > 0, message.trim().length > 0, entry.oauthError.length > 0]).toEqual([code, true, true, true]);
      expect([code, /^[a-z_]+$/.test(code) && /^[a-z_]+$/.test(entry.oauthError)]).toEqual([code, true]);
      if ("next" in entry) expect(en[entry.next].trim().length).toBeGreaterThan(0);
    }
  });

  it("has every code's title and message in German and French, with the request's parameters", () => {
    for (const code of Object.keys(HOSTED_ERRORS) as HostedErrorCode[]) {
      const english = textOf(code);
      for (const locale of LOCALES.filter((l) => l !== "en")) {
        const translated = textOf(code, locale);
        expect([code, locale, translated.title !== english.title || code === "console_sign_in_failed", translated.message !== english.message]).toEqual([code, locale, true, true]);
        if (paramsFor(code)) expect(translated.message).toContain(Object.values(paramsFor(code)!)[0]);
      }
    }
  });

  it("renders the page in the request's language: lang, title, message, the code's label and the next line", async () => {
    const page = await withLocale("de", () => hostedError("unknown_application")).text();
    expect(page).toContain('<html lang="de">');
    expect(page).toContain("<h1>Unbekannte Anwendung</h1>");
    expect(page).toContain("Diese Anwendung ist in diesem Arbeitsbereich nicht bekannt oder deaktiviert.");
    expect(page).toContain("Fehlercode: <code>invalid_request</code>");
    expect(page).toContain("Kehren Sie zur Anwendung zurück, von der Sie gekommen sind, und starten Sie die Anmeldung erneut.");
    const fr = await hostedError("logout_parameter_unknown", { name: "<x>" }, { locale: "fr" }).text();
    expect(fr).toContain('<html lang="fr">');
    expect(fr).toContain("Le paramètre &lt;x&gt; n’est pas accepté");
    expect(fr).toContain("Retournez à l’application d’où vous venez\u00a0; elle peut y fermer votre session.");
    // Outside a request, and by default, English.
    expect(await hostedError("unknown_application").text()).toContain('<html lang="en">');
    expect(hostedErrorText("sign_in_link_expired", { locale: "fr" }).title).toBe("Ce lien de connexion a expiré");
    expect(signInFormMessage("invalid_credentials", "de")).toBe("E-Mail-Adresse oder Passwort ist falsch.");
  });

  it("renders a code as the hosted error page, with its parameters and overrides", async () => {
    const page = hostedError("logout_parameter_refused", { name: "id_token_hint" });
    expect(page.status).toBe(400);
    const body = await page.text();
    expect(body).toContain("<h1>Sign-out failed</h1>");
    expect(body).toContain("<p>id_token_hint is not accepted; send only client_id and post_logout_redirect_uri.</p>");
    expect(body).toContain("Error code: <code>invalid_request</code>");
    expect(body).toContain("Return to the application you came from; it can end your session there.");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");

    const console = await hostedError("console_sign_in_failed", { reason: "This sign-in has expired or was already used." }, { oauthError: "expired" }).text();
    expect(console).toContain("<p>This sign-in has expired or was already used. Start again from /console.</p>");
    expect(console).toContain("Error code: <code>expired</code>");
    // Parameters are text, never markup.
    expect(await hostedError("logout_parameter_unknown", { name: "<script>" }).text()).toContain("Parameter &lt;script&gt; is not accepted");
  });

  it("keeps the sign-in form's ?error= values as catalogue codes with today's text; any other value shows nothing", () => {
    for (const code of SIGN_IN_FORM_ERRORS) expect(isHostedErrorCode(code)).toBe(true);
    expect(signInFormMessage("invalid_credentials")).toBe("The email or password is incorrect.");
    expect(signInFormMessage("rate_limited")).toBe("Too many attempts. Wait a moment and try again.");
    // Codes that are pages, unknown values and names from Object's prototype show nothing on the form.
    for (const value of ["sign_in_expired", "unknown", "", "toString", "constructor", "__proto__", undefined, ["invalid_credentials"]]) {
      expect(signInFormMessage(value)).toBeUndefined();
    }
    expect(isHostedErrorCode("toString")).toBe(false);
  });
});
