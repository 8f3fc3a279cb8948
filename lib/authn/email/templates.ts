/**
 * The messages Latchkey sends: plain text and HTML of the same words, in the recipient's language
 * (the catalogue in lib/i18n). A code is also the first word of the subject, so a phone's
 * notification shows it without opening the message.
 */
import type { MailMessage } from "./outbox";
import type { Locale } from "../../i18n/locales";
import { currentLocale } from "../../i18n/request-locale";
import { translator } from "../../i18n/translate";

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

interface Parts {
  to: string;
  subject: string;
  /** Paragraphs before the code (or the only ones, without a code). */
  intro: string[];
  code?: string;
  outro: string[];
}

function render({ to, subject, intro, code, outro }: Parts, locale: Locale): MailMessage {
  const text = [...intro, ...(code ? [code] : []), ...outro].join("\n\n") + "\n";
  const p = (line: string) => `<p style="margin:0 0 16px">${escapeHtml(line)}</p>`;
  const codeBlock = code
    ? `<p style="margin:0 0 16px;font-size:28px;font-weight:700;letter-spacing:6px;font-family:ui-monospace,Menlo,Consolas,monospace">${escapeHtml(code)}</p>`
    : "";
  const html =
    `<!doctype html><html lang="${locale}"><body style="font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#0f172a">` +
    intro.map(p).join("") +
    codeBlock +
    outro.map(p).join("") +
    `</body></html>`;
  return { to, subject, text, html };
}

/** The recipient's language: by default the request's that sends the message (lib/i18n/request-locale.ts). */
type In = { locale?: Locale };

/** A sign-in code. */
export function signInCodeMessage(p: { to: string; workspaceName: string; code: string; minutes: number } & In): MailMessage {
  const locale = p.locale ?? currentLocale();
  const t = translator(locale);
  const v = { code: p.code, workspace: p.workspaceName, minutes: p.minutes };
  return render({
    to: p.to,
    subject: t("email.signIn.subject", v),
    intro: [t("email.signIn.intro", v)],
    code: p.code,
    outro: [t("email.signIn.outro", v), t("email.ignore")],
  }, locale);
}

/** A code to confirm the address of a new account. */
export function signUpCodeMessage(p: { to: string; workspaceName: string; code: string; minutes: number } & In): MailMessage {
  const locale = p.locale ?? currentLocale();
  const t = translator(locale);
  const v = { code: p.code, workspace: p.workspaceName, minutes: p.minutes };
  return render({
    to: p.to,
    subject: t("email.signUp.subject", v),
    intro: [t("email.signUp.intro", v)],
    code: p.code,
    outro: [t("email.expires", v), t("email.ignore")],
  }, locale);
}

/**
 * Someone asked to create an account with an address that already has one. The page does not say
 * so (it would tell anyone which addresses are registered); the owner learns it here, with a
 * sign-in code when the application accepts one, so they can still get in.
 */
export function accountExistsMessage(p: { to: string; workspaceName: string; code: string | null; minutes: number } & In): MailMessage {
  const locale = p.locale ?? currentLocale();
  const t = translator(locale);
  const v = { workspace: p.workspaceName, minutes: p.minutes };
  if (p.code) {
    return render({
      to: p.to,
      subject: t("email.signIn.subject", { ...v, code: p.code }),
      intro: [t("email.exists.codeIntro", v)],
      code: p.code,
      outro: [t("email.expires", v), t("email.ignore")],
    }, locale);
  }
  return render({
    to: p.to,
    subject: t("email.exists.subject", v),
    intro: [t("email.exists.intro", v), t("email.exists.goBack")],
    outro: [t("email.ignore")],
  }, locale);
}

/** A code to reset a forgotten password (lib/sign-in/steps/password-reset.ts). */
export function passwordResetCodeMessage(p: { to: string; workspaceName: string; code: string; minutes: number } & In): MailMessage {
  const locale = p.locale ?? currentLocale();
  const t = translator(locale);
  const v = { code: p.code, workspace: p.workspaceName, minutes: p.minutes };
  return render({
    to: p.to,
    subject: t("email.reset.subject", v),
    intro: [t("email.reset.intro", v)],
    code: p.code,
    outro: [t("email.expires", v), t("email.reset.ignore")],
  }, locale);
}

/**
 * A reset asked for an account without a password: how it signs in instead (its passkeys, the
 * providers it is linked to, its organization's single sign-on), and no code.
 */
export function passwordResetNoPasswordMessage(p: { to: string; workspaceName: string; passkey: boolean; providers: readonly string[]; sso: boolean } & In): MailMessage {
  const locale = p.locale ?? currentLocale();
  const t = translator(locale);
  const v = { workspace: p.workspaceName };
  const ways = [
    ...(p.passkey ? [t("email.reset.way.passkey")] : []),
    ...p.providers.map((provider) => t("email.reset.way.provider", { provider })),
    ...(p.sso ? [t("email.reset.way.sso")] : []),
  ];
  return render({
    to: p.to,
    subject: t("email.reset.noPassword.subject", v),
    intro: [t("email.reset.noPassword.intro", v), ways.length > 0 ? t("email.reset.noPassword.ways", { ways: ways.join(", ") }) : t("email.reset.noPassword.other")],
    outro: [t("email.reset.ignore")],
  }, locale);
}
