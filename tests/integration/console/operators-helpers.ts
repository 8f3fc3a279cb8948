/**
 * The operators' test setup shared by invitations.test.ts and operator-mailbox.test.ts: a console
 * harness whose system workspace mails to the development outbox (so invitations and codes are
 * readable), two workspaces and the installation operator; inviting through the console's
 * operation; reading the operators' mail; accepting as the signed-in operator as the invitation
 * page does.
 */
import { expect } from "vitest";
import { listOutbox } from "../../../lib/authn/email/outbox";
import { mailSettled } from "../../../lib/authn/email/transport";
import { requireOperator } from "../../../lib/console/authz";
import { ensureSystemWorkspace, SYSTEM_WORKSPACE_ID, SYSTEM_WORKSPACE_NAME } from "../../../lib/console/system";
import { acceptInvitationAsOperator as acceptAs, type InvitationCreated } from "../../../lib/operators/invitations";
import { seed, type Harness } from "../../helpers/harness";
import { createConsoleHarness, createOperator, runRegistered } from "../console-helpers";

/** A console harness mailing through the outbox, workspaces `a` and `b`, and root@operators.test, the installation operator and owner of both. */
export async function operatorsHarness(a: string, b: string): Promise<Harness> {
  const base = await createConsoleHarness();
  // The development outbox, so mail is readable here (it is the system workspace's own).
  const h = { ...base, service: { ...base.service, config: { ...base.service.config, mail: { transport: "outbox" as const, from: "Latchkey <no-reply@auth.example.test>" } } } };
  await ensureSystemWorkspace(h.service);
  await seed(h, { id: a, name: "Workspace A" });
  await seed(h, { id: b, name: "Workspace B" });
  await createOperator(h, "root@operators.test", { [SYSTEM_WORKSPACE_ID]: "owner", [a]: "owner", [b]: "owner" });
  return h;
}

/** Invites `email` through the console's operation as the operator of console session `token`; the link's token beside what the inviter is shown. */
export async function invite(h: Harness, token: string, workspaceId: string, email: string, role = "admin", extra: Record<string, unknown> = {}): Promise<InvitationCreated & { token: string }> {
  const out = await runRegistered(h, token, workspaceId, "inviteOperator", { email, role, ...extra });
  if (!out.ok) throw new Error(JSON.stringify(out));
  const created = out.result as InvitationCreated;
  return { ...created, token: new URL(created.url).searchParams.get("token")! };
}

/** The system workspace's mail to `email`, newest first. */
export async function operatorMailTo(h: Harness, email: string) {
  await mailSettled();
  return listOutbox({ service: h.service, workspace: { id: SYSTEM_WORKSPACE_ID, name: SYSTEM_WORKSPACE_NAME } }, { recipient: email });
}

export const problem = (promise: Promise<unknown>, code: string) => expect(promise).rejects.toMatchObject({ name: "InvitationError", code });

/** Accepts as the operator signed in to the console (session `consoleToken`), as the invitation page's action does: no live session, ConsoleAccessError("unauthenticated"). */
export async function acceptInvitationAsOperator(service: Harness["service"], token: string, consoleToken: string | null | undefined, meta: { ip?: string | null } = {}) {
  return acceptAs(service, token, await requireOperator(service, consoleToken), meta);
}
