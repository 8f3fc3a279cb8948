/**
 * The messages Latchkey sends: plain text and HTML of the same words. A code is also the first
 * word of the subject, so a phone's notification shows it without opening the message.
 */
import type { MailMessage } from "./outbox";

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

function render({ to, subject, intro, code, outro }: Parts): MailMessage {
  const text = [...intro, ...(code ? [code] : []), ...outro].join("\n\n") + "\n";
  const p = (line: string) => `<p style="margin:0 0 16px">${escapeHtml(line)}</p>`;
  const codeBlock = code
    ? `<p style="margin:0 0 16px;font-size:28px;font-weight:700;letter-spacing:6px;font-family:ui-monospace,Menlo,Consolas,monospace">${escapeHtml(code)}</p>`
    : "";
  const html =
    `<!doctype html><html><body style="font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#0f172a">` +
    intro.map(p).join("") +
    codeBlock +
    outro.map(p).join("") +
    `</body></html>`;
  return { to, subject, text, html };
}

const IGNORE = "If you did not ask for this, you can ignore this message: nothing happens without the code.";

/** A sign-in code. */
export function signInCodeMessage(p: { to: string; workspaceName: string; code: string; minutes: number }): MailMessage {
  return render({
    to: p.to,
    subject: `${p.code} is your sign-in code for ${p.workspaceName}`,
    intro: [`Enter this code to sign in to ${p.workspaceName}:`],
    code: p.code,
    outro: [`It expires in ${p.minutes} minutes and works once. Never share it: ${p.workspaceName} will not ask you for it by phone or email.`, IGNORE],
  });
}

/** A code to confirm the address of a new account. */
export function signUpCodeMessage(p: { to: string; workspaceName: string; code: string; minutes: number }): MailMessage {
  return render({
    to: p.to,
    subject: `${p.code} is your code to create an account at ${p.workspaceName}`,
    intro: [`Enter this code to confirm your email address and create your account at ${p.workspaceName}:`],
    code: p.code,
    outro: [`It expires in ${p.minutes} minutes and works once. Never share it.`, IGNORE],
  });
}

/**
 * Someone asked to create an account with an address that already has one. The page does not say
 * so (it would tell anyone which addresses are registered); the owner learns it here, with a
 * sign-in code when the application accepts one, so they can still get in.
 */
export function accountExistsMessage(p: { to: string; workspaceName: string; code: string | null; minutes: number }): MailMessage {
  if (p.code) {
    return render({
      to: p.to,
      subject: `${p.code} is your sign-in code for ${p.workspaceName}`,
      intro: [`You asked to create an account at ${p.workspaceName}, but this address already has one. Enter this code to sign in to it instead:`],
      code: p.code,
      outro: [`It expires in ${p.minutes} minutes and works once. Never share it.`, IGNORE],
    });
  }
  return render({
    to: p.to,
    subject: `You already have an account at ${p.workspaceName}`,
    intro: [
      `You asked to create an account at ${p.workspaceName}, but this address already has one.`,
      `Go back and sign in with the method you set up (your password or a passkey).`,
    ],
    outro: [IGNORE],
  });
}
