/**
 * An operator account, and every credential on it, belongs only to whoever proved the mailbox
 * (lib/console/operator-accounts.ts, lib/operators/invitations.ts): the link shown to an inviter
 * makes no account; a password set before the proof is refused, and discarded by the proof (an
 * email-code sign-in, or an invitation's code) with every other session; the invitation page tells
 * nothing about the account until the proof; `operator grant` invites an address no proven account
 * has; operators change their own password and end their own sessions.
 */
import { readFileSync } from "node:fs";
import { and, eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { consoleSessions, grants, hostedSessions, operatorInvitations, operatorMemberships, users } from "../../../db/schema";
import { runCommand } from "../../../lib/cli/commands";
import { requireOperator, requireWorkspaceRole } from "../../../lib/console/authz";
import {
  acceptInvitationWithNewAccount,
  acceptInvitationWithProof,
  InvitationError,
  proveInvitationMailbox,
  sendInvitationCode,
  viewInvitation,
} from "../../../lib/operators/invitations";
import { finishConsoleLogin } from "../../../lib/console/login";
import { ACCOUNT_PAGE_AFTER_PROOF, endOwnSession, listOwnSessions, setOwnPassword } from "../../../lib/console/operator-accounts";
import { SYSTEM_WORKSPACE_ID } from "../../../lib/console/system";
import { MINUTE } from "../../../lib/clock";
import { CLIENT_ADDRESS_HEADER } from "../../../lib/http/client-address";
import { PUBLIC_URL, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { consoleCallback, consoleEmailCodeCallback, consoleSignIn, cookieValue, createOperator, operatorId, OPERATOR_PASSWORD } from "../console-helpers";
import { acceptInvitationAsOperator, invite as inviteAs, operatorMailTo, operatorsHarness, problem } from "./operators-helpers";

let h: Harness;
const A = uniqueWorkspaceId("mbx-a");
const B = uniqueWorkspaceId("mbx-b");
let ownerA: string;
let mallory: string;

const M_PASSWORD = "mallory chose this password";

let addressCounter = 0;
/** A request from a client address of its own, so that no limit of another test counts. */
const request = (ip = `198.51.100.${(addressCounter++ % 250) + 1}`) => new Request(`${PUBLIC_URL}/console/invitation`, { headers: { [CLIENT_ADDRESS_HEADER]: ip } });

beforeAll(async () => {
  // The development outbox, so mail is readable here (it is the system workspace's own).
  h = await operatorsHarness(A, B);
  h.clock.advance(MINUTE);
  await createOperator(h, "owner-a@victim.test", { [A]: "owner" });
  await createOperator(h, "mallory@evil.test", { [B]: "owner" });
  ownerA = (await consoleSignIn(h, "owner-a@victim.test")).token;
  mallory = (await consoleSignIn(h, "mallory@evil.test")).token;
});

const invite = (token: string, workspaceId: string, email: string, role = "admin") => inviteAs(h, token, workspaceId, email, role);
const mailTo = (email: string) => operatorMailTo(h, email);

/** The newest one-time code mailed to `email` (invitation codes and sign-in codes alike). */
async function latestCode(email: string): Promise<string> {
  const coded = (await mailTo(email)).filter((m) => /code/i.test(m.subject));
  const match = coded[0] && `${coded[0].subject}\n${coded[0].text}`.match(/(?:^|\D)(\d{6})(?:\D|$)/);
  if (!match) throw new Error(`no code was mailed to ${email}`);
  return match[1];
}

/** What the invitee does with the mail: asks for a code, enters it; returns the proof this browser keeps. */
async function proveMailbox(token: string, email: string): Promise<string> {
  await sendInvitationCode(h.service, request(), token);
  return proveInvitationMailbox(h.service, request(), token, await latestCode(email));
}

/** An operator account as the earlier invitation flow left it: the password whoever held the link chose. */
async function legacyAccount(email: string, password: string, memberships: Record<string, "owner" | "admin" | "viewer">): Promise<string> {
  const id = await createOperator(h, email, memberships);
  const { hashPassword } = await import("../../../lib/authn/password");
  await h.service.db.update(users).set({ passwordHash: await hashPassword(password), passwordUnproven: true }).where(eq(users.id, id));
  return id;
}

async function liveSessionsOf(userId: string) {
  const consoles = await h.service.db.select().from(consoleSessions).where(eq(consoleSessions.operatorUserId, userId));
  const hosted = await h.service.db.select().from(hostedSessions).where(and(eq(hostedSessions.workspaceId, SYSTEM_WORKSPACE_ID), eq(hostedSessions.userId, userId)));
  const granted = await h.service.db.select().from(grants).where(and(eq(grants.workspaceId, SYSTEM_WORKSPACE_ID), eq(grants.userId, userId)));
  return { console: consoles.filter((s) => !s.endedAt).map((s) => s.id), hosted: hosted.filter((s) => !s.endedAt).map((s) => s.id), grants: granted.filter((g) => !g.revokedAt).map((g) => g.id) };
}

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await runCommand(h.service.db, h.service.config, h.clock, { argv }, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe("squatting an operator email", () => {
  it("the inviter's link makes no account: only the code sent to the mailbox does, and the squatter gets nothing of A or of the command line", async () => {
    // The installation operator made M owner of B only. M invites alice to B and takes the link the console shows M.
    const toB = await invite(mallory, B, "alice@victim.test", "viewer");
    const heldByM = toB.token;
    // With the link alone M cannot create the account, whatever proof M makes up.
    await problem(acceptInvitationWithNewAccount(h.service, heldByM, undefined, { name: "Alice?", password: M_PASSWORD }), "unproven");
    await problem(acceptInvitationWithNewAccount(h.service, heldByM, "m-made-this-up", { name: "Alice?", password: M_PASSWORD }), "unproven");
    await problem(acceptInvitationWithProof(h.service, heldByM, "m-made-this-up"), "unproven");
    // M may ask for a code, but it goes to alice's mailbox only, and guessing it is refused.
    await sendInvitationCode(h.service, request(), heldByM);
    expect((await mailTo("alice@victim.test")).filter((m) => /code/i.test(m.subject))).toHaveLength(1);
    expect((await mailTo("mallory@evil.test")).filter((m) => /code/i.test(m.subject))).toHaveLength(0);
    const real = await latestCode("alice@victim.test");
    await problem(proveInvitationMailbox(h.service, request(), heldByM, real === "000000" ? "000001" : "000000"), "code_invalid");
    expect(await viewInvitation(h.service, heldByM)).toMatchObject({ proof: null });
    expect(await h.service.db.select().from(users).where(eq(users.emailNormalized, "alice@victim.test"))).toHaveLength(0);
    // Nor can M sign in as alice: there is no such account, and none was made with M's password.
    await expect(consoleSignIn(h, "alice@victim.test", M_PASSWORD)).rejects.toThrow();

    // While no proven account has alice's address, `operator grant` invites it instead of making a member.
    const granted = await cli("operator", "grant", A, "alice@victim.test", "owner");
    expect(granted.code).toBe(0);
    expect(granted.out).toContain("No operator account has proven alice@victim.test: invited it to become owner of workspace");
    const printed = granted.out.match(/https:\/\/\S+\/console\/invitation\?token=\S+/)![0];
    expect(await h.service.db.select().from(operatorMemberships).innerJoin(users, eq(users.id, operatorMemberships.operatorUserId)).where(eq(users.emailNormalized, "alice@victim.test"))).toHaveLength(0);

    // A invites alice. Alice opens her link, asks for a code, enters it: only now is she told there is no account yet.
    const toA = await invite(ownerA, A, "alice@victim.test", "admin");
    expect(await viewInvitation(h.service, toA.token)).toMatchObject({ email: "alice@victim.test", proof: null });
    // The printed link was replaced by A's owner's invitation of the same address.
    expect(await viewInvitation(h.service, new URL(printed).searchParams.get("token")!)).toMatchObject({ code: "revoked" });
    h.clock.advance(MINUTE);
    const proof = await proveMailbox(toA.token, "alice@victim.test");
    expect(await viewInvitation(h.service, toA.token, proof)).toMatchObject({ proof: { account: "new" } });
    // A proof is for its own invitation only.
    await problem(acceptInvitationWithNewAccount(h.service, heldByM, proof, { name: "Alice", password: "" }), "unproven");
    const created = await acceptInvitationWithNewAccount(h.service, toA.token, proof, { name: "Alice", password: "alice's own password" });
    expect(created).toMatchObject({ workspaceId: A, passwordDiscarded: false, hasPassword: true });
    const alice = (await consoleSignIn(h, "alice@victim.test", "alice's own password")).token;
    expect((await requireWorkspaceRole(h.service, alice, A, "admin")).role).toBe("admin");
    // M's password never was alice's.
    await expect(consoleSignIn(h, "alice@victim.test", M_PASSWORD)).rejects.toThrow();
    // M's old link is still only a link: a proof is needed, and the page shows M nothing about the account.
    expect(await viewInvitation(h.service, heldByM)).toMatchObject({ proof: null });
    await problem(acceptInvitationWithProof(h.service, heldByM, undefined), "unproven");
    // Alice is proven now: `operator grant` gives her the role.
    expect((await cli("operator", "grant", B, "alice@victim.test", "viewer")).out).toBe(`alice@victim.test is now viewer of workspace ${B}.\n`);
  });

  it("an account made by the earlier flow: M's password no longer signs in; Alice's email code discards it and ends M's sessions; she sets her own", async () => {
    // As the migration leaves it: M created "carol" with M's password through B's link, and holds a session.
    const carol = await legacyAccount("carol@victim.test", M_PASSWORD, { [B]: "viewer" });
    // M signs in with M's password: the hosted sign-in takes it, the console refuses it, and nothing of it stays live.
    const attempt = await consoleCallback(h, "carol@victim.test", M_PASSWORD);
    await expect(finishConsoleLogin(h.service, { url: attempt.callback, txCookie: attempt.txCookie })).rejects.toMatchObject({ code: "mailbox_unproven" });
    expect(await liveSessionsOf(carol)).toEqual({ console: [], hosted: [], grants: [] });
    // A session M opened before (the migration ends those too; here one is made by hand to see the proof end it).
    await h.service.db.update(users).set({ passwordUnproven: false }).where(eq(users.id, carol));
    const mConsole = (await consoleSignIn(h, "carol@victim.test", M_PASSWORD)).token;
    await h.service.db.update(users).set({ passwordUnproven: true }).where(eq(users.id, carol));
    expect((await requireOperator(h.service, mConsole)).userId).toBe(carol);

    // `operator grant` does not make the unproven account a member: it invites the address.
    expect((await cli("operator", "grant", A, "carol@victim.test", "owner")).out).toContain("No operator account has proven carol@victim.test");
    expect(await h.service.db.select().from(operatorMemberships).where(and(eq(operatorMemberships.operatorUserId, carol), eq(operatorMemberships.workspaceId, A)))).toHaveLength(0);
    // A invites carol (replacing that invitation); she is told nothing before her code.
    const toA = await invite(ownerA, A, "carol@victim.test", "admin");
    expect(await viewInvitation(h.service, toA.token)).toMatchObject({ proof: null });

    // Carol signs in to the console with an email code: the password M set is discarded, M's sessions end, she is asked for her own.
    const jar = await consoleEmailCodeCallback(h, "carol@victim.test", () => latestCode("carol@victim.test"));
    const done = await finishConsoleLogin(h.service, { url: jar.callback, txCookie: jar.txCookie });
    expect(done.returnTo).toBe(ACCOUNT_PAGE_AFTER_PROOF);
    const carolToken = cookieValue(done.cookie, "lk_console");
    const [row] = await h.service.db.select().from(users).where(eq(users.id, carol));
    expect(row).toMatchObject({ passwordHash: null, passwordUnproven: false });
    await expect(requireOperator(h.service, mConsole)).rejects.toMatchObject({ code: "unauthenticated" });
    const live = await liveSessionsOf(carol);
    expect(live.console).toHaveLength(1);
    expect((await requireOperator(h.service, carolToken)).userId).toBe(carol);
    expect(live.hosted).toHaveLength(1);
    await expect(consoleSignIn(h, "carol@victim.test", M_PASSWORD)).rejects.toThrow();

    // She accepts A's invitation signed in; sets her own password (none to confirm: the account has none).
    expect(await acceptInvitationAsOperator(h.service, toA.token, carolToken)).toEqual({ workspaceId: A });
    expect(await setOwnPassword(h.service, carolToken, { password: "carol's own password", password_confirm: "carol's own password" })).toEqual({ changed: false });
    expect((await consoleSignIn(h, "carol@victim.test", "carol's own password")).token).toBeTruthy();
    const told = (await mailTo("carol@victim.test")).filter((m) => /password/i.test(m.subject));
    expect(told.map((m) => m.subject)).toEqual(["A password was set on your Latchkey operator account"]);
  });

  it("accepting an invitation with the code discards a password set before the proof and ends every session of the account", async () => {
    const dave = await legacyAccount("dave@victim.test", M_PASSWORD, { [B]: "viewer" });
    await h.service.db.update(users).set({ passwordUnproven: false }).where(eq(users.id, dave));
    const mConsole = (await consoleSignIn(h, "dave@victim.test", M_PASSWORD)).token;
    await h.service.db.update(users).set({ passwordUnproven: true }).where(eq(users.id, dave));

    const toA = await invite(ownerA, A, "dave@victim.test", "admin");
    const proof = await proveMailbox(toA.token, "dave@victim.test");
    expect(await viewInvitation(h.service, toA.token, proof)).toMatchObject({ proof: { account: "existing" } });
    // The proof does not make a second account.
    await problem(acceptInvitationWithNewAccount(h.service, toA.token, proof, { name: "Dave", password: "" }), "account_exists");
    const accepted = await acceptInvitationWithProof(h.service, toA.token, proof, { ip: "192.0.2.44" });
    expect(accepted).toEqual({ userId: dave, workspaceId: A, passwordDiscarded: true, hasPassword: false });
    await expect(requireOperator(h.service, mConsole)).rejects.toMatchObject({ code: "unauthenticated" });
    expect(await liveSessionsOf(dave)).toEqual({ console: [], hosted: [], grants: [] });
    await expect(consoleSignIn(h, "dave@victim.test", M_PASSWORD)).rejects.toThrow();
    const [row] = await h.service.db.select().from(users).where(eq(users.id, dave));
    expect(row).toMatchObject({ passwordHash: null, passwordUnproven: false, emailVerified: true });
    // Used once.
    await problem(acceptInvitationWithProof(h.service, toA.token, proof), "used");
  });
});

describe("the invitation page before the proof", () => {
  it("looks the same whether an account has the address, and mails the address the same", async () => {
    const existing = await invite(ownerA, A, "mallory@evil.test", "viewer");
    const fresh = await invite(ownerA, A, "nobody@fresh.test", "viewer");
    const [v1, v2] = [await viewInvitation(h.service, existing.token), await viewInvitation(h.service, fresh.token)];
    const shape = (v: unknown) => ({ ...(v as object), email: "x", expiresAt: 0 });
    expect(shape(v1)).toEqual(shape(v2));
    expect(Object.keys(v1).sort()).toEqual(["email", "expiresAt", "proof", "role", "workspaceId", "workspaceName"]);
    // A stale or wrong proof changes nothing.
    expect(shape(await viewInvitation(h.service, existing.token, "wrong"))).toEqual(shape(await viewInvitation(h.service, fresh.token, "wrong")));
    // Asking for a code answers alike and sends alike: one message to each address.
    const before = [(await mailTo("mallory@evil.test")).length, (await mailTo("nobody@fresh.test")).length];
    await expect(sendInvitationCode(h.service, request(), existing.token)).resolves.toBeUndefined();
    await expect(sendInvitationCode(h.service, request(), fresh.token)).resolves.toBeUndefined();
    expect([(await mailTo("mallory@evil.test")).length, (await mailTo("nobody@fresh.test")).length]).toEqual(before.map((n) => n + 1));
    // And the resend cooldown holds for both alike.
    await problem(sendInvitationCode(h.service, request(), existing.token), "code_wait");
    await problem(sendInvitationCode(h.service, request(), fresh.token), "code_wait");
  });

  it("a proof expires after 30 minutes and a code after 5 wrong answers", async () => {
    h.clock.advance(MINUTE);
    const sent = await invite(ownerA, A, "slow@fresh.test", "viewer");
    const proof = await proveMailbox(sent.token, "slow@fresh.test");
    h.clock.advance(30 * MINUTE);
    expect(await viewInvitation(h.service, sent.token, proof)).toMatchObject({ proof: null });
    await problem(acceptInvitationWithNewAccount(h.service, sent.token, proof, { name: "Slow", password: "" }), "unproven");

    await sendInvitationCode(h.service, request(), sent.token);
    const code = await latestCode("slow@fresh.test");
    const wrong = code === "111111" ? "222222" : "111111";
    for (let i = 0; i < 4; i++) await problem(proveInvitationMailbox(h.service, request(), sent.token, wrong), "code_invalid");
    await problem(proveInvitationMailbox(h.service, request(), sent.token, wrong), "code_expired");
    await problem(proveInvitationMailbox(h.service, request(), sent.token, code), "code_expired");
  });
});

describe("races", () => {
  it("a code proves the mailbox once, and a proof makes one account", async () => {
    h.clock.advance(MINUTE);
    const sent = await invite(ownerA, A, "racer@fresh.test", "viewer");
    await sendInvitationCode(h.service, request(), sent.token);
    const code = await latestCode("racer@fresh.test");
    const proofs = await Promise.allSettled(Array.from({ length: 8 }, () => proveInvitationMailbox(h.service, request(), sent.token, code)));
    const won = proofs.filter((p): p is PromiseFulfilledResult<string> => p.status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const p of proofs) if (p.status === "rejected") expect(p.reason).toBeInstanceOf(InvitationError);

    const accepts = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? acceptInvitationWithNewAccount(h.service, sent.token, won[0].value, { name: `Racer ${i}`, password: "" })
          : acceptInvitationWithProof(h.service, sent.token, won[0].value),
      ),
    );
    expect(accepts.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await h.service.db.select().from(users).where(eq(users.emailNormalized, "racer@fresh.test"))).toHaveLength(1);
    const memberships = await h.service.db.select().from(operatorMemberships).where(eq(operatorMemberships.operatorUserId, await operatorId(h, "racer@fresh.test")));
    expect(memberships.map((m) => m.workspaceId)).toEqual([A]);
    const [row] = await h.service.db.select().from(operatorInvitations).where(eq(operatorInvitations.emailNormalized, "racer@fresh.test"));
    expect(row.acceptedAt).not.toBeNull();
  });
});

describe("your account", () => {
  it("changing the password needs the current one, ends every other session, and tells the address", async () => {
    const erin = await createOperator(h, "erin@operators.test", { [A]: "viewer" });
    const here = (await consoleSignIn(h, "erin@operators.test")).token;
    const elsewhere = (await consoleSignIn(h, "erin@operators.test")).token;
    const operator = await requireOperator(h.service, here);
    expect((await listOwnSessions(h.service, operator)).map((s) => s.current).sort()).toEqual([false, true]);

    await expect(setOwnPassword(h.service, here, { password: "erin's new password" })).rejects.toMatchObject({ field: "current" });
    await expect(setOwnPassword(h.service, here, { current: "not it at all", password: "erin's new password" })).rejects.toMatchObject({ field: "current" });
    await expect(setOwnPassword(h.service, here, { current: OPERATOR_PASSWORD, password: "short" })).rejects.toMatchObject({ field: "password" });
    // Operators' passwords are always screened (lib/authn/passwords): a common one, and one built from the account's address.
    await expect(setOwnPassword(h.service, here, { current: OPERATOR_PASSWORD, password: "qwertyuiop123" })).rejects.toMatchObject({ field: "password", message: expect.stringContaining("most common") });
    await expect(setOwnPassword(h.service, here, { current: OPERATOR_PASSWORD, password: "erin@operators.test1" })).rejects.toMatchObject({ field: "password", message: expect.stringContaining("too easy to guess") });
    await expect(setOwnPassword(h.service, here, { current: OPERATOR_PASSWORD, password: "erin's new password", password_confirm: "something else" })).rejects.toMatchObject({ field: "password" });
    expect(await setOwnPassword(h.service, here, { current: OPERATOR_PASSWORD, password: "erin's new password" }, { ip: "192.0.2.7" })).toEqual({ changed: true });
    await expect(requireOperator(h.service, elsewhere)).rejects.toMatchObject({ code: "unauthenticated" });
    expect((await requireOperator(h.service, here)).userId).toBe(erin);
    await expect(consoleSignIn(h, "erin@operators.test")).rejects.toThrow();
    const other = (await consoleSignIn(h, "erin@operators.test", "erin's new password")).token;
    const [told] = await mailTo("erin@operators.test");
    expect(told.subject).toBe("Your Latchkey operator password was changed");
    expect(told.text).toContain("192.0.2.7");

    // Ending a session: only one's own, and it is over at once.
    const otherId = (await requireOperator(h.service, other)).sessionId;
    expect(await endOwnSession(h.service, ownerA, otherId)).toBe(false);
    expect((await requireOperator(h.service, other)).userId).toBe(erin);
    expect(await endOwnSession(h.service, here, otherId)).toBe(true);
    await expect(requireOperator(h.service, other)).rejects.toMatchObject({ code: "unauthenticated" });
    expect((await requireOperator(h.service, here)).userId).toBe(erin);
  });
});

describe("migration 0022", () => {
  it("marks every operator account with a password but setup's, and ends their sessions", async () => {
    const MIGRATION = readFileSync(new URL("../../../db/migrations/0022_operator_mailbox_proof.sql", import.meta.url), "utf8");
    const updates = MIGRATION.split("--> statement-breakpoint").filter((s) => /^\s*(--[^\n]*\n\s*)*UPDATE/.test(s));
    expect(updates).toHaveLength(3);
    await h.service.db.update(users).set({ passwordUnproven: false }).where(eq(users.workspaceId, SYSTEM_WORKSPACE_ID));
    const root = await operatorId(h, "root@operators.test");
    const tenant = await operatorId(h, "owner-a@victim.test");
    const tenantSession = (await consoleSignIn(h, "owner-a@victim.test")).token;
    const rootSession = (await consoleSignIn(h, "root@operators.test")).token;
    for (const statement of updates) await h.service.db.execute(sql.raw(statement));
    const rows = await h.service.db.select({ id: users.id, unproven: users.passwordUnproven, hash: users.passwordHash }).from(users).where(eq(users.workspaceId, SYSTEM_WORKSPACE_ID));
    expect(rows.find((r) => r.id === root)!.unproven).toBe(false);
    expect(rows.find((r) => r.id === tenant)!.unproven).toBe(true);
    expect(rows.filter((r) => r.hash === null).every((r) => !r.unproven)).toBe(true);
    await expect(requireOperator(h.service, tenantSession)).rejects.toMatchObject({ code: "unauthenticated" });
    expect((await requireOperator(h.service, rootSession)).userId).toBe(root);
  });
});
