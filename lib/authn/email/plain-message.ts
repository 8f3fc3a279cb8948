import { escapeHtml } from "../../hosted/html";
import type { MailMessage } from "./outbox";

/** A plain message (paragraphs), as text and HTML. */
export function plainMessage(to: string, subject: string, paragraphs: string[]): MailMessage {
  return {
    to,
    subject,
    text: paragraphs.join("\n\n") + "\n",
    html:
      `<!doctype html><html lang="en"><body style="font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#0f172a">` +
      paragraphs.map((line) => `<p style="margin:0 0 16px">${escapeHtml(line)}</p>`).join("") +
      `</body></html>`,
  };
}
