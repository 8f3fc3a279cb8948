/**
 * Bot protection (lib/authn/bot-challenge): the policy (off by default), ALTCHA's proof of work
 * asked by every protected form where the workspace says (always, or adaptively past the declared
 * thresholds), solved as the page's script solves it, bound to its workspace and sign-in, accepted
 * once (raced on PostgreSQL), and never asked of a passkey.
 */
import { createHash } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { auditEvents } from "../../../db/schema";
import { findNumber, sha256Hex } from "../../../components/hosted/sha256";
import { acceptSolution, newChallenge } from "../../../lib/authn/bot-challenge/challenge";
import { BOT_PRESSURE } from "../../../lib/authn/bot-challenge/pressure";
import { loadBotChallengeMode, saveBotChallengeMode, type BotChallengeMode } from "../../../lib/authn/bot-challenge/policy";
import { exportWorkspace, importWorkspace } from "../../../lib/workspaces/file";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, SPA, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postPassword, postStep, startSignIn, viewOf, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";
import { OUTBOX } from "../../helpers/factors/email";
import { adminAndViewer, createConsoleHarness, runRegistered } from "../console-helpers";
import { ensureSystemWorkspace } from "../../../lib/console/system";

let h: Harness;
const ws = uniqueWorkspaceId("bots");

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX, trustProxy: true });
  await seed(h, { ...standardWorkspace(ws), password_reset: "email", auth_policy: { sign_up: true } });
});

const setMode = (mode: BotChallengeMode, workspaceId = ws) => saveBotChallengeMode(h.service.db, workspaceId, mode, h.clock.now());
afterEach(async () => {
  await setMode("off");
  // A fresh window for the thresholds' counters.
  h.clock.advance(BOT_PRESSURE.perAddress.windowMs);
});

/** The page's challenge solved as its script does: the number whose SHA-256 with the salt is the challenge. */
function solve(challengeJson: string, mine: (text: string) => string = (t) => createHash("sha256").update(t).digest("hex")): string {
  const c = JSON.parse(challengeJson) as { algorithm: string; challenge: string; maxnumber: number; salt: string; signature: string };
  for (let n = 0; n <= c.maxnumber; n++) {
    if (mine(c.salt + n) === c.challenge) return Buffer.from(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: n, salt: c.salt, signature: c.signature })).toString("base64");
  }
  throw new Error("no solution");
}

const from = (address: string) => ({ headers: { "x-forwarded-for": address } });

async function solvedFor(s: PendingSignIn): Promise<string> {
  const view = await viewOf(h, s);
  expect(view.botChallenge).not.toBeNull();
  return solve(view.botChallenge!);
}

describe("the page's solver (components/hosted/sha256.ts)", () => {
  it("hashes as SHA-256 does, and finds the number over salts of every block length", () => {
    for (const text of ["", "abc", "x".repeat(55), "y".repeat(56), "z".repeat(64), "q".repeat(130), "é😀"]) {
      expect(sha256Hex(text)).toBe(createHash("sha256").update(text).digest("hex"));
    }
    for (const salt of ["", "x".repeat(50), "y".repeat(60), "z".repeat(64), "0123456789abcdef01234567?expires=1795970000&tx=abcdefghijklmnopqrstuvwxyz0123456789ABCDEF&"]) {
      for (const n of [0, 9, 10, 99_999, 100_000]) {
        expect(findNumber(salt, createHash("sha256").update(salt + n).digest("hex"), 0, 100_000)).toBe(n);
      }
    }
    expect(findNumber("salt", createHash("sha256").update("salt7").digest("hex"), 8, 100)).toBeNull();
  });
});

describe("the policy", () => {
  it("is off by default: the page asks nothing and the forms need nothing", async () => {
    const off = uniqueWorkspaceId("bots-off");
    await seed(h, standardWorkspace(off));
    expect(await loadBotChallengeMode(h.service.db, off)).toBe("off");
    const s = await startSignIn(h, off, SPA);
    expect((await viewOf(h, s)).botChallenge).toBeNull();
    expect(outcome(await postPassword(h, s, ADA.email, ADA.password)).to).toBe("callback");
  });

  it("travels in the workspace file as bot_challenge; a file that leaves it out turns it off; the console sets it (admins, audited)", async () => {
    const other = uniqueWorkspaceId("bots-file");
    await seed(h, { ...standardWorkspace(other), bot_challenge: "adaptive" });
    expect(await loadBotChallengeMode(h.service.db, other)).toBe("adaptive");
    const file = (await exportWorkspace(h.service.db, other))!;
    expect(file.bot_challenge).toBe("adaptive");
    const { bot_challenge: _left, ...without } = file;
    await importWorkspace(h.service.db, without, { clock: h.clock, masterKey: h.service.config.masterKey });
    expect(await loadBotChallengeMode(h.service.db, other)).toBe("off");

    // The console signs operators in: a database of its own.
    const c = await createConsoleHarness();
    await seed(c, standardWorkspace(other));
    await ensureSystemWorkspace(c.service);
    const { admin, viewer } = await adminAndViewer(c, other, "bots.test");
    // The page reads the mode through the process cache (lib/sign-in/page-settings.ts): now "off", kept.
    expect((await viewOf(c, await startSignIn(c, other, SPA))).botChallenge).toBeNull();
    await expect(runRegistered(c, viewer, other, "setBotChallenge", { mode: "always" })).rejects.toThrow();
    expect(await runRegistered(c, admin, other, "setBotChallenge", { mode: "always" })).toMatchObject({ ok: true });
    // The console's change drops what the process kept: the next page asks at once.
    expect((await viewOf(c, await startSignIn(c, other, SPA))).botChallenge).not.toBeNull();
    expect(await loadBotChallengeMode(c.service.db, other)).toBe("always");
    const events = await c.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, other), eq(auditEvents.type, "console.workspace.bot_challenge_changed")));
    expect(events.map((e) => e.data)).toEqual([expect.objectContaining({ before: "off", after: "always" })]);
  });
});

describe("always", () => {
  it("asks every protected form for a solved challenge, and checks nothing without one", async () => {
    await setMode("always");
    const s = await startSignIn(h, ws, SPA);
    // Without a solution the right password is not even checked.
    expect(outcome(await postPassword(h, s, ADA.email, ADA.password))).toEqual({ to: "page", error: "bot_check" });
    for (const [path, fields] of [
      ["/sign-in/email", { email: ADA.email }],
      ["/sign-up/email", { email: "new-person@example.test" }],
      ["/sign-in/reset/email", { email: ADA.email }],
    ] as const) {
      const t = await startSignIn(h, ws, SPA);
      const o = outcome(await postStep(h, t, path, fields));
      expect(o).toMatchObject({ to: "page", error: "bot_check" });
    }
    // Solved as the page's script solves it (components/hosted/bot-challenge.tsx), the form goes on.
    const view = await viewOf(h, s);
    const proof = solve(view.botChallenge!, sha256Hex);
    expect(outcome(await postStep(h, s, "/sign-in/password", { email: ADA.email, password: ADA.password, altcha: proof })).to).toBe("callback");
  });

  it("accepts a solution once, for its own sign-in and workspace, while it lives; a forged one never", async () => {
    await setMode("always");
    const s = await startSignIn(h, ws, SPA);
    const proof = await solvedFor(s);
    const ctx = await workspaceContext(h, ws);
    // Another sign-in's challenge, solved, is refused here.
    const other = await startSignIn(h, ws, SPA);
    expect(await acceptSolution(ctx, s.tx, await solvedFor(other))).toBe(false);
    // Another workspace's.
    const elsewhere = uniqueWorkspaceId("bots-other");
    await seed(h, standardWorkspace(elsewhere));
    const foreign = solve(await newChallenge(await workspaceContext(h, elsewhere), s.tx));
    expect(await acceptSolution(ctx, s.tx, foreign)).toBe(false);
    // A wrong number, a changed salt, garbage.
    const payload = JSON.parse(Buffer.from(proof, "base64").toString()) as { number: number; salt: string };
    const bent = (change: object) => Buffer.from(JSON.stringify({ ...payload, ...change })).toString("base64");
    expect(await acceptSolution(ctx, s.tx, bent({ number: payload.number + 1 }))).toBe(false);
    expect(await acceptSolution(ctx, s.tx, bent({ salt: payload.salt.replace("tx=", "tx=x") }))).toBe(false);
    expect(await acceptSolution(ctx, s.tx, bent({ algorithm: "SHA-1" }))).toBe(false);
    expect(await acceptSolution(ctx, s.tx, "not base64 json")).toBe(false);
    // Expired with its sign-in.
    const late = await startSignIn(h, ws, SPA);
    const lateProof = await solvedFor(late);
    h.clock.advance(11 * 60_000);
    expect(await acceptSolution(ctx, late.tx, lateProof)).toBe(false);
    // The right one once: a second post of it is refused.
    const fresh = await startSignIn(h, ws, SPA);
    const once = await solvedFor(fresh);
    expect(await acceptSolution(ctx, fresh.tx, once)).toBe(true);
    expect(await acceptSolution(ctx, fresh.tx, once)).toBe(false);
  });

  it("gives one success to 10 parallel posts of one solution", async () => {
    await setMode("always");
    const s = await startSignIn(h, ws, SPA);
    const proof = await solvedFor(s);
    const ctx = await workspaceContext(h, ws);
    const results = await Promise.all(Array.from({ length: 10 }, () => acceptSolution(ctx, s.tx, proof)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});

describe("adaptive", () => {
  it("asks nothing below the thresholds; past the client address's, that network's pages and posts ask, and others' do not", async () => {
    await setMode("adaptive");
    const attacker = "203.0.113.7";
    const s = await startSignIn(h, ws, SPA);
    expect((await viewOf(h, s)).botChallenge).toBeNull();
    for (let i = 0; i < BOT_PRESSURE.perAddress.times; i++) {
      const t = await startSignIn(h, ws, SPA);
      expect(outcome(await postStep(h, t, "/sign-in/password", { email: `guess-${i}@example.test`, password: "wrong password" }, from(attacker)))).toEqual({ to: "page", error: "invalid_credentials" });
    }
    const next = await startSignIn(h, ws, SPA);
    expect(outcome(await postStep(h, next, "/sign-in/password", { email: ADA.email, password: ADA.password }, from(attacker)))).toEqual({ to: "page", error: "bot_check" });
    // Asked once, this sign-in keeps asking, and shows the challenge.
    expect((await viewOf(h, next)).botChallenge).not.toBeNull();
    const proof = await solvedFor(next);
    expect(outcome(await postStep(h, next, "/sign-in/password", { email: ADA.email, password: ADA.password, altcha: proof }, from(attacker))).to).toBe("callback");
    // Another network is not asked.
    const other = await startSignIn(h, ws, SPA);
    expect(outcome(await postStep(h, other, "/sign-in/password", { email: ADA.email, password: ADA.password }, from("198.51.100.20"))).to).toBe("callback");
  });

  it("asks for an account guessed at from many addresses, and for nothing else", async () => {
    await setMode("adaptive");
    for (let i = 0; i < BOT_PRESSURE.perAccount.times; i++) {
      const t = await startSignIn(h, ws, SPA);
      expect(outcome(await postStep(h, t, "/sign-in/password", { email: ADA.email, password: `wrong ${i}` }, from(`192.0.2.${10 + i}`)))).toEqual({ to: "page", error: "invalid_credentials" });
    }
    const s = await startSignIn(h, ws, SPA);
    expect(outcome(await postStep(h, s, "/sign-in/password", { email: ADA.email, password: ADA.password }, from("192.0.2.99")))).toEqual({ to: "page", error: "bot_check" });
    const t = await startSignIn(h, ws, SPA);
    expect(outcome(await postStep(h, t, "/sign-in/password", { email: "bob@example.test", password: "another long password" }, from("192.0.2.99"))).to).toBe("callback");
  });
});
