/**
 * The security alerts' messages: what happened, when (UTC, written for the account's language),
 * from where (the client address; the browser when the event knows it), and what to do if it was
 * not the user (the account-security portal's link). Plain text and HTML of the same words.
 */
import { translator, type Translate } from "../i18n/translate";
import type { Locale } from "../i18n/locales";
import type { MailMessage } from "../authn/email/outbox";
import type { AlertEventType } from "./policy";

export interface AlertFacts {
  type: AlertEventType;
  data: Record<string, unknown>;
  at: Date;
  /** The client address the event recorded. */
  ip: string | null;
  /** The approximate place of `ip`, where the installation looks one up (./place.ts). */
  place?: string | null;
  to: string;
  locale: Locale;
  workspaceName: string;
  /** The application a token-reuse alert names, when it still exists. */
  applicationName: string | null;
  /** The portal's direct link, or null when no application of the workspace offers the portal. */
  portalUrl: string | null;
}

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** "29 November 2026 at 15:47 UTC", in the account's language. */
export function alertTime(at: Date, locale: Locale): string {
  return `${new Intl.DateTimeFormat(locale, { dateStyle: "long", timeStyle: "short", timeZone: "UTC" }).format(at)} UTC`;
}

const FACTOR_KEYS = {
  passkey: "email.alert.factor.passkey",
  security_key: "email.alert.factor.security_key",
  totp: "email.alert.factor.totp",
  recovery_code: "email.alert.factor.recovery_code",
  recovery_codes: "email.alert.factor.recovery_code",
} as const;

function factorName(t: Translate, kind: unknown): string {
  const key = typeof kind === "string" && Object.hasOwn(FACTOR_KEYS, kind) ? FACTOR_KEYS[kind as keyof typeof FACTOR_KEYS] : "email.alert.factor.other";
  return t(key);
}

/** The subject and what happened, and whether an administrator did it (the advice differs). */
function whatHappened(t: Translate, f: AlertFacts): { subject: string; body: string; byAdministrator: boolean } {
  const workspace = f.workspaceName;
  switch (f.type) {
    case "password.changed":
      return { subject: t("email.alert.newPassword.subject", { workspace }), body: t(f.data.via === "breached" ? "email.alert.newPassword.breached" : "email.alert.newPassword.reset", { workspace }), byAdministrator: false };
    case "console.user.password_set":
      return { subject: t("email.alert.newPassword.subject", { workspace }), body: t("email.alert.newPassword.admin", { workspace }), byAdministrator: true };
    case "account_security.credential_added":
      return { subject: t("email.alert.factorAdded.subject", { workspace }), body: t("email.alert.factorAdded.body", { workspace, factor: factorName(t, f.data.kind) }), byAdministrator: false };
    case "account_security.credential_removed":
      return { subject: t("email.alert.factorRemoved.subject", { workspace }), body: t("email.alert.factorRemoved.body", { workspace, factor: factorName(t, f.data.kind) }), byAdministrator: false };
    case "console.user.factor_removed":
      return { subject: t("email.alert.factorRemoved.subject", { workspace }), body: t("email.alert.factorRemoved.admin", { workspace, factor: factorName(t, f.data.kind).toLowerCase() }), byAdministrator: true };
    case "account_security.recovery_codes_generated":
      return { subject: t("email.alert.recoveryCodes.subject", { workspace }), body: t("email.alert.recoveryCodes.body", { workspace }), byAdministrator: false };
    case "sign_in.succeeded":
      return { subject: t("email.alert.newBrowser.subject", { workspace }), body: t("email.alert.newBrowser.body", { workspace }), byAdministrator: false };
    case "refresh.reuse_detected":
      return {
        subject: t("email.alert.tokenReuse.subject", { workspace }),
        body: t("email.alert.tokenReuse.body", { application: f.applicationName ?? t("email.alert.anApplication") }),
        byAdministrator: false,
      };
  }
}

export function alertMessage(f: AlertFacts): MailMessage {
  const t = translator(f.locale);
  const { subject, body, byAdministrator } = whatHappened(t, f);
  const browser = typeof f.data.browser === "string" && f.data.browser ? f.data.browser : null;
  const details = [
    t("email.alert.when", { time: alertTime(f.at, f.locale) }),
    f.ip ? (f.place ? t("email.alert.fromPlace", { address: f.ip, place: f.place }) : t("email.alert.from", { address: f.ip })) : t("email.alert.fromUnknown"),
    ...(browser ? [t("email.alert.browser", { browser })] : []),
  ];
  const link = f.portalUrl;
  // Without an application that offers the portal, there is no link to give.
  const advice = byAdministrator
    ? link ? t("email.alert.ifNotExpected", { link }) : t("email.alert.ifNotExpectedNoPortal")
    : link ? t("email.alert.ifNotYou", { link }) : t("email.alert.ifNotYouNoPortal");
  const closing = [...(byAdministrator ? [] : [t("email.alert.ifYou")]), advice, t("email.alert.why", { workspace: f.workspaceName })];
  const text = [body, details.join("\n"), ...closing].join("\n\n") + "\n";
  const p = (line: string) => `<p style="margin:0 0 16px">${line}</p>`;
  // The link, once, as an anchor in the HTML part.
  const withLink = (line: string) => (f.portalUrl ? escapeHtml(line).replace(escapeHtml(f.portalUrl), `<a href="${escapeHtml(f.portalUrl)}">${escapeHtml(f.portalUrl)}</a>`) : escapeHtml(line));
  const html =
    `<!doctype html><html lang="${f.locale}"><body style="font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#0f172a">` +
    p(escapeHtml(body)) +
    p(details.map(escapeHtml).join("<br>")) +
    closing.map((line) => p(withLink(line))).join("") +
    `</body></html>`;
  return { to: f.to, subject, text, html };
}
