/**
 * Operators of a workspace (owners manage them). Operators are users of the system workspace; a
 * membership gives one a role in one workspace. An owner of A changes A's memberships: invites
 * (lib/console/invitations.ts), re-roles and removes A's operators. An operator account itself is
 * installation-wide, so only its owner sets its credentials, and only installation operators
 * (lib/console/installation.ts) disable or enable it. Nothing here tells an owner which other
 * workspaces an operator belongs to.
 */
import { and, asc, count, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { operatorMemberships, users, workspaces } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { parseEmail } from "../authn/email-address";
import { newId } from "../crypto";
import type { Service } from "../service";
import { operatorRoles, type OperatorRole } from "./authz";
import { id } from "./forms";
import { isInstallationOperator } from "./installation";
import { CodedError } from "../coded-error";
import { defineOperation, fieldError, formError, type OperationContext } from "./operation";
import { createInvitation } from "./invitations";
import { SYSTEM_WORKSPACE_ID } from "./system";

export interface OperatorInfo {
  membershipId: string;
  userId: string;
  email: string;
  name: string | null;
  status: "active" | "disabled";
  role: OperatorRole;
  createdAt: Date;
  /** Whether the viewing operator may disable or enable this operator's account (installation operators, not their own). */
  accountManageable: boolean;
}

export async function listOperators(service: Service, workspaceId: string, actorId: string): Promise<OperatorInfo[]> {
  const rows = await service.db
    .select({
      membershipId: operatorMemberships.id,
      userId: users.id,
      email: users.email,
      name: users.name,
      status: users.status,
      role: operatorMemberships.role,
      createdAt: operatorMemberships.createdAt,
    })
    .from(operatorMemberships)
    .innerJoin(users, eq(users.id, operatorMemberships.operatorUserId))
    .where(eq(operatorMemberships.workspaceId, workspaceId))
    .orderBy(asc(users.emailNormalized));
  const installation = await isInstallationOperator(service.db, actorId);
  return rows.map((r) => ({ ...r, accountManageable: installation && r.userId !== actorId }));
}

const role = z.enum(operatorRoles, { error: "Choose owner, admin or viewer" });
async function ownerCount(ctx: OperationContext): Promise<number> {
  const [{ n }] = await ctx.db
    .select({ n: count() })
    .from(operatorMemberships)
    .where(and(eq(operatorMemberships.workspaceId, ctx.access.workspace.id), eq(operatorMemberships.role, "owner")));
  return Number(n);
}

async function membership(ctx: OperationContext, membershipId: string) {
  // Membership changes of one workspace run one at a time, so two cannot remove the last owner together.
  await ctx.db.execute(sql`select pg_advisory_xact_lock(hashtext(${`latchkey:operators:${ctx.access.workspace.id}`}))`);
  const [row] = await ctx.db
    .select({ id: operatorMemberships.id, role: operatorMemberships.role, userId: operatorMemberships.operatorUserId, email: users.email })
    .from(operatorMemberships)
    .innerJoin(users, eq(users.id, operatorMemberships.operatorUserId))
    .where(and(eq(operatorMemberships.workspaceId, ctx.access.workspace.id), eq(operatorMemberships.id, membershipId)))
    .limit(1);
  if (!row) throw formError("This operator is no longer a member");
  return row;
}

export const changeOperatorRole = defineOperation({
  name: "operator.role_changed",
  role: "owner",
  input: z.object({ membership_id: id("membership"), role }),
  async run(ctx, input) {
    const m = await membership(ctx, input.membership_id);
    if (m.role === "owner" && input.role !== "owner" && (await ownerCount(ctx)) <= 1) {
      throw fieldError("role", "A workspace keeps at least one owner");
    }
    await ctx.db.update(operatorMemberships).set({ role: input.role }).where(eq(operatorMemberships.id, m.id));
    return { result: null, audit: { target: m.email, data: { operator_user_id: m.userId, from: m.role, to: input.role } } };
  },
});

export const removeOperator = defineOperation({
  name: "operator.removed",
  role: "owner",
  input: z.object({ membership_id: id("membership") }),
  async run(ctx, input) {
    const m = await membership(ctx, input.membership_id);
    if (m.role === "owner" && (await ownerCount(ctx)) <= 1) throw formError("A workspace keeps at least one owner");
    await ctx.db.delete(operatorMemberships).where(eq(operatorMemberships.id, m.id));
    return { result: null, audit: { target: m.email, data: { operator_user_id: m.userId, role: m.role } } };
  },
});

async function manageableTarget(ctx: OperationContext, userId: string) {
  const [member] = await ctx.db
    .select({ userId: operatorMemberships.operatorUserId, email: users.email })
    .from(operatorMemberships)
    .innerJoin(users, eq(users.id, operatorMemberships.operatorUserId))
    .where(and(eq(operatorMemberships.workspaceId, ctx.access.workspace.id), eq(operatorMemberships.operatorUserId, userId)))
    .limit(1);
  if (!member) throw formError("This operator is no longer a member");
  if (userId === ctx.access.operator.userId) throw formError("You cannot change your own operator account here");
  // An account is installation-wide: a workspace owner is a tenant and may only remove it from their workspace.
  if (!(await isInstallationOperator(ctx.db, ctx.access.operator.userId))) {
    throw formError("Only installation operators can disable or enable operator accounts; remove the operator from this workspace instead");
  }
  return member;
}

/** Disables or re-enables an operator account: a disabled operator's console sessions end at once. */
export const setOperatorStatus = defineOperation({
  name: "operator.status_changed",
  role: "owner",
  input: z.object({ operator_user_id: id("operator"), status: z.enum(["active", "disabled"]) }),
  async run(ctx, input) {
    const target = await manageableTarget(ctx, input.operator_user_id);
    await ctx.db
      .update(users)
      .set({ status: input.status, updatedAt: ctx.now })
      .where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.id, target.userId)));
    return { result: null, audit: { target: target.email, data: { operator_user_id: target.userId, status: input.status } } };
  },
});

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
  // Owning the system workspace is what makes an installation operator (lib/console/installation.ts); no other role there means anything.
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
