/**
 * Sending email: over SMTP with nodemailer when SMTP_URL is set (smtps:// is TLS from the first
 * byte; smtp:// upgrades with STARTTLS whenever the server offers it), otherwise into the
 * development outbox (kept encrypted, listed in the console; printed to stdout unless
 * NODE_ENV=production, or as MAIL_OUTBOX_PRINT says). In
 * production (an https PUBLIC_URL) without SMTP_URL, email is unavailable: the sign-in does not
 * offer email codes rather than promise messages nobody delivers.
 *
 * Delivery runs after the answer is sent: a page that sends a code to a registered address and a
 * page that sends nothing to an unknown one take the same time. Failures are logged, never thrown
 * at the user.
 */
import nodemailer, { type Transporter } from "nodemailer";
import { defaultSender, mailSettings, type Config, type MailSettings } from "../../config";
import type { EndpointContext } from "../../http/context";
import { storeInOutbox, type MailMessage } from "./outbox";

type Ctx = Pick<EndpointContext, "service" | "workspace"> & Partial<Pick<EndpointContext, "hostname">>;

interface MailState {
  transporters: Map<string, Transporter>;
  inFlight: Set<Promise<void>>;
}

// Process-wide: the custom server and Next's route bundles each load their own copy of this module.
const KEY = Symbol.for("latchkey.mail");
const state = ((globalThis as Record<symbol, unknown>)[KEY] ??= { transporters: new Map(), inFlight: new Set() }) as MailState;

/** Whether this server can send email (SMTP, or the development outbox). */
export function emailAvailable(config: Pick<Config, "mail" | "publicUrl">): boolean {
  return mailSettings(config).transport !== "unavailable";
}

function transporterFor(smtpUrl: string): Transporter {
  let transporter = state.transporters.get(smtpUrl);
  if (!transporter) {
    // nodemailer reads the URL: smtps:// sets `secure` (implicit TLS); smtp:// uses STARTTLS when
    // the server advertises it (add ?requireTLS=true to refuse a server that does not).
    transporter = nodemailer.createTransport(smtpUrl);
    state.transporters.set(smtpUrl, transporter);
  }
  return transporter;
}

/** The recipient's domain only: addresses are personal data and do not belong in logs. */
const domainOf = (address: string) => address.slice(address.lastIndexOf("@") + 1);

/**
 * Who a message is from: MAIL_FROM when set; otherwise no-reply at the hostname the flow started
 * at (a workspace hostname, lib/hostnames), or at PUBLIC_URL's host.
 */
export function senderFor(settings: MailSettings, hostname: string | null | undefined): string {
  return settings.fromIsDefault && hostname ? defaultSender(hostname) : settings.from;
}

/** Sends `message` now, throwing when it was not (a sender that retries: lib/security-alerts); a request sends with `sendMail`. */
export async function deliver(ctx: Ctx, message: MailMessage): Promise<void> {
  const settings = mailSettings(ctx.service.config);
  if (settings.transport === "smtp") {
    await transporterFor(settings.smtpUrl).sendMail({ from: senderFor(settings, ctx.hostname), to: message.to, subject: message.subject, text: message.text, html: message.html });
    return;
  }
  if (settings.transport === "outbox") {
    await storeInOutbox(ctx, message);
    // A sign-in code is the subject's first word: printed only where that is wanted (MAIL_OUTBOX_PRINT).
    if (settings.print !== false) console.log(`[latchkey] development outbox (${ctx.workspace.id}) to ${message.to}: ${message.subject}`);
    return;
  }
  throw new Error("email is unavailable (no SMTP_URL)");
}

/** Sends `message` after the current request: never throws, never waits for the mail server. */
export function sendMail(ctx: Ctx, message: MailMessage): void {
  const job: Promise<void> = deliver(ctx, message)
    .catch((error: unknown) => {
      console.error(`[latchkey] email to a recipient at ${domainOf(message.to)} was not sent: ${error instanceof Error ? error.message : String(error)}`);
    })
    .finally(() => state.inFlight.delete(job));
  state.inFlight.add(job);
}

/** Waits for every message being sent (tests, shutdown). */
export async function mailSettled(): Promise<void> {
  while (state.inFlight.size > 0) await Promise.all([...state.inFlight]);
}

/** The startup banner's line about email. */
export function mailStartupLine(config: Pick<Config, "mail" | "publicUrl">): string {
  const settings = mailSettings(config);
  if (settings.transport === "smtp") {
    const url = new URL(settings.smtpUrl);
    const tls = url.protocol === "smtps:" ? "TLS" : "STARTTLS when offered";
    return `Email:           SMTP ${url.hostname}${url.port ? `:${url.port}` : ""} (${tls}), from ${settings.from}`;
  }
  if (settings.transport === "outbox") {
    return settings.print !== false
      ? "Email:           development outbox (no SMTP_URL): messages, sign-in codes and invitation links included, are printed here and listed in the console"
      : "Email:           development outbox (no SMTP_URL): messages are listed in the console's Outbox, not printed here (MAIL_OUTBOX_PRINT=true prints them)";
  }
  return "Email:           unavailable: PUBLIC_URL is https and SMTP_URL is not set, so email codes and sign-up are off";
}
