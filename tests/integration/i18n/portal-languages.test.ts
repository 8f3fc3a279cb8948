/**
 * The account-security portal in the browser's language: its sections, its verification panel,
 * its form messages and its hosted error pages in German and French; English unchanged.
 */
import { createElement, type ReactElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { totpFactors } from "../../../db/schema";
import { livePortalSession } from "../../../lib/account-security/portal-session";
import { loadPortalView, portalCsrf, portalFormMessage } from "../../../lib/account-security/portal-view";
import { loadManageView } from "../../../lib/account-security/manage-view";
import type { Locale } from "../../../lib/i18n/locales";
import { VerifySection } from "../../../components/portal/verify";
import { ApplicationSessionsSection, FactorsSection, RecoveryCodesSection, SecurityAlertsSection } from "../../../components/portal/sections";
import { call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { WEB, standardWorkspace } from "../../helpers/fixtures";
import { postPassword, userIdOf, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";

let h: Harness;
const ws = uniqueWorkspaceId("i18n-portal");
const USER = { email: "portal-i18n@example.test", password: "a long enough password for tests" };

beforeAll(async () => {
  h = await createHarness();
  const doc = standardWorkspace(ws) as ReturnType<typeof standardWorkspace> & { users: object[] };
  for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
  doc.users.push({ email: USER.email, password: USER.password, email_verified: true });
  await seed(h, doc);
});

/** The portal by the direct link, in a browser of its own (password sign-in). */
async function openPortal(): Promise<Jar> {
  const jar = new Jar();
  const link = `/t/${ws}/auth/account?client_id=${WEB.client_id}`;
  const first = await call(h, link);
  jar.take(first);
  const tx = new URL(first.headers.get("location")!, PUBLIC_URL).searchParams.get("tx")!;
  const s: PendingSignIn = { workspaceId: ws, tx, jar, verifier: "", state: "", nonce: "", client: { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri } };
  expect((await postPassword(h, s, USER.email, USER.password)).status).toBe(303);
  jar.take(await call(h, link, { cookie: jar.header() }));
  return jar;
}

/** The portal page's sections as the page renders them, in `locale`. */
async function portalHtml(jar: Jar, locale: Locale): Promise<string> {
  const ctx = await workspaceContext(h, ws);
  const portal = (await livePortalSession(ctx, jar.header()))!;
  const [view, manage] = await Promise.all([loadPortalView(ctx, portal), loadManageView(ctx, portal, jar.header())]);
  const sections: ReactElement[] = [
    createElement(VerifySection, { view, locale }),
    createElement(FactorsSection, { view, manage, locale }),
    createElement(RecoveryCodesSection, { view, manage, locale }),
    createElement(ApplicationSessionsSection, { view, manage, locale }),
    createElement(SecurityAlertsSection, { view, manage, locale }),
  ];
  return sections.map((s) => renderToStaticMarkup(s)).join("\n");
}

describe("the account-security portal in the browser's language", () => {
  let jar: Jar;
  beforeAll(async () => {
    jar = await openPortal();
  });

  it("German sections and verification panel (just signed in: confirmed)", async () => {
    const html = await portalHtml(jar, "de");
    for (const text of ["Sie haben vor Kurzem bestätigt, dass Sie es sind", "Eine Authenticator-App hinzufügen", "Anmeldemethoden", "Sicherheitsschlüssel", "Wiederherstellungscodes erstellen", "Sitzungen in Anwendungen", "Keine Warnungen in den letzten 90 Tagen."]) {
      expect(html).toContain(text);
    }
    expect(html).not.toContain("Sign-in methods");
  });

  it("French sections", async () => {
    const html = await portalHtml(jar, "fr");
    for (const text of ["Vous avez récemment confirmé votre identité", "Ajouter une application d’authentification", "Méthodes de connexion", "Clés de sécurité", "Créer des codes de récupération", "Aucune alerte au cours des 90 derniers jours."]) {
      expect(html).toContain(text);
    }
  });

  it("English as before", async () => {
    const html = await portalHtml(jar, "en");
    for (const text of ["You recently confirmed it&#x27;s you", "Add an authenticator app", "Sign-in methods", "Security keys", "Create recovery codes", "Application sessions", "No alerts in the last 90 days."]) {
      expect(html).toContain(text);
    }
  });

  it("a wrong password's form message, in German", async () => {
    const ctx = await workspaceContext(h, ws);
    const portal = (await livePortalSession(ctx, jar.header()))!;
    const res = await call(h, `/t/${ws}/account/verify/password`, {
      form: { csrf: portalCsrf(ctx, portal), password: "not it" },
      cookie: jar.header(),
      headers: { origin: PUBLIC_URL, "accept-language": "de" },
    });
    const error = new URL(res.headers.get("location")!, PUBLIC_URL).searchParams.get("error");
    expect(error).toBe("portal_verification_failed");
    expect(portalFormMessage(error, "de")).toBe("Das hat nicht funktioniert. Prüfen Sie Ihre Eingabe und versuchen Sie es noch einmal.");
    expect(portalFormMessage(error)).toBe("That did not work. Check it and try again.");
  });

  it("a new authenticator app is named in the browser's language", async () => {
    const ctx = await workspaceContext(h, ws);
    const portal = (await livePortalSession(ctx, jar.header()))!;
    const res = await call(h, `/t/${ws}/account/authenticator-app/start`, {
      form: { csrf: portalCsrf(ctx, portal) },
      cookie: jar.header(),
      headers: { origin: PUBLIC_URL, "accept-language": "de-CH, de;q=0.9" },
    });
    expect(res.status).toBe(303);
    const userId = await userIdOf(h, ws, USER.email);
    const rows = await h.service.db.select({ name: totpFactors.name }).from(totpFactors).where(and(eq(totpFactors.workspaceId, ws), eq(totpFactors.userId, userId)));
    expect(rows.map((r) => r.name)).toEqual(["Authenticator-App"]);
  });

  it("its hosted error pages follow Accept-Language", async () => {
    const res = await call(h, `/t/${ws}/auth/account?client_id=spa`, { headers: { "accept-language": "fr-FR,fr;q=0.9" } });
    const body = await res.text();
    expect(res.status).toBe(404);
    expect(body).toContain("<h1>Non disponible</h1>");
    expect(body).toContain("Les paramètres de sécurité du compte ne sont pas disponibles pour cette application.");
    expect(body).toContain("Retournez à l’application d’où vous venez.");
  });
});
