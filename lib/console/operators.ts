/**
 * Operators of a workspace (owners manage them). Operators are users of the system workspace; a
 * membership gives one a role in one workspace. An owner of A can add, re-role and remove A's
 * operators, but can change an operator's account (disable, password) only when every workspace
 * that operator belongs to is owned by them too: otherwise owning A would reach into B.
 */
import { and, asc, count, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { operatorMemberships, users, workspaces } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { hashPassword, PASSWORD_MAX_LENGTH } from "../authn/password";
import { newId } from "../crypto";
import type { Service } from "../service";
import { operatorRoles, type OperatorRole } from "./authz";
import { email, id, optionalText } from "./forms";
import { defineOperation, fieldError, formError, type OperationContext } from "./operation";
import { OPERATOR_PASSWORD_MIN_LENGTH } from "./setup";
import { SYSTEM_WORKSPACE_ID } from "./system";

export interface OperatorInfo {
  membershipId: string;
  userId: string;
  email: string;
  name: string | null;
  status: "active" | "disabled";
  role: OperatorRole;
  createdAt: Date;
  /** Whether the viewing operator may change this operator's account (status, password). */
  accountManageable: boolean;
}

async function membershipsOf(db: Database, userId: string) {
  return db.select({ workspaceId: operatorMemberships.workspaceId, role: operatorMemberships.role }).from(operatorMemberships).where(eq(operatorMemberships.operatorUserId, userId));
}

/** Every workspace of `target` is owned by `actor` (and they are different people). */
async function canManageAccount(db: Database, actorId: string, targetId: string): Promise<boolean> {
  if (actorId === targetId) return false;
  const [mine, theirs] = await Promise.all([membershipsOf(db, actorId), membershipsOf(db, targetId)]);
  const owned = new Set(mine.filter((m) => m.role === "owner").map((m) => m.workspaceId));
  return theirs.every((m) => owned.has(m.workspaceId));
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
  return Promise.all(rows.map(async (r) => ({ ...r, accountManageable: await canManageAccount(service.db, actorId, r.userId) })));
}

const role = z.enum(operatorRoles, { error: "Choose owner, admin or viewer" });
const operatorPassword = z.preprocess(
  (v) => (v === "" ? undefined : v),
  z
    .string()
    .min(OPERATOR_PASSWORD_MIN_LENGTH, `Use at least ${OPERATOR_PASSWORD_MIN_LENGTH} characters`)
    .max(PASSWORD_MAX_LENGTH, `Use at most ${PASSWORD_MAX_LENGTH} characters`)
    .optional(),
);

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

/**
 * Gives an operator a role in this workspace; creates the operator (a user of the system
 * workspace, with the given initial password) when no operator has this email yet.
 */
export const addOperator = defineOperation({
  name: "operator.added",
  role: "owner",
  input: z.object({ email: email(), name: optionalText(200), password: operatorPassword, role }),
  async prepare(input) {
    return { passwordHash: input.password ? await hashPassword(input.password) : null };
  },
  async run(ctx, input, { passwordHash }) {
    const normalized = input.email.toLowerCase();
    let [user] = await ctx.db
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.emailNormalized, normalized)))
      .limit(1);
    const created = !user;
    if (!user) {
      if (!passwordHash) throw fieldError("password", "Set an initial password for a new operator");
      user = { id: newId() };
      await ctx.db.insert(users).values({
        id: user.id,
        workspaceId: SYSTEM_WORKSPACE_ID,
        email: input.email,
        emailNormalized: normalized,
        emailVerified: true,
        name: input.name ?? null,
        passwordHash,
        status: "active",
        createdAt: ctx.now,
        updatedAt: ctx.now,
      });
    }
    const inserted = await ctx.db
      .insert(operatorMemberships)
      .values({ id: newId(), operatorUserId: user.id, workspaceId: ctx.access.workspace.id, role: input.role, createdAt: ctx.now })
      .onConflictDoNothing()
      .returning({ id: operatorMemberships.id });
    if (inserted.length === 0) throw fieldError("email", "This operator is already a member of this workspace");
    return { result: { created }, audit: { target: input.email, data: { operator_user_id: user.id, role: input.role, created } } };
  },
});

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
  if (!(await canManageAccount(ctx.db, ctx.access.operator.userId, userId))) {
    throw formError(
      userId === ctx.access.operator.userId
        ? "You cannot change your own operator account here"
        : "This operator also belongs to workspaces you do not own; only an owner of all of them can change the account",
    );
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

export const setOperatorPassword = defineOperation({
  name: "operator.password_set",
  role: "owner",
  input: z.object({
    operator_user_id: id("operator"),
    password: z
      .string()
      .min(OPERATOR_PASSWORD_MIN_LENGTH, `Use at least ${OPERATOR_PASSWORD_MIN_LENGTH} characters`)
      .max(PASSWORD_MAX_LENGTH, `Use at most ${PASSWORD_MAX_LENGTH} characters`),
  }),
  async prepare(input) {
    return { passwordHash: await hashPassword(input.password) };
  },
  async run(ctx, input, { passwordHash }) {
    const target = await manageableTarget(ctx, input.operator_user_id);
    await ctx.db
      .update(users)
      .set({ passwordHash, updatedAt: ctx.now })
      .where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.id, target.userId)));
    return { result: null, audit: { target: target.email, data: { operator_user_id: target.userId } } };
  },
});

/** Why `latchkey operator grant` refused (the CLI prints the message, exit 1). */
export class OperatorGrantError extends Error {}

/**
 * Gives an existing operator a role in a workspace, or changes it (the CLI's `operator grant`): how
 * a workspace created by `workspace import` after setup gets its operators, since the console
 * lists only workspaces its operator belongs to. Audited in that workspace, actor the CLI.
 */
export async function grantOperatorRole(
  db: Database,
  input: { workspaceId: string; email: string; role: string; now: Date },
): Promise<{ changed: boolean; previous: OperatorRole | null }> {
  if (!(operatorRoles as readonly string[]).includes(input.role)) throw new OperatorGrantError(`Unknown role "${input.role}": use ${operatorRoles.join(", ")}.`);
  const role = input.role as OperatorRole;
  if (input.workspaceId === SYSTEM_WORKSPACE_ID) throw new OperatorGrantError("The system workspace has no operators of its own.");
  const [workspace] = await db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, input.workspaceId)).limit(1);
  if (!workspace) throw new OperatorGrantError(`No workspace "${input.workspaceId}".`);
  const [operator] = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.emailNormalized, input.email.trim().toLowerCase())))
    .limit(1);
  if (!operator) throw new OperatorGrantError(`No operator "${input.email}": the first operator is created at setup, others in the console (Operators).`);
  return db.transaction(async (tx) => {
    const [current] = await tx
      .select({ id: operatorMemberships.id, role: operatorMemberships.role })
      .from(operatorMemberships)
      .where(and(eq(operatorMemberships.workspaceId, input.workspaceId), eq(operatorMemberships.operatorUserId, operator.id)))
      .limit(1);
    if (current?.role === role) return { changed: false, previous: role };
    if (current) await tx.update(operatorMemberships).set({ role }).where(eq(operatorMemberships.id, current.id));
    else await tx.insert(operatorMemberships).values({ id: newId(), operatorUserId: operator.id, workspaceId: input.workspaceId, role, createdAt: input.now });
    await recordAudit(tx, {
      workspaceId: input.workspaceId,
      type: "operator.granted",
      actor: null,
      subject: input.email.trim().toLowerCase(),
      data: { via: "cli", role, previous_role: current?.role ?? null },
      at: input.now,
    });
    return { changed: true, previous: current?.role ?? null };
  });
}
