/**
 * The hosted pages and emails in the browser's language (lib/i18n): Accept-Language chooses
 * German or French, anything else gets English, and a text a translation lacks is shown in
 * English. Error pages come through the route table as a browser gets them; the sign-in page's
 * forms are rendered from the page's own data and components.
 */
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { fr } from "../../../lib/i18n/messages/fr";
import { signInFormMessage } from "../../../lib/hosted/errors";
import { signInView } from "../../../lib/sign-in/view";
import { FirstFactor } from "../../../components/hosted/steps/first-factor";
import { EmailCodeEntry } from "../../../components/hosted/steps/email-code";
import { authorizeQuery, call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, SPA, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postPassword, startSignIn, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";
import { OUTBOX, outboxFor, requestSignInCode } from "../../helpers/factors/email";

let h: Harness;
const ws = uniqueWorkspaceId("i18n");

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX });
  await seed(h, standardWorkspace(ws));
});

const GERMAN = { "accept-language": "de-DE,de;q=0.9,en;q=0.8" };
const FRENCH = { "accept-language": "fr-CH, fr;q=0.9, en;q=0.8" };
const JAPANESE = { "accept-language": "ja-JP,ja;q=0.9" };

/** The hosted error page authorize answers for a client the workspace does not know. */
async function unknownClientPage(headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const { query } = authorizeQuery({ ...SPA, client_id: "no-such-client" });
  const res = await call(h, `/t/${ws}/oauth2/authorize?${query}`, { headers });
  return { status: res.status, body: await res.text() };
}

/** The sign-in page's first step as the page renders it, in `locale`, with the form's `?error=`. */
async function firstStepHtml(s: PendingSignIn, locale: "en" | "de" | "fr", error?: string): Promise<string> {
  const view = await signInView(await workspaceContext(h, ws), s.tx, s.jar.header(), locale);
  if (view.kind !== "step") throw new Error("the sign-in expired");
  return renderToStaticMarkup(createElement(FirstFactor, { view, error: signInFormMessage(error, locale) }));
}

describe("hosted error pages follow Accept-Language", () => {
  it("German: lang, title, message, the code's label and the next line", async () => {
    const page = await unknownClientPage(GERMAN);
    expect(page.status).toBe(404);
    expect(page.body).toContain('<html lang="de">');
    expect(page.body).toContain("<h1>Unbekannte Anwendung</h1>");
    expect(page.body).toContain("Diese Anwendung ist in diesem Arbeitsbereich nicht bekannt oder deaktiviert.");
    expect(page.body).toContain("Fehlercode: <code>invalid_request</code>");
  });

  it("French, for the logout errors too (with the request's parameter)", async () => {
    const res = await call(h, `/t/${ws}/oidc/logout?client_id=spa&post_logout_redirect_uri=https%3A%2F%2Fapp.example.test%2F&state=x`, { headers: FRENCH });
    const body = await res.text();
    expect(res.status).toBe(400);
    expect(body).toContain('<html lang="fr">');
    expect(body).toContain("<h1>Échec de la déconnexion</h1>");
    expect(body).toContain("state n’est pas accepté\u00a0; envoyez uniquement client_id et post_logout_redirect_uri.");
  });

  it("an unsupported language, no header or a malformed one: English, exactly as before", async () => {
    for (const headers of [JAPANESE, {}, { "accept-language": ";;q=x,,," }]) {
      const page = await unknownClientPage(headers);
      expect(page.body).toContain('<html lang="en">');
      expect(page.body).toContain("<h1>Unknown application</h1>");
      expect(page.body).toContain("<p>This application is not known to this workspace, or it is disabled.</p>");
      expect(page.body).toContain("Error code: <code>invalid_request</code>");
      expect(page.body).toContain("Return to the application you came from and start signing in again.");
    }
  });
});

describe("the sign-in page in the browser's language", () => {
  it("German: the first step's labels and button, and a wrong password's error in German", async () => {
    const s = await startSignIn(h, ws, SPA);
    expect(outcome(await postPassword(h, s, ADA.email, "not the password"))).toEqual({ to: "page", error: "invalid_credentials" });
    const html = await firstStepHtml(s, "de", "invalid_credentials");
    expect(html).toContain(">E-Mail-Adresse oder Passwort ist falsch.<");
    expect(html).toContain(">E-Mail-Adresse</label>");
    expect(html).toContain(">Passwort</label>");
    expect(html).toContain(">Anmelden</button>");
    expect(html).toContain(">Anmeldecode per E-Mail senden</button>");
    expect(html).not.toMatch(/>(Email|Password|Sign in)</);
  });

  it("English stays as it was", async () => {
    const s = await startSignIn(h, ws, SPA);
    const html = await firstStepHtml(s, "en", "invalid_credentials");
    expect(html).toContain(">The email or password is incorrect.<");
    expect(html).toContain(">Email</label>");
    expect(html).toContain(">Password</label>");
    expect(html).toContain(">Sign in</button>");
    expect(html).toContain(">Email me a sign-in code</button>");
  });

  describe("a text French lacks", () => {
    const saved = fr["signIn.password"];
    afterEach(() => {
      (fr as Record<string, string>)["signIn.password"] = saved;
    });

    it("is shown in English while the rest stays French", async () => {
      delete (fr as Partial<Record<string, string>>)["signIn.password"];
      const s = await startSignIn(h, ws, SPA);
      const html = await firstStepHtml(s, "fr");
      expect(html).toContain(">Password</label>");
      expect(html).toContain(">Adresse e-mail</label>");
      expect(html).toContain(">Se connecter</button>");
    });
  });
});

describe("emails in the language of the request that sends them", () => {
  it("German: subject, text and HTML (with lang), the address's code step in German", async () => {
    const s = await startSignIn(h, ws, SPA);
    expect(outcome(await requestSignInCode(h, s, ADA.email, GERMAN))).toEqual({ to: "page", error: null });
    const [message] = await outboxFor(h, ws, ADA.email);
    const code = /^(\d{6}) /.exec(message.subject)?.[1];
    expect(code).toMatch(/^\d{6}$/);
    expect(message.subject).toBe(`${code} ist Ihr Anmeldecode für Workspace ${ws}`);
    expect(message.text).toContain(`Geben Sie diesen Code ein, um sich bei Workspace ${ws} anzumelden:`);
    expect(message.text).toContain("Er läuft in 10 Minuten ab und kann einmal verwendet werden.");
    expect(message.html).toContain('<html lang="de">');
    expect(message.html).toContain("Falls Sie dies nicht angefordert haben, können Sie diese Nachricht ignorieren");

    const view = await signInView(await workspaceContext(h, ws), s.tx, s.jar.header(), "de");
    if (view.kind !== "step") throw new Error("expired");
    const html = renderToStaticMarkup(createElement(EmailCodeEntry, { view, purpose: "sign_in" }));
    expect(html).toContain(`Falls zu <strong class="font-medium text-slate-900">${ADA.email}</strong> ein Konto existiert, haben wir dorthin einen 6-stelligen Anmeldecode gesendet.`);
    expect(html).toContain("Der Code ist 10 Minuten gültig.");
  });

  it("an unsupported language: English, as before", async () => {
    h.clock.advance(60 * 60_000); // past the resend cooldown of the previous test's address
    const s = await startSignIn(h, ws, SPA);
    expect(outcome(await requestSignInCode(h, s, ADA.email, JAPANESE))).toEqual({ to: "page", error: null });
    const [message] = await outboxFor(h, ws, ADA.email);
    expect(message.subject).toMatch(new RegExp(`^\\d{6} is your sign-in code for Workspace ${ws}$`));
    expect(message.html).toContain('<html lang="en">');
    expect(message.text).toContain("If you did not ask for this, you can ignore this message: nothing happens without the code.");
  });
});
