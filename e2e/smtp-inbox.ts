/**
 * A real SMTP server in the test process (smtp-server), keeping every message it receives parsed
 * (mailparser): the e2e Latchkey server sends to it through SMTP_URL (playwright.config.ts).
 */
import { SMTPServer } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  /** Whether the session was TLS (STARTTLS) when the message came. */
  secure: boolean;
}

export class SmtpInbox {
  private server: SMTPServer;
  readonly messages: ReceivedMail[] = [];
  private waiters: (() => void)[] = [];

  constructor(options: { starttls?: boolean } = {}) {
    this.server = new SMTPServer({
      authOptional: true,
      // Without STARTTLS the client sends in the clear (a local test server, no certificate).
      disabledCommands: options.starttls ? [] : ["STARTTLS"],
      logger: false,
      onData: (stream, session, callback) => {
        simpleParser(stream)
          .then((mail: ParsedMail) => {
            this.messages.push({
              to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
              from: mail.from?.text ?? "",
              subject: mail.subject ?? "",
              text: mail.text ?? "",
              html: typeof mail.html === "string" ? mail.html : "",
              secure: session.secure,
            });
            for (const wake of this.waiters.splice(0)) wake();
            callback();
          })
          .catch(callback);
      },
    });
  }

  listen(port: number, host = "127.0.0.1"): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => resolve());
    });
  }

  /** The port it listens on (after `listen`). */
  get port(): number {
    const address = this.server.server.address();
    return typeof address === "object" && address ? address.port : 0;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /**
   * The first message to `address` received after `since` messages (default: any) that `match`
   * accepts (default: any), waiting up to `timeoutMs`.
   */
  async waitFor(address: string, options: { since?: number; timeoutMs?: number; match?: (mail: ReceivedMail) => boolean } = {}): Promise<ReceivedMail> {
    const deadline = Date.now() + (options.timeoutMs ?? 10_000);
    const target = address.toLowerCase();
    for (;;) {
      const found = this.messages.slice(options.since ?? 0).find((m) => m.to.includes(target) && (options.match?.(m) ?? true));
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no message to ${address} within ${options.timeoutMs ?? 10_000} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

/** The 6-digit code a message's subject starts with. */
export function codeOf(mail: ReceivedMail): string {
  const match = /^(\d{6}) /.exec(mail.subject);
  if (!match) throw new Error(`no code in "${mail.subject}"`);
  return match[1];
}
