/**
 * `latchkey operator grant`: gives an operator a role in a workspace from the command line, or
 * invites an address no proven operator account has (lib/operators/invitations.ts). The command
 * line only parses its arguments and prints what this module says.
 */
import { CodedError } from "../coded-error";
import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { operatorMemberships, users, workspaces } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { parseEmail } from "../authn/email-address";
import { newId } from "../crypto";
import { operatorRoles, type OperatorRole } from "../surfaces/operation";
import { createInvitation } from "./invitations";
import { SYSTEM_WORKSPACE_ID } from "./system";

/** The command's lines of `latchkey help`. */
export const OPERATOR_GRANT_USAGE = `  operator grant <workspace> <operator-email> <owner|admin|viewer>
                                               Give a console operator a role in a workspace
                                               (how an imported workspace appears in their console);
                                               "operator grant system <email> owner" makes them an
                                               installation operator (creates workspaces). An address
                                               no proven operator account has gets an invitation
                                               instead: its link is printed, and only a code sent to
                                               the address accepts it.
`;

/** Why `latchkey operator grant` refused (the CLI prints the message, exit 1). */
export class OperatorGrantError extends CodedError<"operator_grant_refused"> {
  constructor(message: string) {
    super("operator_grant_refused", message);
  }
}

/** What `operator grant` did: a role given or changed, or an invitation made (no proven account has the address). */
export type OperatorGrant =
  | { kind: "granted"; changed: boolean; previous: OperatorRole | null }
  | { kind: "invited"; url: string; expiresAt: Date };

/**
 * Gives an operator a role in a workspace, or changes it (the CLI's `operator grant`): how a
 * workspace created by `workspace import` after setup gets its operators, since the console lists
 * only workspaces its operator belongs to; and, as owner of `system`, how an operator becomes an
 * installation operator. Audited in that workspace, actor the CLI. Whoever runs the command line
 * has the database already, so this is no tenant choosing for another; but an address that no
 * proven account has (none, or one whose password was set before its mailbox was proven) gets an
 * invitation, not a membership: whoever proves the mailbox accepts it.
 */
export async function grantOperatorRole(
  db: Database,
  input: { workspaceId: string; email: string; role: string; now: Date; publicUrl: string },
): Promise<OperatorGrant> {
  if (!(operatorRoles as readonly string[]).includes(input.role)) throw new OperatorGrantError(`Unknown role "${input.role}": use ${operatorRoles.join(", ")}.`);
  const role = input.role as OperatorRole;
  // Owning the system workspace is what makes an installation operator (lib/operators/installation.ts); no other role there means anything.
  if (input.workspaceId === SYSTEM_WORKSPACE_ID && role !== "owner") throw new OperatorGrantError("In the system workspace the only role is owner: it makes an installation operator.");
  const [workspace] = await db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, input.workspaceId)).limit(1);
  if (!workspace) throw new OperatorGrantError(`No workspace "${input.workspaceId}".`);
  const parsed = parseEmail(input.email);
  if (!parsed) throw new OperatorGrantError(`"${input.email}" is not an email address.`);
  const { display: address, normalized } = parsed;
  const [operator] = await db
    .select({ id: users.id, unproven: users.passwordUnproven })
    .from(users)
    .where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.emailNormalized, normalized)))
    .limit(1);
  return db.transaction(async (tx) => {
    if (!operator || operator.unproven) {
      const invitation = await createInvitation(tx, { workspaceId: input.workspaceId, email: address, role, invitedBy: null, now: input.now, publicUrl: input.publicUrl });
      await recordAudit(tx, {
        workspaceId: input.workspaceId,
        type: "operator.invited",
        actor: null,
        subject: normalized,
        data: { via: "cli", role, invitation_id: invitation.invitationId },
        at: input.now,
      });
      return { kind: "invited" as const, url: invitation.url, expiresAt: invitation.expiresAt };
    }
    const [current] = await tx
      .select({ id: operatorMemberships.id, role: operatorMemberships.role })
      .from(operatorMemberships)
      .where(and(eq(operatorMemberships.workspaceId, input.workspaceId), eq(operatorMemberships.operatorUserId, operator.id)))
      .limit(1);
    if (current?.role === role) return { kind: "granted" as const, changed: false, previous: role };
    if (current) await tx.update(operatorMemberships).set({ role }).where(eq(operatorMemberships.id, current.id));
    else await tx.insert(operatorMemberships).values({ id: newId(), operatorUserId: operator.id, workspaceId: input.workspaceId, role, createdAt: input.now });
    await recordAudit(tx, {
      workspaceId: input.workspaceId,
      type: "operator.granted",
      actor: null,
      subject: normalized,
      data: { via: "cli", role, previous_role: current?.role ?? null },
      at: input.now,
    });
    return { kind: "granted" as const, changed: true, previous: current?.role ?? null };
  });
}

/** What the command prints for a grant's outcome (`email` and `role` as given on the command line). */
export function describeOperatorGrant(input: { workspaceId: string; email: string; role: string }, result: OperatorGrant): string[] {
  const { workspaceId, email, role } = input;
  if (result.kind === "invited") {
    const what = workspaceId === SYSTEM_WORKSPACE_ID ? "an installation operator" : `${role} of workspace ${workspaceId}`;
    return [
      `No operator account has proven ${email}: invited it to become ${what} instead.`,
      `Send this link to ${email} (valid until ${result.expiresAt.toISOString().slice(0, 16).replace("T", " ")} UTC); opening it sends a code to that address, and only with that code is it accepted:`,
      result.url,
    ];
  }
  if (workspaceId === SYSTEM_WORKSPACE_ID) return [result.changed ? `${email} is now an installation operator.` : `${email} is already an installation operator.`];
  return [result.changed ? `${email} is now ${role} of workspace ${workspaceId}${result.previous ? ` (was ${result.previous})` : ""}.` : `${email} is already ${role} of workspace ${workspaceId}.`];
}
