/**
 * Email over SMTP (lib/authn/email/transport.ts): a real SMTP server in this process receives the
 * sign-in code; smtp:// upgrades with STARTTLS when the server offers it; a mail server that is
 * away does not change what the page answers (the failure is logged, the outbox is not used).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { and, eq } from "drizzle-orm";
import { mailOutbox } from "../../../db/schema";
import { mailSettled } from "../../../lib/authn/email/transport";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, BOB, SPA, standardWorkspace } from "../../helpers/fixtures";
import { addHostname, applyHostnameVerification, hostnameTxtRecord } from "../../../lib/hostnames/hostnames";
import { forgetHostnames } from "../../../lib/hostnames/directory";
import { outcome, startSignIn } from "../../helpers/factors/sign-in";
import { enterSignInCode, requestSignInCode } from "../../helpers/factors/email";
import { codeOf, SmtpInbox } from "../../../e2e/smtp-inbox";

const FROM = "Example Sign-in <no-reply@example.test>";
const plain = new SmtpInbox();
const starttls = new SmtpInbox({ starttls: true });
let h: Harness;
let tlsH: Harness;
let downH: Harness;
// One workspace per harness: on PostgreSQL the harnesses share a database (and so the resend cooldown).
const ws = uniqueWorkspaceId("email-smtp");
const tlsWs = uniqueWorkspaceId("email-smtp-tls");
const downWs = uniqueWorkspaceId("email-smtp-down");

beforeAll(async () => {
  await Promise.all([plain.listen(0), starttls.listen(0)]);
  h = await createHarness({ mail: { transport: "smtp", smtpUrl: `smtp://127.0.0.1:${plain.port}`, from: FROM } });
  // The test server's certificate is self-signed: the URL's tls.* options reach nodemailer.
  tlsH = await createHarness({ mail: { transport: "smtp", smtpUrl: `smtp://127.0.0.1:${starttls.port}?tls.rejectUnauthorized=false`, from: FROM } });
  downH = await createHarness({ mail: { transport: "smtp", smtpUrl: "smtp://127.0.0.1:9", from: FROM } });
  await seed(h, standardWorkspace(ws));
  await seed(tlsH, standardWorkspace(tlsWs));
  await seed(downH, standardWorkspace(downWs));
});

afterAll(async () => {
  await Promise.all([plain.close(), starttls.close()]);
});

describe("SMTP", () => {
  it("delivers the sign-in code: From is MAIL_FROM, the subject starts with the code, text and HTML carry it; the code signs in", async () => {
    const s = await startSignIn(h, ws, SPA);
    expect(outcome(await requestSignInCode(h, s, ADA.email))).toEqual({ to: "page", error: null });
    const mail = await plain.waitFor(ADA.email);
    const code = codeOf(mail);
    expect(mail.from).toBe(`"Example Sign-in" <no-reply@example.test>`);
    expect(mail.subject).toBe(`${code} is your sign-in code for Workspace ${ws}`);
    expect(mail.text).toContain(code);
    expect(mail.html).toContain(code);
    expect(mail.secure).toBe(false);
    expect(outcome(await enterSignInCode(h, s, code)).to).toBe("callback");
    // Not kept in the development outbox.
    await mailSettled();
    expect(await h.service.db.select().from(mailOutbox).where(and(eq(mailOutbox.workspaceId, ws)))).toHaveLength(0);
  });

  it("at a workspace hostname the default sender is no-reply there; MAIL_FROM, when set, is kept", async () => {
    const hostname = `login.${ws}.test`;
    const claim = await addHostname(h.service.db, { workspaceId: ws, hostname, now: h.clock.now() });
    await applyHostnameVerification(h.service.db, { workspaceId: ws, id: claim.id, now: h.clock.now(), lookup: { ok: true, records: [hostnameTxtRecord(claim).value] } });
    forgetHostnames(h.service);
    const defaultFrom = { ...h, service: { ...h.service, config: { ...h.service.config, mail: { transport: "smtp" as const, smtpUrl: `smtp://127.0.0.1:${plain.port}`, from: "Latchkey <no-reply@auth.example.test>", fromIsDefault: true } } } };
    for (const [harness, expected] of [
      [defaultFrom, `"Latchkey" <no-reply@${hostname}>`],
      [h, `"Example Sign-in" <no-reply@example.test>`],
    ] as const) {
      const s = await startSignIn(harness, ws, SPA, undefined, hostname);
      expect(outcome(await requestSignInCode(harness, s, BOB.email))).toEqual({ to: "page", error: null });
      expect((await plain.waitFor(BOB.email)).from).toBe(expected);
      plain.messages.length = 0;
      harness.clock.advance(2 * 60_000);
    }
  });

  it("smtp:// upgrades with STARTTLS when the server offers it", async () => {
    const s = await startSignIn(tlsH, tlsWs, SPA);
    await requestSignInCode(tlsH, s, ADA.email);
    const mail = await starttls.waitFor(ADA.email);
    expect(mail.secure).toBe(true);
  });

  it("a mail server that is away: the page answers as always, the failure is logged without the address", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const s = await startSignIn(downH, downWs, SPA);
      expect(outcome(await requestSignInCode(downH, s, ADA.email))).toEqual({ to: "page", error: null });
      await mailSettled();
      const logged = errors.mock.calls.map((c) => String(c[0]));
      expect(logged.some((line) => line.includes("was not sent") && line.includes("example.test"))).toBe(true);
      expect(logged.some((line) => line.includes(ADA.email))).toBe(false);
    } finally {
      errors.mockRestore();
    }
  });
});
