/**
 * Guessing limits on email codes (EMAIL_CODE_GUESSING, lib/authn/factors/email-code/email-code.ts): wrong
 * codes per address and client address (RATE_LIMIT_FAILURES per 5 minutes), and per address from
 * every client address (three times that per hour), which only a browser that passed an email code
 * (or a stronger factor) for the account passes. A limited attempt is not checked and answers like
 * a wrong code.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { hostedSessions, users } from "../../../db/schema";
import { EMAIL_CODE_GUESSING, EMAIL_CODE_SENDING, RESEND_COOLDOWN_MS, SEND_WINDOW_MS, SENDS_PER_ADDRESS } from "../../../lib/authn/factors/email-code";
import { limitOf } from "../../../lib/limits/declarations";
import { CLIENT_ADDRESS_HEADER } from "../../../lib/http/client-address";
import { call, createHarness, Jar, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, SPA, standardWorkspace } from "../../helpers/fixtures";
import { outcome, startSignIn, viewOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { enterSignInCode, latestCode, OUTBOX, requestSignInCode, signInWithEmailCode } from "../../helpers/factors/email";

const PER_ADDRESS = 2;
let h: Harness;
const ws = uniqueWorkspaceId("email-guess");
const ACCOUNT_WINDOW_MS = EMAIL_CODE_GUESSING.perAccount!.windowMs;

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX, rateLimits: { requestsPerMinute: 100_000, failuresPer5Minutes: PER_ADDRESS } });
  await seed(h, standardWorkspace(ws));
});

// Each test starts at the start of a fresh hour: every window (5 minutes, 15, 60) is new.
beforeEach(() => {
  h.clock.current = (Math.floor(h.clock.current / ACCOUNT_WINDOW_MS) + 1) * ACCOUNT_WINDOW_MS;
});

const from = (ip: string) => ({ [CLIENT_ADDRESS_HEADER]: ip });
const adaId = async () =>
  (await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, ADA.email))))[0]!.id;
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

/** A sign-in with a fresh code for Ada, asked from `ip`. */
async function withCode(ip: string, jar = new Jar()): Promise<{ s: PendingSignIn; code: string }> {
  h.clock.advance(RESEND_COOLDOWN_MS);
  const s = await startSignIn(h, ws, SPA, jar);
  expect(outcome(await requestSignInCode(h, s, ADA.email, from(ip)))).toEqual({ to: "page", error: null });
  return { s, code: (await latestCode(h, ws, ADA.email))! };
}

describe("guessing email codes", () => {
  it("per address and client address: once reached, even the right code answers like a wrong one, until the window ends", async () => {
    const { s, code } = await withCode("10.1.0.1");
    for (let i = 0; i < PER_ADDRESS; i++) expect(outcome(await enterSignInCode(h, s, wrong(code), from("10.1.0.1")))).toEqual({ to: "page", error: "invalid_code" });
    expect(outcome(await enterSignInCode(h, s, code, from("10.1.0.1")))).toEqual({ to: "page", error: "invalid_code" });
    // Another client address is not limited by this one's failures.
    expect(outcome(await enterSignInCode(h, s, code, from("10.1.0.2"))).to).toBe("callback");
  });

  it("the limited attempt does not count against the code: after 5 minutes the right code works", async () => {
    const { s, code } = await withCode("10.2.0.1");
    for (let i = 0; i < PER_ADDRESS; i++) await enterSignInCode(h, s, wrong(code), from("10.2.0.1"));
    expect(outcome(await enterSignInCode(h, s, code, from("10.2.0.1")))).toEqual({ to: "page", error: "invalid_code" });
    h.clock.advance(5 * 60_000);
    expect(outcome(await enterSignInCode(h, s, code, from("10.2.0.1"))).to).toBe("callback");
  });

  it("per address from every client address, for an hour; the browser that passed an email code before passes", async () => {
    const accountLimit = limitOf(EMAIL_CODE_GUESSING.perAccount!, { failuresPer5Minutes: PER_ADDRESS, requestsPerMinute: 0 });
    // An owner who signed in with an email code on this browser before (the session has ended since).
    const owner = new Jar();
    await signInWithEmailCode(h, ws, { ...SPA, email: ADA.email }, owner);
    // Another browser that signed in with the password alone.
    const passwordOnly = new Jar();
    await signIn(h, ws, { ...SPA, ...ADA }, passwordOnly);
    const [ada] = await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, ADA.email)));
    await h.service.db.update(hostedSessions).set({ endedAt: h.clock.now(), endReason: "logout" }).where(eq(hostedSessions.userId, ada.id));

    // Guesses spread over client addresses, each under its own limit.
    let failures = 0;
    for (let n = 0; failures < accountLimit; n++) {
      const ip = `10.3.0.${n}`;
      const { s, code } = await withCode(ip);
      for (let i = 0; i < PER_ADDRESS && failures < accountLimit; i++, failures++) await enterSignInCode(h, s, wrong(code), from(ip));
    }
    // A fresh client address with the right code: limited, answered like a wrong code.
    const stranger = await withCode("10.3.1.1");
    expect(outcome(await enterSignInCode(h, stranger.s, stranger.code, from("10.3.1.1")))).toEqual({ to: "page", error: "invalid_code" });

    // A browser whose session of the account passed only the password is not known for email codes
    // (a new sending window, so the code is sent; the guessing ceiling still holds).
    h.clock.advance(SEND_WINDOW_MS);
    const walkAround = await withCode("10.3.1.2", passwordOnly);
    expect(outcome(await enterSignInCode(h, walkAround.s, walkAround.code, from("10.3.1.2")))).toEqual({ to: "page", error: "invalid_code" });

    // The owner's browser is let through.
    const mine = await withCode("10.3.2.1", owner);
    expect(outcome(await enterSignInCode(h, mine.s, mine.code, from("10.3.2.1"))).to).toBe("callback");

    // After the hour, anyone.
    h.clock.advance(ACCOUNT_WINDOW_MS);
    const later = await withCode("10.3.1.1");
    expect(outcome(await enterSignInCode(h, later.s, later.code, from("10.3.1.1"))).to).toBe("callback");
  });

  it("sending: per address from every client address; only a browser that passed an email code before passes", async () => {
    expect(EMAIL_CODE_SENDING.perAccount).toEqual({ times: SENDS_PER_ADDRESS, scale: null, windowMs: SEND_WINDOW_MS });
    const owner = new Jar();
    await signInWithEmailCode(h, ws, { ...SPA, email: ADA.email }, owner);
    const passwordOnly = new Jar();
    await signIn(h, ws, { ...SPA, ...ADA }, passwordOnly);
    await h.service.db.update(hostedSessions).set({ endedAt: h.clock.now(), endReason: "logout" }).where(eq(hostedSessions.userId, await adaId()));
    // The owner's sign-in sent one; strangers at new client addresses send the rest.
    for (let i = 1; i < SENDS_PER_ADDRESS; i++) await withCode(`10.5.0.${i}`);
    const send = async (ip: string, jar = new Jar()) => {
      h.clock.advance(RESEND_COOLDOWN_MS);
      return outcome(await requestSignInCode(h, await startSignIn(h, ws, SPA, jar), ADA.email, from(ip)));
    };
    expect(await send("10.5.1.1")).toEqual({ to: "page", error: "rate_limited" });
    // A session made by the password alone proves nothing about the inbox.
    expect(await send("10.5.1.2", passwordOnly)).toEqual({ to: "page", error: "rate_limited" });
    expect(await send("10.5.1.3", owner)).toEqual({ to: "page", error: null });
  });

  it("counts separately from password guesses", async () => {
    const { s, code } = await withCode("10.4.0.1");
    // Password failures from the same client address for the same account do not limit codes.
    for (let i = 0; i < PER_ADDRESS; i++) {
      const view = await viewOf(h, s);
      await call(h, `/t/${ws}/sign-in/password`, {
        form: { tx: s.tx, csrf: view.csrf, email: ADA.email, password: "wrong password" },
        cookie: s.jar.header(),
        headers: { origin: PUBLIC_URL, ...from("10.4.0.1") },
      });
    }
    expect(outcome(await enterSignInCode(h, s, code, from("10.4.0.1"))).to).toBe("callback");
  });
});
