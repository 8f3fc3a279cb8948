/**
 * Operator invitations (lib/operators/invitations.ts): no operator ever chooses another operator's
 * credential. An owner invites; the invitee proves the address with a code sent to it, then sets
 * their own password, or accepts with the account they have; the link is hashed at rest, expires,
 * is used once, and goes to the invitee's email. Workspaces are created by installation operators
 * only. (The whole squatting sequence: operator-mailbox.test.ts.)
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, operatorInvitations, operatorMemberships, users } from "../../../db/schema";
import { listOutbox } from "../../../lib/authn/email/outbox";
import { requireOperator, requireWorkspaceRole } from "../../../lib/console/authz";
import {
  acceptInvitationWithNewAccount as acceptWithProvenNewAccount,
  INVITATION_TTL_MS,
  InvitationError,
  proveInvitationMailbox,
  sendInvitationCode,
  viewInvitation,
  type AcceptInvitationInput,
  type InvitationCreated,
} from "../../../lib/operators/invitations";
import { CLIENT_ADDRESS_HEADER } from "../../../lib/http/client-address";
import { listOperators } from "../../../lib/operators/memberships";
import { SYSTEM_WORKSPACE_ID } from "../../../lib/console/system";
import { createWorkspace, listOperatorWorkspaces } from "../../../lib/console/workspaces";
import { MINUTE } from "../../../lib/clock";
import { sha256Hex } from "../../../lib/crypto";
import { PUBLIC_URL, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { consoleSignIn, createOperator, operatorId, runRegistered } from "../console-helpers";
import { acceptInvitationAsOperator, invite as inviteAs, operatorMailTo, operatorsHarness, problem } from "./operators-helpers";

let h: Harness;
const A = uniqueWorkspaceId("inv-a");
const B = uniqueWorkspaceId("inv-b");
let ownerA: string;
/** M: owner of workspace B only, a tenant. */
let mallory: string;
let installation: string;

const M_PASSWORD = "mallory knows this password";
const ALICE_PASSWORD = "alice chose this herself";
const A_PASSWORD = "workspace A chose this one";

/** Console sessions last 12 hours: after the clock jumps a week, everyone signs in again. */
async function signInAgain() {
  installation = (await consoleSignIn(h, "root@operators.test")).token;
  ownerA = (await consoleSignIn(h, "owner-a@victim.test")).token;
  mallory = (await consoleSignIn(h, "mallory@evil.test")).token;
}

beforeAll(async () => {
  // Invitations are "emailed" to the development outbox and readable here.
  h = await operatorsHarness(A, B);
  await createOperator(h, "owner-a@victim.test", { [A]: "owner" });
  await createOperator(h, "mallory@evil.test", { [B]: "owner" });
  await signInAgain();
});

const invite = (token: string, workspaceId: string, email: string, role = "admin", extra: Record<string, unknown> = {}) => inviteAs(h, token, workspaceId, email, role, extra);

let addressCounter = 0;
const request = () => new Request(`${PUBLIC_URL}/console/invitation`, { headers: { [CLIENT_ADDRESS_HEADER]: `203.0.113.${(addressCounter++ % 250) + 1}` } });

/**
 * The invitee's side: a code sent to the invited address, entered (the mailbox proven), then the
 * account created. Refusals before the proof (an invitation no longer pending) surface as they would.
 */
async function acceptInvitationWithNewAccount(service: Harness["service"], token: string, input: AcceptInvitationInput, meta: { ip?: string | null } = {}) {
  const row = await viewInvitation(service, token);
  if (row instanceof InvitationError) throw row;
  h.clock.advance(31_000);
  await sendInvitationCode(service, request(), token);
  const [message] = (await systemOutboxTo(row.email)).filter((m) => /code/i.test(m.subject));
  const code = message.text.match(/Your code is (\d{6})/)![1];
  const proof = await proveInvitationMailbox(service, request(), token, code);
  return acceptWithProvenNewAccount(service, token, proof, input, meta);
}

const systemOutboxTo = (email: string) => operatorMailTo(h, email);

describe("the takeover through a shared operator account fails", () => {
  it("the fallback link makes no account, and an operator of B is nothing in A until A's invitation is accepted", async () => {
    // M invites alice to B; the fallback link shown to M makes no account without the code sent to alice.
    const toB = await invite(mallory, B, "alice@victim.test", "viewer");
    expect(toB.url).toBe(`https://auth.example.test/console/invitation?token=${toB.token}`);
    await problem(acceptWithProvenNewAccount(h.service, toB.token, undefined, { name: "Alice?", password: M_PASSWORD }), "unproven");
    // Alice herself, with the code sent to her, makes the account (with her own password).
    await acceptInvitationWithNewAccount(h.service, toB.token, { name: "Alice", password: ALICE_PASSWORD });

    // A's owner invites alice to A. There is no password field any more: one given is not a credential.
    const toA = await invite(ownerA, A, "alice@victim.test", "admin", { password: A_PASSWORD });
    const [aliceRow] = await h.service.db.select().from(users).where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.emailNormalized, "alice@victim.test")));

    // The link went to alice's address through the system workspace, not to any tenant's outbox.
    const mail = await systemOutboxTo("alice@victim.test");
    expect(mail.map((m) => m.text).filter((t) => t.includes(toA.url))).toHaveLength(1);
    expect(mail.find((m) => m.text.includes(toA.url))!.subject).toBe("Invitation to administer Workspace A in Latchkey");
    for (const ws of [A, B]) {
      const tenantOutbox = await listOutbox({ service: h.service, workspace: { id: ws, name: ws } }, {});
      expect(tenantOutbox.some((m) => m.text.includes(toA.token))).toBe(false);
    }

    // Signed in as alice (B's operator): still no access to A.
    const asAlice = (await consoleSignIn(h, "alice@victim.test", ALICE_PASSWORD)).token;
    await expect(requireWorkspaceRole(h.service, asAlice, A, "viewer")).rejects.toMatchObject({ code: "not_found" });
    await expect(runRegistered(h, asAlice, A, "createRole", { name: "by-mallory" })).rejects.toMatchObject({ code: "not_found" });
    // B's link is used; any other is not valid.
    await problem(acceptInvitationAsOperator(h.service, toB.token, asAlice), "used");
    await problem(acceptInvitationAsOperator(h.service, "x".repeat(43), asAlice), "invalid");
    // A's link cannot make a new account (one exists), and the refusal leaves it pending; without a proof the page does not say an account exists.
    await problem(acceptInvitationWithNewAccount(h.service, toA.token, { name: "A's idea", password: A_PASSWORD }), "account_exists");
    expect(await viewInvitation(h.service, toA.token)).toMatchObject({ email: "alice@victim.test", proof: null });
    // A's chosen password was never stored: it is refused, alice's still works, the hash is untouched.
    await expect(consoleSignIn(h, "alice@victim.test", A_PASSWORD)).rejects.toThrow();
    const [after] = await h.service.db.select().from(users).where(eq(users.id, aliceRow.id));
    expect(after.passwordHash).toBe(aliceRow.passwordHash);
    await expect(requireWorkspaceRole(h.service, asAlice, A, "viewer")).rejects.toMatchObject({ code: "not_found" });
    // And the tenant M cannot create workspaces either.
    await expect(createWorkspace(h.service, mallory, { id: uniqueWorkspaceId("by-m"), name: "M's" })).rejects.toMatchObject({ code: "forbidden" });
  });
});

describe("accepting", () => {
  it("a new operator sets their own password from the emailed link and signs in to the workspace with the invited role", async () => {
    const sent = await invite(ownerA, A, "Bob@Fresh.test", "admin");
    expect(sent).toMatchObject({ email: "Bob@Fresh.test", role: "admin", emailed: true });
    const [message] = await systemOutboxTo("Bob@Fresh.test");
    const link = message.text.match(/https:\/\/\S+\/console\/invitation\?token=\S+/)![0];
    const token = new URL(link).searchParams.get("token")!;
    const view = await viewInvitation(h.service, token);
    expect(view).toEqual({ workspaceId: A, workspaceName: "Workspace A", email: "Bob@Fresh.test", role: "admin", expiresAt: expect.any(Date), proof: null });
    await problem(acceptInvitationAsOperator(h.service, token, ownerA), "wrong_operator");
    await expect(acceptInvitationWithNewAccount(h.service, token, { name: "Bob", password: "short" })).rejects.toThrow();
    const { userId } = await acceptInvitationWithNewAccount(h.service, token, { name: "Bob", password: "bob's own password" }, { ip: "192.0.2.5" });
    const bob = (await consoleSignIn(h, "bob@fresh.test", "bob's own password")).token;
    expect((await requireOperator(h.service, bob)).userId).toBe(userId);
    expect((await requireWorkspaceRole(h.service, bob, A, "admin")).role).toBe("admin");
    const events = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, A), eq(auditEvents.subject, "Bob@Fresh.test")));
    expect(events.map((e) => e.type).sort()).toEqual(["console.operator.invitation_accepted", "console.operator.invited"]);
    expect(events.find((e) => e.type === "console.operator.invitation_accepted")).toMatchObject({ actor: userId, ip: "192.0.2.5", data: { role: "admin", account: "created" } });
    const [row] = await h.service.db.select().from(operatorInvitations).where(eq(operatorInvitations.tokenHash, sha256Hex(token)));
    expect(row).toMatchObject({ acceptedBy: userId, acceptedAt: expect.any(Date) });
  });

  it("an existing operator accepts only signed in as the invited email, and the page shows nothing of their other workspaces", async () => {
    const sent = await invite(mallory, B, "bob@fresh.test", "viewer");
    const view = await viewInvitation(h.service, sent.token);
    expect(Object.keys(view).sort()).toEqual(["email", "expiresAt", "proof", "role", "workspaceId", "workspaceName"]);
    expect(view).toMatchObject({ workspaceId: B, proof: null });
    // Not signed in, or signed in as someone else: refused, and the invitation stays pending.
    await expect(acceptInvitationAsOperator(h.service, sent.token, null)).rejects.toMatchObject({ code: "unauthenticated" });
    await problem(acceptInvitationAsOperator(h.service, sent.token, ownerA), "wrong_operator");
    await problem(acceptInvitationWithNewAccount(h.service, sent.token, { name: "Someone", password: "someone else's password" }), "account_exists");
    const bob = (await consoleSignIn(h, "bob@fresh.test", "bob's own password")).token;
    expect(await acceptInvitationAsOperator(h.service, sent.token, bob)).toEqual({ workspaceId: B });
    expect((await requireWorkspaceRole(h.service, bob, B, "viewer")).role).toBe("viewer");
    // B's owner sees B's operators; nothing says bob is also in A (only bob's own list does).
    const listed = await listOperators(h.service, B, await operatorId(h, "mallory@evil.test"));
    expect(listed.find((o) => o.email.toLowerCase() === "bob@fresh.test")).toMatchObject({ role: "viewer", accountManageable: false });
    expect(JSON.stringify(listed)).not.toContain(A);
    expect((await listOperatorWorkspaces(h.service, await operatorId(h, "bob@fresh.test"))).map((w) => w.id).sort()).toEqual([A, B].sort());
  });

  it("inviting answers the same whether an account exists; re-inviting replaces the earlier link", async () => {
    const existing = await invite(ownerA, A, "mallory@evil.test", "viewer");
    const fresh = await invite(ownerA, A, "nobody-yet@fresh.test", "viewer");
    const shape = (r: InvitationCreated) => ({ ...r, email: "x", url: "x", token: "x", expiresAt: r.expiresAt.getTime() });
    expect(shape(existing)).toEqual(shape(fresh));
    const [e1, e2] = await Promise.all(
      ["mallory@evil.test", "nobody-yet@fresh.test"].map(async (s) => (await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, A), eq(auditEvents.subject, s)))).at(-1)!),
    );
    expect(Object.keys(e1.data).sort()).toEqual(Object.keys(e2.data).sort());

    const again = await invite(ownerA, A, "Nobody-Yet@fresh.test", "owner");
    await problem(acceptInvitationWithNewAccount(h.service, fresh.token, { name: "N", password: "nobody's password" }), "revoked");
    expect(await viewInvitation(h.service, again.token)).toMatchObject({ role: "owner" });
    const [event] = (await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, A), eq(auditEvents.subject, "Nobody-Yet@fresh.test"))));
    expect((event.data as { replaced: string[] }).replaced).toHaveLength(1);
    // A member of this workspace is not invited twice (the owner sees the member list anyway).
    expect(await runRegistered(h, ownerA, A, "inviteOperator", { email: "bob@fresh.test", role: "viewer" })).toMatchObject({ ok: false, fieldErrors: { email: expect.stringContaining("already a member") } });
  });
});

describe("the link", () => {
  it("is valid for 7 days and not a moment longer", async () => {
    expect(INVITATION_TTL_MS).toBe(7 * 24 * 60 * MINUTE);
    const sent = await invite(ownerA, A, "late@fresh.test", "viewer");
    expect(sent.expiresAt.getTime() - h.clock.now().getTime()).toBe(INVITATION_TTL_MS);
    h.clock.advance(INVITATION_TTL_MS - MINUTE);
    expect(await viewInvitation(h.service, sent.token)).toMatchObject({ email: "late@fresh.test" });
    h.clock.advance(MINUTE);
    expect(await viewInvitation(h.service, sent.token)).toMatchObject({ code: "expired" });
    await problem(acceptInvitationWithNewAccount(h.service, sent.token, { name: "Late", password: "a late password" }), "expired");
    expect(await h.service.db.select().from(users).where(eq(users.emailNormalized, "late@fresh.test"))).toHaveLength(0);
    await signInAgain();
  });

  it("is refused once withdrawn, and after it was used", async () => {
    const sent = await invite(ownerA, A, "withdrawn@fresh.test", "viewer");
    const [row] = await h.service.db.select().from(operatorInvitations).where(eq(operatorInvitations.tokenHash, sha256Hex(sent.token)));
    // Another workspace's owner cannot withdraw it.
    expect(await runRegistered(h, mallory, B, "revokeInvitation", { invitation_id: row.id })).toMatchObject({ ok: false, formError: expect.stringContaining("no longer pending") });
    expect(await runRegistered(h, ownerA, A, "revokeInvitation", { invitation_id: row.id })).toMatchObject({ ok: true });
    expect(await viewInvitation(h.service, sent.token)).toMatchObject({ code: "revoked" });
    await problem(acceptInvitationWithNewAccount(h.service, sent.token, { name: "W", password: "withdrawn password" }), "revoked");

    const used = await invite(ownerA, A, "once@fresh.test", "viewer");
    await acceptInvitationWithNewAccount(h.service, used.token, { name: "Once", password: "used once password" });
    await problem(acceptInvitationWithNewAccount(h.service, used.token, { name: "Twice", password: "used twice password" }), "used");
    const once = (await consoleSignIn(h, "once@fresh.test", "used once password")).token;
    await problem(acceptInvitationAsOperator(h.service, used.token, once), "used");
  });

  it("is stored only as its SHA-256", async () => {
    const sent = await invite(ownerA, A, "hashed@fresh.test", "viewer");
    const rows = await h.service.db.select().from(operatorInvitations).where(eq(operatorInvitations.emailNormalized, "hashed@fresh.test"));
    expect(rows).toHaveLength(1);
    expect(rows[0].tokenHash).toBe(sha256Hex(sent.token));
    expect(JSON.stringify(rows[0])).not.toContain(sent.token);
  });

  it("accepted in parallel, by new accounts or by the signed-in operator, makes exactly one membership", async () => {
    const sent = await invite(ownerA, A, "racer@fresh.test", "viewer");
    h.clock.advance(31_000);
    await sendInvitationCode(h.service, request(), sent.token);
    const [message] = (await systemOutboxTo("racer@fresh.test")).filter((m) => /code/i.test(m.subject));
    const proof = await proveInvitationMailbox(h.service, request(), sent.token, message.text.match(/Your code is (\d{6})/)![1]);
    const results = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => acceptWithProvenNewAccount(h.service, sent.token, proof, { name: `Racer ${i}`, password: `racer password ${i}` })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(InvitationError);
    expect(await h.service.db.select().from(users).where(eq(users.emailNormalized, "racer@fresh.test"))).toHaveLength(1);

    const toB = await invite(mallory, B, "racer@fresh.test", "admin");
    const winner = results.findIndex((r) => r.status === "fulfilled");
    const racer = (await consoleSignIn(h, "racer@fresh.test", `racer password ${winner}`)).token;
    const accepts = await Promise.allSettled(Array.from({ length: 5 }, () => acceptInvitationAsOperator(h.service, toB.token, racer)));
    expect(accepts.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const memberships = await h.service.db.select().from(operatorMemberships).where(eq(operatorMemberships.operatorUserId, await operatorId(h, "racer@fresh.test")));
    expect(memberships.map((m) => m.workspaceId).sort()).toEqual([A, B].sort());
    const accepted = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, B), eq(auditEvents.type, "console.operator.invitation_accepted"), eq(auditEvents.subject, "racer@fresh.test")));
    expect(accepted).toHaveLength(1);
  });
});

describe("installation operators", () => {
  it("only they create workspaces and disable operator accounts; a system membership never shows the system workspace", async () => {
    await expect(createWorkspace(h.service, ownerA, { id: uniqueWorkspaceId("by-a"), name: "A's" })).rejects.toMatchObject({ code: "forbidden" });
    expect(await createWorkspace(h.service, installation, { id: uniqueWorkspaceId("by-root"), name: "Root's" })).toMatchObject({ ok: true });
    expect((await listOperatorWorkspaces(h.service, await operatorId(h, "root@operators.test"))).map((w) => w.id)).not.toContain(SYSTEM_WORKSPACE_ID);
    await expect(requireWorkspaceRole(h.service, installation, SYSTEM_WORKSPACE_ID, "viewer")).rejects.toMatchObject({ code: "not_found" });

    const once = await operatorId(h, "once@fresh.test");
    expect(await runRegistered(h, ownerA, A, "setOperatorStatus", { operator_user_id: once, status: "disabled" })).toMatchObject({ ok: false, formError: expect.stringContaining("Only installation operators") });
    expect((await listOperators(h.service, A, await operatorId(h, "owner-a@victim.test"))).some((o) => o.accountManageable)).toBe(false);
    const byRoot = await listOperators(h.service, A, await operatorId(h, "root@operators.test"));
    expect(byRoot.find((o) => o.email === "once@fresh.test")!.accountManageable).toBe(true);
    expect(byRoot.find((o) => o.email === "root@operators.test")!.accountManageable).toBe(false);
    expect(await runRegistered(h, installation, A, "setOperatorStatus", { operator_user_id: once, status: "disabled" })).toMatchObject({ ok: true });
  });
});
