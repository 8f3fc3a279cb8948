/**
 * Screening of new passwords (lib/authn/passwords): the bundled list, zxcvbn's score with the
 * account's own words, the breach range service (a local server speaking its format), and every
 * place a password is set: sign-up, the console, the workspace file. Off by default.
 */
import http from "node:http";
import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import { and, eq, sql } from "drizzle-orm";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { auditEvents, users, workspaces } from "../../../db/schema";
import { breachedPerRange } from "../../../lib/authn/passwords/breach-range";
import { breachedPasswordCount } from "../../../lib/authn/passwords/breached";
import { hashPassword } from "../../../lib/authn/password";
import { loadPasswordPolicy, savePasswordPolicy, screenNewPassword } from "../../../lib/authn/passwords/policy";
import { isCommonPassword, passwordScore, PasswordRefused, screeningRefusal } from "../../../lib/authn/passwords/screening";
import { exportWorkspace, importWorkspace } from "../../../lib/workspaces/file";
import { WorkspaceFileError } from "../../../lib/surfaces/workspace-file";
import { seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { becomes } from "../../helpers/poll";
import { SPA, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postStep, startSignIn, type PendingSignIn } from "../../helpers/factors/sign-in";
import { latestCode, OUTBOX } from "../../helpers/factors/email";
import { SEND_WINDOW_MS } from "../../../lib/authn/factors/email-code";
import { adminAndViewer, createConsoleHarness, runRegistered } from "../console-helpers";
import { ensureSystemWorkspace } from "../../../lib/console/system";

const STRONG = "kettle violin 57 zebra";


/** A range service: answers every prefix with the given hashes' suffixes under it, plus padding. */
async function rangeServer(breached: string[], behaviour: "answer" | "fail" | "hang" = "answer") {
  const asked: { path: string; padding: string | undefined }[] = [];
  const hashes = breached.map((p) => createHash("sha1").update(p).digest("hex").toUpperCase());
  const server = http.createServer((req, res) => {
    asked.push({ path: req.url ?? "", padding: req.headers["add-padding"] as string | undefined });
    if (behaviour === "hang") return;
    if (behaviour === "fail") return void res.writeHead(503).end();
    const prefix = (req.url ?? "").slice(-5);
    const lines = hashes.filter((h) => h.startsWith(prefix)).map((h) => `${h.slice(5)}:42`);
    // Padding entries (count 0), one of them the suffix of a password that must not count as breached.
    lines.push(`${"0".repeat(35)}:0`, `${createHash("sha1").update("padded only").digest("hex").toUpperCase().slice(5)}:0`);
    res.writeHead(200, { "content-type": "text/plain" }).end(lines.join("\r\n"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/range/`, asked, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe("the screening rules", () => {
  it("refuses a password of the bundled list whatever its case, a guessable one, and one built from the account's own words", async () => {
    expect(await isCommonPassword("Password123")).toBe(true);
    expect(await isCommonPassword(STRONG)).toBe(false);
    expect(await screeningRefusal("Trustno1", { minimumScore: 0 })).toBe("password_common");
    expect(await screeningRefusal("qwertzuiop12", { minimumScore: 2 })).toBe("password_guessable");
    expect(await screeningRefusal("qwertzuiop12", { minimumScore: 1 })).toBeNull();
    expect(await screeningRefusal(STRONG, { minimumScore: 4 })).toBeNull();
    const own = "ada@example.test!";
    expect(await passwordScore(own, ["ada@example.test"])).toBeLessThan(await passwordScore(own));
    expect(await screeningRefusal(own, { minimumScore: 2, userInputs: ["ada@example.test"] })).toBe("password_guessable");
  });

  it("asks the range service with the first 5 hex characters only and padding, and refuses what it knows", async () => {
    const range = await rangeServer(["my breached passphrase 2019"]);
    try {
      expect(await breachedPerRange(fetch, range.url, "my breached passphrase 2019")).toBe(true);
      expect(await breachedPerRange(fetch, range.url, STRONG)).toBe(false);
      // A padding entry (count 0) is not a breach.
      expect(await breachedPerRange(fetch, range.url, "padded only")).toBe(false);
      for (const { path, padding } of range.asked) {
        expect(path).toMatch(/^\/range\/[0-9A-F]{5}$/);
        expect(padding).toBe("true");
      }
      const sha = createHash("sha1").update(STRONG).digest("hex").toUpperCase();
      expect(range.asked.some((a) => a.path.endsWith(sha.slice(0, 5)))).toBe(true);
      expect(range.asked.every((a) => !a.path.includes(sha.slice(5, 12)))).toBe(true);
      expect(await screeningRefusal("my breached passphrase 2019", { minimumScore: 0, knownBreached: (p) => breachedPerRange(fetch, range.url, p) })).toBe("password_breached");
    } finally {
      await range.close();
    }
  });

  it("lets the password through when the range service fails or does not answer in time", async () => {
    for (const behaviour of ["fail", "hang"] as const) {
      const range = await rangeServer(["my breached passphrase 2019"], behaviour);
      const started = Date.now();
      try {
        expect(await breachedPerRange(fetch, range.url, "my breached passphrase 2019")).toBe(false);
        expect(Date.now() - started).toBeLessThan(3_000);
      } finally {
        await range.close();
      }
    }
  });
});

describe("where passwords are set", () => {
  let h: Harness;
  const ws = uniqueWorkspaceId("screening");
  let admin: string;
  let viewer: string;
  let counter = 0;
  const newAddress = () => `new-${++counter}@example.test`;
  let range: Awaited<ReturnType<typeof rangeServer>>;

  beforeAll(async () => {
    range = await rangeServer(["my breached passphrase 2019"]);
    // A database of its own: it signs operators in (tests/integration/console-helpers.ts).
    const base = await createConsoleHarness();
    h = { ...base, service: { ...base.service, config: { ...base.service.config, mail: OUTBOX, passwordBreachRangeUrl: range.url } } };
    await seed(h, standardWorkspace(ws));
    await h.service.db.update(workspaces).set({ authPolicy: { signUp: true } }).where(eq(workspaces.id, ws));
    await ensureSystemWorkspace(h.service);
    ({ admin, viewer } = await adminAndViewer(h, ws, "screening.test"));
  });
  afterAll(async () => range.close());
  beforeEach(() => {
    h.clock.current = (Math.floor(h.clock.current / SEND_WINDOW_MS) + 1) * SEND_WINDOW_MS;
  });

  const step = async (s: PendingSignIn, path: string, fields: Record<string, string> = {}) => outcome(await postStep(h, s, path, fields));
  async function signUpWith(password: string) {
    const email = newAddress();
    const s = await startSignIn(h, ws, SPA);
    await step(s, "/sign-up/email", { email });
    await step(s, "/sign-up/verify", { code: (await latestCode(h, ws, email))! });
    return { email, result: await step(s, "/sign-up/account", { credential: "password", password }) };
  }
  const account = async (email: string) => (await h.service.db.select().from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, email))))[0];

  it("is off by default: any password of 8 to 256 characters is set", async () => {
    expect(await loadPasswordPolicy(h.service.db, ws)).toEqual({ screening: null, reset: "off" });
    const { email, result } = await signUpWith("password123");
    expect(result.to).toBe("callback");
    expect((await account(email))?.passwordHash).toBeTruthy();
  });

  it("turned on in the console (admins only, audited), refuses at sign-up with the reason, and creates no account", async () => {
    await expect(runRegistered(h, viewer, ws, "setPasswordScreening", { screening: "on", minimum_score: "2" })).rejects.toThrow();
    expect(await loadPasswordPolicy(h.service.db, ws)).toEqual({ screening: null, reset: "off" });
    expect(await runRegistered(h, admin, ws, "setPasswordScreening", { screening: "on", minimum_score: "2" })).toMatchObject({ ok: true });
    expect(await loadPasswordPolicy(h.service.db, ws)).toEqual({ screening: { minimumScore: 2 }, reset: "off" });
    const [event] = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "console.workspace.password_screening_changed")));
    expect(event?.data).toMatchObject({ before: "off", after: { minimum_score: 2 } });
    // Saved as it was: no second event.
    expect(await runRegistered(h, admin, ws, "setPasswordScreening", { screening: "on", minimum_score: "2" })).toMatchObject({ ok: true });
    expect(await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "console.workspace.password_screening_changed")))).toHaveLength(1);
    for (const [password, refusal] of [
      ["password123", "password_common"],
      ["my breached passphrase 2019", "password_breached"],
      ["qwertzuiop12", "password_guessable"],
    ] as const) {
      const { email, result } = await signUpWith(password);
      expect(result).toEqual({ to: "page", error: refusal });
      expect(await account(email)).toBeUndefined();
    }
    const { email, result } = await signUpWith(STRONG);
    expect(result.to).toBe("callback");
    expect((await account(email))?.passwordHash).toBeTruthy();
  });

  it("refuses in the console beside the password field, when a user is created and when a password is set", async () => {
    await screenNewPassword(h.service, ws, STRONG);
    const created = await runRegistered(h, admin, ws, "createUser", { email: "console-1@example.test", password: "password123" });
    expect(created).toMatchObject({ ok: false, fieldErrors: { password: expect.stringContaining("most common") } });
    const ok = await runRegistered(h, admin, ws, "createUser", { email: "console-2@example.test", password: STRONG });
    expect(ok).toMatchObject({ ok: true });
    const id = (ok as { result: { id: string } }).result.id;
    const set = await runRegistered(h, admin, ws, "setUserPassword", { user_id: id, password: "my breached passphrase 2019" });
    expect(set).toMatchObject({ ok: false, fieldErrors: { password: expect.stringContaining("data breach") } });
    // The account's own address makes a password guessable.
    const own = await runRegistered(h, admin, ws, "setUserPassword", { user_id: id, password: "console-2@example.test!" });
    expect(own).toMatchObject({ ok: false, fieldErrors: { password: expect.stringContaining("too easy to guess") } });
    await expect(screenNewPassword(h.service, ws, "password123")).rejects.toBeInstanceOf(PasswordRefused);
  });

  it("is a workspace file section: exported as set, and a file's new passwords are screened by the file's own value, with the path", async () => {
    const doc = (await exportWorkspace(h.service.db, ws)) as Record<string, unknown> & { users: Array<Record<string, unknown>> };
    expect(doc.password_screening).toEqual({ minimum_score: 2 });
    const other = uniqueWorkspaceId("screening-file");
    const file = {
      id: other,
      name: "File",
      password_screening: { minimum_score: 2 },
      users: [
        { email: "fine@example.test", password: STRONG },
        { email: "weak@example.test", password: "iloveyou" },
      ],
    };
    const refused = await importWorkspace(h.service.db, file, { clock: h.clock, masterKey: h.service.config.masterKey }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WorkspaceFileError);
    expect((refused as WorkspaceFileError).issues).toEqual([{ path: "$.users[1].password", message: expect.stringContaining("most common") }]);
    // Nothing was written.
    expect(await h.service.db.select().from(workspaces).where(eq(workspaces.id, other))).toHaveLength(0);
    // The same file with screening off imports, and a later import that turns it on keeps the password it already holds.
    await importWorkspace(h.service.db, { ...file, password_screening: "off" }, { clock: h.clock, masterKey: h.service.config.masterKey });
    const again = await importWorkspace(h.service.db, file, { clock: h.clock, masterKey: h.service.config.masterKey });
    expect(again.changes).toBe(1);
    expect(await loadPasswordPolicy(h.service.db, other)).toEqual({ screening: { minimumScore: 2 }, reset: "off" });
    // "off" back, and out of range refused by the schema.
    await importWorkspace(h.service.db, { ...file, password_screening: "off" }, { clock: h.clock, masterKey: h.service.config.masterKey });
    expect(await loadPasswordPolicy(h.service.db, other)).toEqual({ screening: null, reset: "off" });
    const bad = await importWorkspace(h.service.db, { ...file, password_screening: { minimum_score: 5 } }, { clock: h.clock, masterKey: h.service.config.masterKey }).catch((e: unknown) => e);
    expect((bad as WorkspaceFileError).issues[0]).toMatchObject({ path: "$.password_screening.minimum_score", message: expect.stringContaining("from 0 to 4") });
  });

  it("records a password found breached after it was set, at its next sign-in (after the answer), until the password changes; the console counts them", async () => {
    const later = uniqueWorkspaceId("screening-later");
    const OLD = { email: "old@example.test", password: "iloveyou" };
    const RANGE = { email: "range@example.test", password: "my breached passphrase 2019" };
    const FINE = { email: "fine@example.test", password: STRONG };
    // Set while the workspace did not screen.
    await seed(h, { ...standardWorkspace(later), users: [OLD, RANGE, FINE].map((u) => ({ ...u, email_verified: true })) });
    const signInAs = (u: { email: string; password: string }) => signIn(h, later, { ...SPA, ...u });
    // Not screening: nothing is recorded.
    await signInAs(OLD);
    await sleep(200);
    expect(await breachedPasswordCount(h.service.db, later)).toBe(0);
    await savePasswordPolicy(h.service.db, later, { screening: { minimumScore: 2 } }, h.clock.now());
    for (const u of [OLD, RANGE, FINE]) await signInAs(u);
    // The check runs after the sign-in's answer.
    expect(await becomes(async () => (await breachedPasswordCount(h.service.db, later)) === 2, 5_000)).toBe(true);
    const flagged = await h.service.db.select({ email: users.emailNormalized }).from(users).where(and(eq(users.workspaceId, later), sql`${users.breachedPasswordHash} = ${users.passwordHash}`));
    expect(flagged.map((r) => r.email).sort()).toEqual([OLD.email, RANGE.email]);
    // A new password ends it, with no other write.
    const [old] = await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, later), eq(users.emailNormalized, OLD.email)));
    await h.service.db.update(users).set({ passwordHash: await hashPassword(STRONG) }).where(eq(users.id, old.id));
    expect(await breachedPasswordCount(h.service.db, later)).toBe(1);
  });
});
