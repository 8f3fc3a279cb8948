/** Roles and the permissions they grant, per API. Permission changes reuse lib/authz/model.ts. */
import { and, count, eq, ne } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { roles, userRoles } from "../../db/schema";
import { setRolePermissions } from "../authz/model";
import { newId } from "../crypto";
import { checked, id, optionalText } from "./forms";
import { confirmField, requireConfirmation } from "./confirmation";
import { defineOperation, fieldError, formError } from "./operation";

const roleName = z
  .string({ error: "Enter a name" })
  .trim()
  .min(1, "Enter a name")
  .max(64, "Use at most 64 characters");

export const createRole = defineOperation({
  name: "role.created",
  role: "admin",
  input: z.object({ name: roleName, description: optionalText(1000) }),
  async run(ctx, input) {
    const inserted = await ctx.db
      .insert(roles)
      .values({ id: newId(), workspaceId: ctx.access.workspace.id, name: input.name, description: input.description ?? null, createdAt: ctx.now, updatedAt: ctx.now })
      .onConflictDoNothing()
      .returning({ id: roles.id });
    if (inserted.length === 0) throw fieldError("name", "A role with this name already exists");
    return { result: { id: inserted[0].id }, audit: { target: input.name, data: { description: input.description ?? null } } };
  },
});

/** Renames a role and sets its description; the name stays unique in the workspace. */
export const updateRole = defineOperation({
  name: "role.updated",
  role: "admin",
  input: z.object({ role_id: id("role"), name: roleName, description: optionalText(1000) }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [role] = await ctx.db.select().from(roles).where(and(eq(roles.workspaceId, wid), eq(roles.id, input.role_id))).for("update");
    if (!role) throw formError("This role no longer exists");
    const description = input.description ?? null;
    if (role.name === input.name && role.description === description) return { result: null, audit: null };
    if (role.name !== input.name) {
      const [taken] = await ctx.db.select({ id: roles.id }).from(roles).where(and(eq(roles.workspaceId, wid), eq(roles.name, input.name), ne(roles.id, role.id))).limit(1);
      if (taken) throw fieldError("name", "A role with this name already exists");
    }
    await ctx.db.update(roles).set({ name: input.name, description, updatedAt: ctx.now }).where(eq(roles.id, role.id));
    return {
      result: null,
      audit: { target: input.name, data: { ...(role.name !== input.name ? { previous_name: role.name } : {}), description } },
    };
  },
});

export const setRoleApiPermissions = defineOperation({
  name: "role.permissions_set",
  role: "admin",
  input: z.object({ role: id("role"), audience: id("API"), permissions: checked() }),
  async run(ctx, input) {
    await setRolePermissions(ctx.db, {
      workspaceId: ctx.access.workspace.id,
      clock: ctx.service.clock,
      actor: ctx.access.operator.userId,
      role: input.role,
      audience: input.audience,
      permissions: input.permissions,
    });
    return { result: null, audit: { target: input.role, data: { audience: input.audience, permissions: input.permissions } } };
  },
});

/** How many users hold the role (at workspace level or in an organization), for its delete confirmation. */
export async function roleHolders(db: Database, workspaceId: string, roleId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(userRoles).where(and(eq(userRoles.workspaceId, workspaceId), eq(userRoles.roleId, roleId)));
  return Number(row?.n ?? 0);
}

/**
 * Deletes a role; every user loses it at once: the permission check joins user_roles, so it
 * denies the role's permissions from the next request. Tokens already issued are not revoked
 * (their scope lists what was asked for), but no check allows on the deleted role. Confirmed by
 * typing the role's name.
 */
export const deleteRole = defineOperation({
  name: "role.deleted",
  role: "admin",
  input: z.object({ role_id: id("role"), confirm: confirmField() }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [role] = await ctx.db.select().from(roles).where(and(eq(roles.workspaceId, wid), eq(roles.id, input.role_id))).for("update");
    if (!role) throw formError("This role no longer exists");
    requireConfirmation(input.confirm, role.name, "the role's name");
    const holders = await roleHolders(ctx.db, wid, role.id);
    await ctx.db.delete(roles).where(eq(roles.id, role.id));
    return { result: null, audit: { target: role.name, data: { holders } } };
  },
});
