/**
 * Operators of a workspace (owners manage them). Operators are users of the system workspace; a
 * membership gives one a role in one workspace. An owner of A changes A's memberships: invites
 * (lib/operators/invitations.ts), re-roles and removes A's operators. An operator account itself is
 * installation-wide, so only its owner sets its credentials, and only installation operators
 * (lib/operators/installation.ts) disable or enable it. Nothing here tells an owner which other
 * workspaces an operator belongs to.
 */
import { and, asc, count, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { operatorMemberships, users } from "../../db/schema";
import { id } from "../forms/fields";
import type { Service } from "../service";
import { defineOperation, fieldError, formError, operatorRoles, type OperationContext, type OperatorRole } from "../surfaces/operation";
import { isInstallationOperator } from "./installation";
import { SYSTEM_WORKSPACE_ID } from "./system";

/** Membership changes of one workspace (invitations made and accepted, roles changed, operators removed) run one at a time. */
export const lockOperators = (db: Database, workspaceId: string) => db.execute(sql`select pg_advisory_xact_lock(hashtext(${`latchkey:operators:${workspaceId}`}))`);

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

/** The role field of the console's forms (inviting, re-roling). */
export const role = z.enum(operatorRoles, { error: "Choose owner, admin or viewer" });

async function ownerCount(ctx: OperationContext): Promise<number> {
  const [{ n }] = await ctx.db
    .select({ n: count() })
    .from(operatorMemberships)
    .where(and(eq(operatorMemberships.workspaceId, ctx.access.workspace.id), eq(operatorMemberships.role, "owner")));
  return Number(n);
}

async function membership(ctx: OperationContext, membershipId: string) {
  // Membership changes of one workspace run one at a time, so two cannot remove the last owner together.
  await lockOperators(ctx.db, ctx.access.workspace.id);
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
