/**
 * Email one-time codes (lib/authn/factors/email-code/email-code.ts, lib/sign-in/steps/email.ts): the
 * sign-in by code and every rule of the code: 6 digits, 10 minutes, 5 attempts, hashed at rest,
 * bound to the sign-in and the address, the resend cooldown, the send limits, the outbox, and
 * pages that look the same whether or not an address has an account.
 */
import { createHash } from "node:crypto";
import { beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { decodeJwt } from "jose";
import { and, eq } from "drizzle-orm";
import { clients, factorChallenges, hostedSessions, mailOutbox, users } from "../../../db/schema";
import { readEvidence } from "../../../lib/authn/evidence";
import { EMAIL_CODE_TTL_MS, RESEND_COOLDOWN_MS, SEND_WINDOW_MS, SENDS_PER_ADDRESS, SENDS_PER_CLIENT_ADDRESS } from "../../../lib/authn/factors/email-code";
import { mailSettled } from "../../../lib/authn/email/transport";
import { CLIENT_ADDRESS_HEADER } from "../../../lib/http/client-address";
import { createHarness, exchangeCode, Jar, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, BOB, SPA, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postStep, startSignIn, viewOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { enterSignInCode, latestCode, OUTBOX, outboxFor, requestSignInCode, signInWithEmailCode } from "../../helpers/factors/email";

let h: Harness;
/** The harness's PUBLIC_URL is https: without mail settings this is production without SMTP_URL. */
let prod: Harness;
const ws = uniqueWorkspaceId("email-otp");
const pws = uniqueWorkspaceId("email-prod");
const CAROL = { email: "carol@example.test", password: "carol's long password" };
const UNKNOWN = "nobody@example.test";

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX });
  const doc = standardWorkspace(ws);
  doc.users.push({ email: CAROL.email, password: CAROL.password, email_verified: true, status: "disabled" });
  await seed(h, doc);
  prod = await createHarness();
  await seed(prod, standardWorkspace(pws));
});

// Every test starts at the start of fresh limiter windows (fixed windows of 15 minutes), past every cooldown.
beforeEach(() => {
  h.clock.current = (Math.floor(h.clock.current / SEND_WINDOW_MS) + 1) * SEND_WINDOW_MS;
});

const start = () => startSignIn(h, ws, SPA);

/** Sends a code to `email` in `s` and returns it (null when none was sent). */
async function sendCode(s: PendingSignIn, email: string): Promise<string | null> {
  const before = (await outboxFor(h, ws, email)).length;
  const o = outcome(await requestSignInCode(h, s, email));
  expect(o).toEqual({ to: "page", error: null });
  const after = await outboxFor(h, ws, email);
  return after.length > before ? latestCode(h, ws, email) : null;
}

/** The email codes stored for a sign-in (its WebAuthn challenges left out). */
const emailChallenges = (s: PendingSignIn) =>
  h.service.db
    .select()
    .from(factorChallenges)
    .where(and(eq(factorChallenges.workspaceId, ws), eq(factorChallenges.kind, "email_otp"), eq(factorChallenges.bindingId, s.tx)));

const verify = async (s: PendingSignIn, code: string) => outcome(await enterSignInCode(h, s, code));

/** A code that is not `code` (same length). */
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

describe("sign-in by email code", () => {
  it("signs in with the code from the message: the ID token says amr otp, acr loa:1, and the address is now verified", async () => {
    const [before] = await h.service.db.select().from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, BOB.email)));
    expect(before.emailVerified).toBe(false);
    const r = await signInWithEmailCode(h, ws, { ...SPA, email: BOB.email, scope: "openid email" });
    expect(r.callback).not.toBeNull();
    const res = await exchangeCode(h, ws, { code: r.callback!.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: r.verifier, client_id: SPA.client_id });
    expect(res.status).toBe(200);
    const claims = decodeJwt((await res.json()).id_token);
    expect(claims).toMatchObject({ amr: ["otp"], acr: "urn:latchkey:loa:1", email: BOB.email, email_verified: true });
    const [session] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.id, claims.sid as string));
    expect(readEvidence(session.evidence)).toEqual([{ method: "email_otp", amr: ["otp"], strength: "possession", factorId: null, at: h.clock.now().toISOString() }]);
  });

  it("sends plain text and HTML with the code, the code first in the subject", async () => {
    const s = await start();
    const code = await sendCode(s, ADA.email);
    expect(code).toMatch(/^\d{6}$/);
    const [message] = await outboxFor(h, ws, ADA.email);
    expect(message.subject).toBe(`${code} is your sign-in code for Workspace ${ws}`);
    expect(message.text).toContain(code);
    expect(message.text).toContain("10 minutes");
    expect(message.html).toContain(code);
    expect(message.html).toMatch(/^<!doctype html>/);
  });

  it("is 6 digits from the whole range (leading zeros kept)", async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const s = await start();
      h.clock.advance(RESEND_COOLDOWN_MS);
      codes.add((await sendCode(s, ADA.email))!);
      // Stay under the per-address send limit.
      if (i % SENDS_PER_ADDRESS === SENDS_PER_ADDRESS - 1) h.clock.advance(SEND_WINDOW_MS);
    }
    for (const c of codes) expect(c).toMatch(/^\d{6}$/);
    expect(codes.size).toBeGreaterThan(10);
  });

  it("accepts the code typed with spaces or a dash", async () => {
    const s = await start();
    const code = (await sendCode(s, ADA.email))!;
    expect((await verify(s, `${code.slice(0, 3)} ${code.slice(3)}`)).to).toBe("callback");
  });

  it("is refused where the policy does not accept email codes", async () => {
    await h.service.db.update(clients).set({ authPolicy: { firstFactors: ["password"] } }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, SPA.client_id)));
    h.service.cache.clear();
    try {
      const s = await start();
      expect(outcome(await requestSignInCode(h, s, ADA.email))).toEqual({ to: "page", error: "method_not_allowed" });
      expect(outcome(await enterSignInCode(h, s, "123456"))).toEqual({ to: "page", error: "method_not_allowed" });
    } finally {
      await h.service.db.update(clients).set({ authPolicy: {} }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, SPA.client_id)));
      h.service.cache.clear();
    }
  });

  it("refuses an address that cannot be one", async () => {
    const s = await start();
    for (const email of ["", "not-an-address", "a@b", `${"x".repeat(250)}@example.test`, "ada\u0000@example.test"]) {
      expect(outcome(await requestSignInCode(h, s, email))).toEqual({ to: "page", error: "invalid_email" });
    }
  });

  it("shows the code step, then 'another way' returns to the methods and the code is dead", async () => {
    const s = await start();
    expect((await viewOf(h, s)).email.codeSentTo).toBeNull();
    const code = (await sendCode(s, ADA.email))!;
    expect((await viewOf(h, s)).email).toMatchObject({ available: true, codeSentTo: ADA.email, codeDead: false });
    expect(outcome(await postStep(h, s, "/sign-in/email/cancel"))).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).email.codeSentTo).toBeNull();
    expect(await verify(s, code)).toEqual({ to: "page", error: "code_expired" });
  });
});

describe("the code's rules", () => {
  it("is stored only as a keyed hash: not the code, nor a plain hash of it", async () => {
    const s = await start();
    const code = (await sendCode(s, ADA.email))!;
    const [row] = await emailChallenges(s);
    expect(row).toMatchObject({ kind: "email_otp", purpose: "sign_in", address: ADA.email, attempts: 0, consumedAt: null });
    expect(row.secret).not.toContain(code);
    for (const plain of [createHash("sha256").update(code).digest("hex"), createHash("sha256").update(code).digest("base64url")]) expect(row.secret).not.toBe(plain);
    // The outbox keeps it encrypted too.
    const stored = await h.service.db.select().from(mailOutbox).where(eq(mailOutbox.workspaceId, ws));
    for (const m of stored) for (const field of [m.subject, m.text, m.html]) expect(field).not.toContain(code);
  });

  it("works for 10 minutes, then never", async () => {
    const s1 = await start();
    const c1 = (await sendCode(s1, ADA.email))!;
    h.clock.advance(EMAIL_CODE_TTL_MS - 1000);
    expect((await verify(s1, c1)).to).toBe("callback");

    h.clock.advance(RESEND_COOLDOWN_MS);
    const s2 = await start();
    const c2 = (await sendCode(s2, ADA.email))!;
    h.clock.advance(EMAIL_CODE_TTL_MS);
    // The sign-in itself lives 10 minutes too: keep it open to see the code's own expiry.
    const { authorizationTransactions } = await import("../../../db/schema");
    await h.service.db.update(authorizationTransactions).set({ expiresAt: new Date(h.clock.now().getTime() + 60_000) }).where(eq(authorizationTransactions.id, s2.tx));
    expect(await verify(s2, c2)).toEqual({ to: "page", error: "code_expired" });
    expect((await viewOf(h, s2)).email).toMatchObject({ codeSentTo: ADA.email, codeDead: true });
  });

  it("allows 5 attempts: the fifth wrong one kills it, and then the right code fails too", async () => {
    const s = await start();
    const code = (await sendCode(s, ADA.email))!;
    for (let i = 0; i < 4; i++) expect(await verify(s, wrong(code))).toEqual({ to: "page", error: "invalid_code" });
    expect(await verify(s, wrong(code))).toEqual({ to: "page", error: "code_expired" });
    expect(await verify(s, code)).toEqual({ to: "page", error: "code_expired" });
    expect((await viewOf(h, s)).email.codeDead).toBe(true);
    // A new code works.
    h.clock.advance(RESEND_COOLDOWN_MS);
    const fresh = (await sendCode(s, ADA.email))!;
    expect((await verify(s, fresh)).to).toBe("callback");
  });

  it("does not count what is not a code as an attempt", async () => {
    const s = await start();
    const code = (await sendCode(s, ADA.email))!;
    for (let i = 0; i < 6; i++) expect(await verify(s, "12ab")).toEqual({ to: "page", error: "invalid_code" });
    expect((await verify(s, code)).to).toBe("callback");
  });

  it("is used once", async () => {
    const jar = new Jar();
    const s = await startSignIn(h, ws, SPA, jar);
    const code = (await sendCode(s, ADA.email))!;
    expect((await verify(s, code)).to).toBe("callback");
    // The sign-in is complete: the same browser, a new sign-in, the same code.
    const again = await startSignIn(h, ws, SPA, new Jar());
    expect(await verify(again, code)).toEqual({ to: "page", error: "code_expired" });
    const [row] = await emailChallenges(s);
    expect(row.consumedAt).not.toBeNull();
  });

  it("is bound to its sign-in: another sign-in of the same user cannot use it", async () => {
    const s1 = await start();
    const c1 = (await sendCode(s1, ADA.email))!;
    const s2 = await start();
    expect(await verify(s2, c1)).toEqual({ to: "page", error: "code_expired" });
    h.clock.advance(RESEND_COOLDOWN_MS);
    const c2 = (await sendCode(s2, ADA.email))!;
    if (c2 !== c1) expect(await verify(s2, c1)).toEqual({ to: "page", error: "invalid_code" });
    expect((await verify(s2, c2)).to).toBe("callback");
    // The first sign-in's code still stands on its own.
    expect((await verify(s1, c1)).to).toBe("callback");
  });

  it("is bound to its address: a code for another address in the same sign-in replaces it", async () => {
    const s = await start();
    const forAda = (await sendCode(s, ADA.email))!;
    const forBob = (await sendCode(s, BOB.email))!;
    expect((await viewOf(h, s)).email.codeSentTo).toBe(BOB.email);
    if (forAda !== forBob) expect(await verify(s, forAda)).toEqual({ to: "page", error: "invalid_code" });
    const o = await verify(s, forBob);
    expect(o.to).toBe("callback");
    // ...and it signed in Bob, the address the code was sent to.
    const res = await exchangeCode(h, ws, { code: (o as { url: URL }).url.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: s.verifier, client_id: SPA.client_id });
    expect(decodeJwt((await res.json()).id_token).email).toBe(BOB.email);
  });

  it("does not sign in a user disabled after the code was sent", async () => {
    const s = await start();
    const code = (await sendCode(s, ADA.email))!;
    await h.service.db.update(users).set({ status: "disabled" }).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, ADA.email)));
    try {
      expect(await verify(s, code)).toEqual({ to: "page", error: "code_expired" });
    } finally {
      await h.service.db.update(users).set({ status: "active" }).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, ADA.email)));
    }
  });
});

describe("sending", () => {
  it("waits out the resend cooldown per address; the new code replaces the old", async () => {
    const s = await start();
    const first = (await sendCode(s, ADA.email))!;
    h.clock.advance(RESEND_COOLDOWN_MS - 1000);
    expect(outcome(await requestSignInCode(h, s, ADA.email))).toEqual({ to: "page", error: "code_resend_wait" });
    // Per address, whichever sign-in asks.
    expect(outcome(await requestSignInCode(h, await start(), ADA.email))).toEqual({ to: "page", error: "code_resend_wait" });
    expect((await outboxFor(h, ws, ADA.email))[0].subject.startsWith(first)).toBe(true);
    h.clock.advance(1000);
    const second = (await sendCode(s, ADA.email))!;
    if (second !== first) expect(await verify(s, first)).toEqual({ to: "page", error: "invalid_code" });
    expect((await verify(s, second)).to).toBe("callback");
  });

  it(`sends at most ${SENDS_PER_ADDRESS} codes per address in 15 minutes; then the window ends`, async () => {
    const s = await start();
    for (let i = 0; i < SENDS_PER_ADDRESS; i++) {
      expect(await sendCode(s, ADA.email)).not.toBeNull();
      h.clock.advance(RESEND_COOLDOWN_MS);
    }
    const count = (await outboxFor(h, ws, ADA.email)).length;
    expect(outcome(await requestSignInCode(h, s, ADA.email, { [CLIENT_ADDRESS_HEADER]: "203.0.113.9" }))).toEqual({ to: "page", error: "rate_limited" });
    expect(await outboxFor(h, ws, ADA.email)).toHaveLength(count);
    h.clock.advance(SEND_WINDOW_MS);
    expect(await sendCode(await start(), ADA.email)).not.toBeNull();
  });

  it("lets the owner's own browser (a hosted session of the account that passed an email code) past the per-address limit", async () => {
    // The owner signed in with an email code on this browser before.
    const owner = new Jar();
    await signInWithEmailCode(h, ws, { ...SPA, email: ADA.email }, owner);
    h.clock.advance(SEND_WINDOW_MS);
    const attacker = await start();
    for (let i = 0; i < SENDS_PER_ADDRESS; i++) {
      await requestSignInCode(h, attacker, ADA.email, { [CLIENT_ADDRESS_HEADER]: `198.51.100.${i}` });
      h.clock.advance(RESEND_COOLDOWN_MS);
    }
    expect(outcome(await requestSignInCode(h, attacker, ADA.email))).toEqual({ to: "page", error: "rate_limited" });
    // Signed out since (an ended session still marks the browser); authorize asks for a sign-in again.
    const ada = await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, ADA.email)));
    await h.service.db.update(hostedSessions).set({ endedAt: h.clock.now(), endReason: "logout" }).where(eq(hostedSessions.userId, ada[0].id));
    const s = await startSignIn(h, ws, SPA, owner);
    const code = (await sendCode(s, ADA.email))!;
    expect((await verify(s, code)).to).toBe("callback");
  });

  it(`sends at most ${SENDS_PER_CLIENT_ADDRESS} codes per client address in 15 minutes, whatever the recipients`, async () => {
    const s = await start();
    const from = { [CLIENT_ADDRESS_HEADER]: "192.0.2.77" };
    for (let i = 0; i < SENDS_PER_CLIENT_ADDRESS; i++) {
      expect(outcome(await requestSignInCode(h, s, `someone-${i}@example.test`, from))).toEqual({ to: "page", error: null });
    }
    expect(outcome(await requestSignInCode(h, s, ADA.email, from))).toEqual({ to: "page", error: "rate_limited" });
    // Another client address is not held back.
    expect(outcome(await requestSignInCode(h, s, ADA.email, { [CLIENT_ADDRESS_HEADER]: "192.0.2.78" }))).toEqual({ to: "page", error: null });
  });

  it("puts every message in the development outbox, encrypted, never dropped", async () => {
    const s = await start();
    // The row count is read from the table itself: wait for messages an earlier test left in flight.
    await mailSettled();
    const before = await h.service.db.select().from(mailOutbox).where(and(eq(mailOutbox.workspaceId, ws), eq(mailOutbox.recipient, ADA.email)));
    const code = (await sendCode(s, ADA.email))!;
    const after = await h.service.db.select().from(mailOutbox).where(and(eq(mailOutbox.workspaceId, ws), eq(mailOutbox.recipient, ADA.email)));
    expect(after.length).toBe(before.length + 1);
    const [newest] = await outboxFor(h, ws, ADA.email);
    expect(newest).toMatchObject({ recipient: ADA.email, subject: expect.stringContaining(code) });
  });
});

describe("an address without an account", () => {
  it("gets the same page and the same code step, and no message is sent", async () => {
    const known = await start();
    const unknown = await start();
    expect(outcome(await requestSignInCode(h, known, ADA.email))).toEqual({ to: "page", error: null });
    expect(outcome(await requestSignInCode(h, unknown, UNKNOWN))).toEqual({ to: "page", error: null });
    const [a, b] = [await viewOf(h, known), await viewOf(h, unknown)];
    expect({ ...b.email, codeSentTo: "x" }).toEqual({ ...a.email, codeSentTo: "x" });
    expect(b.step).toEqual(a.step);
    expect(b.email.codeSentTo).toBe(UNKNOWN);
    expect(await outboxFor(h, ws, UNKNOWN)).toHaveLength(0);
    // No code opens it, and it counts attempts like any other.
    for (let i = 0; i < 4; i++) expect(await verify(unknown, String(i).padStart(6, "0"))).toEqual({ to: "page", error: "invalid_code" });
    expect(await verify(unknown, "999999")).toEqual({ to: "page", error: "code_expired" });
  });

  it("meets the same cooldown and limits", async () => {
    const s = await start();
    expect(outcome(await requestSignInCode(h, s, UNKNOWN))).toEqual({ to: "page", error: null });
    expect(outcome(await requestSignInCode(h, s, UNKNOWN))).toEqual({ to: "page", error: "code_resend_wait" });
    for (let i = 1; i < SENDS_PER_ADDRESS; i++) {
      h.clock.advance(RESEND_COOLDOWN_MS);
      expect(outcome(await requestSignInCode(h, s, UNKNOWN))).toEqual({ to: "page", error: null });
    }
    h.clock.advance(RESEND_COOLDOWN_MS);
    expect(outcome(await requestSignInCode(h, s, UNKNOWN))).toEqual({ to: "page", error: "rate_limited" });
  });

  it("is how a disabled account looks too", async () => {
    const s = await start();
    expect(outcome(await requestSignInCode(h, s, CAROL.email))).toEqual({ to: "page", error: null });
    expect((await viewOf(h, s)).email.codeSentTo).toBe(CAROL.email);
    expect(await outboxFor(h, ws, CAROL.email)).toHaveLength(0);
  });
});

describe("without a way to send email", () => {
  it("in production (https PUBLIC_URL) without SMTP_URL: not offered, and refused", async () => {
    const s = await startSignIn(prod, pws, SPA);
    const view = await viewOf(prod, s);
    expect(view.email.available).toBe(false);
    expect(view.policy.firstFactors).toContain("email_otp");
    expect(outcome(await postStep(prod, s, "/sign-in/email", { email: ADA.email }))).toEqual({ to: "page", error: "email_unavailable" });
  });
});

describe.runIf(Boolean(inject("databaseUrl")))("on PostgreSQL", () => {
  it("gives exactly one success to 20 parallel uses of one code", async () => {
    const s = await start();
    const code = (await sendCode(s, ADA.email))!;
    const results = await Promise.all(Array.from({ length: 20 }, () => enterSignInCode(h, s, code)));
    const outcomes = results.map(outcome);
    expect(outcomes.filter((o) => o.to === "callback")).toHaveLength(1);
    for (const o of outcomes) if (o.to === "page") expect(o.error).toBe("code_expired");
    const [row] = await emailChallenges(s);
    expect(row.attempts).toBe(1);
  });

  it("counts every one of 20 parallel wrong guesses: never more than 5 checked", async () => {
    const s = await start();
    const code = (await sendCode(s, ADA.email))!;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => enterSignInCode(h, s, wrong(String((Number(code) + i) % 1_000_000)))));
    expect(results.map(outcome).every((o) => o.to === "page")).toBe(true);
    const [row] = await emailChallenges(s);
    expect(row.attempts).toBe(5);
    expect(await verify(s, code)).toEqual({ to: "page", error: "code_expired" });
  });
});
