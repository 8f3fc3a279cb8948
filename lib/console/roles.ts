/** Roles and the permissions they grant, per API. Permission changes reuse lib/authz/model.ts. */
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { roles } from "../../db/schema";
import { setRolePermissions } from "../authz/model";
import { newId } from "../crypto";
import { checked, id, optionalText } from "./forms";
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

export const updateRole = defineOperation({
  name: "role.updated",
  role: "admin",
  input: z.object({ role_id: id("role"), description: optionalText(1000) }),
  async run(ctx, input) {
    const updated = await ctx.db
      .update(roles)
      .set({ description: input.description ?? null, updatedAt: ctx.now })
      .where(and(eq(roles.workspaceId, ctx.access.workspace.id), eq(roles.id, input.role_id)))
      .returning({ name: roles.name });
    if (updated.length === 0) throw formError("This role no longer exists");
    return { result: null, audit: { target: updated[0].name, data: { description: input.description ?? null } } };
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

/** Deletes a role; every user loses it at once (the permission check joins user_roles). */
export const deleteRole = defineOperation({
  name: "role.deleted",
  role: "admin",
  input: z.object({ role_id: id("role") }),
  async run(ctx, input) {
    const deleted = await ctx.db
      .delete(roles)
      .where(and(eq(roles.workspaceId, ctx.access.workspace.id), eq(roles.id, input.role_id)))
      .returning({ name: roles.name });
    if (deleted.length === 0) throw formError("This role no longer exists");
    return { result: null, audit: { target: deleted[0].name } };
  },
});
