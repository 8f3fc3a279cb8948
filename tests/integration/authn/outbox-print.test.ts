/**
 * The development outbox and stdout (lib/authn/email/transport.ts, MAIL_OUTBOX_PRINT in
 * lib/config.ts): every message is kept in the outbox, and its recipient and subject (a sign-in
 * code is the subject's first word) are printed only outside NODE_ENV=production, as `npm run dev`
 * runs, or when MAIL_OUTBOX_PRINT=true asks for it. The start-up banner's Email: line says which.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ConfigError, loadConfig, parseMailSettings } from "../../../lib/config";
import { mailStartupLine } from "../../../lib/authn/email/transport";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, SPA, standardWorkspace } from "../../helpers/fixtures";
import { outcome, startSignIn } from "../../helpers/factors/sign-in";
import { latestCode, outboxFor, requestSignInCode } from "../../helpers/factors/email";

const DEV_URL = "http://localhost:3000";
let h: Harness;
const ws = uniqueWorkspaceId("outbox-print");

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

afterEach(() => vi.restoreAllMocks());

/** Sends a sign-in code to ADA under `env`'s mail settings; returns the code and what went to stdout. */
async function sendUnder(env: Record<string, string>): Promise<{ code: string; printed: string[] }> {
  h.service.config.mail = parseMailSettings(env, DEV_URL);
  // A fresh limiter window for each send.
  h.clock.advance(60 * 60 * 1000);
  const printed: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void printed.push(args.map(String).join(" ")));
  const s = await startSignIn(h, ws, SPA);
  expect(outcome(await requestSignInCode(h, s, ADA.email))).toEqual({ to: "page", error: null });
  const code = await latestCode(h, ws, ADA.email);
  vi.restoreAllMocks();
  expect(code).toMatch(/^\d{6}$/);
  return { code: code!, printed };
}

describe("the development outbox under NODE_ENV=production (npm start)", () => {
  it("prints no code, and keeps the message in the outbox", async () => {
    const before = (await outboxFor(h, ws, ADA.email)).length;
    const { code, printed } = await sendUnder({ NODE_ENV: "production" });
    expect(printed.filter((line) => line.includes(code) || line.includes("development outbox"))).toEqual([]);
    const after = await outboxFor(h, ws, ADA.email);
    expect(after.length).toBe(before + 1);
    expect(after[0]!.subject).toContain(code);
  });

  it("prints with MAIL_OUTBOX_PRINT=true", async () => {
    const { code, printed } = await sendUnder({ NODE_ENV: "production", MAIL_OUTBOX_PRINT: "true" });
    expect(printed).toEqual([expect.stringMatching(new RegExp(`^\\[latchkey\\] development outbox \\(${ws}\\) to ${ADA.email}: ${code} `))]);
  });

  it("prints by default outside production, and not with MAIL_OUTBOX_PRINT=false", async () => {
    const dev = await sendUnder({ NODE_ENV: "development" });
    expect(dev.printed.some((line) => line.includes(dev.code))).toBe(true);
    const off = await sendUnder({ NODE_ENV: "development", MAIL_OUTBOX_PRINT: "false" });
    expect(off.printed.filter((line) => line.includes(off.code))).toEqual([]);
  });
});

describe("MAIL_OUTBOX_PRINT and the start-up line", () => {
  const base = { DATA_DIR: "/tmp/latchkey-outbox-print-config", MASTER_KEY: "b".repeat(64) };

  it("says in one line whether codes and links are printed", () => {
    const quiet = mailStartupLine(loadConfig({ ...base, NODE_ENV: "production" }));
    expect(quiet).toBe("Email:           development outbox (no SMTP_URL): messages are listed in the console's Outbox, not printed here (MAIL_OUTBOX_PRINT=true prints them)");
    const loud = mailStartupLine(loadConfig({ ...base, NODE_ENV: "production", MAIL_OUTBOX_PRINT: "true" }));
    expect(loud).toBe("Email:           development outbox (no SMTP_URL): messages, sign-in codes and invitation links included, are printed here and listed in the console");
    expect(mailStartupLine(loadConfig({ ...base, NODE_ENV: "development" }))).toBe(loud);
    for (const line of [quiet, loud]) expect(line).not.toContain("\n");
  });

  it("is true or false, and anything else stops the start", () => {
    expect(() => loadConfig({ ...base, MAIL_OUTBOX_PRINT: "yes" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, MAIL_OUTBOX_PRINT: "yes" })).toThrow(/^MAIL_OUTBOX_PRINT must be true or false \(got "yes"\)$/);
    expect(loadConfig({ ...base, NODE_ENV: "production", MAIL_OUTBOX_PRINT: "1" }).mail).toMatchObject({ transport: "outbox", print: true });
    expect(loadConfig({ ...base, MAIL_OUTBOX_PRINT: "0" }).mail).toMatchObject({ transport: "outbox", print: false });
  });
});
