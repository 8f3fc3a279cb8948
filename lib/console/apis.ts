/** APIs (resource servers): audience, name, permissions. Permission changes reuse lib/authz/model.ts. */
import { and, count, eq, gt, isNull } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { accessTokens, apiGrants, apis, grants } from "../../db/schema";
import { setApiPermissions } from "../authz/model";
import { newId } from "../crypto";
import { isIdentityScope } from "../oauth/scopes";
import { audienceProblem } from "../uris";
import { confirmField, requireConfirmation } from "./confirmation";
import { id, text, words } from "./forms";
import { ConsoleInputError, defineOperation, fieldError, formError } from "./operation";

const PERMISSION = /^[A-Za-z0-9:._-]{1,64}$/;

function checkPermissionNames(list: string[]): void {
  const seen = new Set<string>();
  for (const p of list) {
    if (!PERMISSION.test(p)) throw new ConsoleInputError({ permissions: `${p} is not a valid permission (1–64 of A–Z a–z 0–9 : . _ -)` });
    if (isIdentityScope(p)) throw new ConsoleInputError({ permissions: `${p} is an identity scope, not a permission` });
    if (seen.has(p)) throw new ConsoleInputError({ permissions: `${p} is listed twice` });
    seen.add(p);
  }
}

const audience = z
  .string({ error: "Enter an audience" })
  .trim()
  .superRefine((value, ctx) => {
    const problem = audienceProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: `The audience ${problem}` });
  });

export const createApi = defineOperation({
  name: "api.created",
  role: "admin",
  input: z.object({ audience, name: text("a name"), permissions: words(1000) }),
  async run(ctx, input) {
    checkPermissionNames(input.permissions);
    const inserted = await ctx.db
      .insert(apis)
      .values({
        id: newId(),
        workspaceId: ctx.access.workspace.id,
        audience: input.audience,
        name: input.name,
        active: true,
        permissions: input.permissions,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
      .onConflictDoNothing()
      .returning({ id: apis.id });
    if (inserted.length === 0) throw fieldError("audience", "An API with this audience already exists");
    return { result: { id: inserted[0].id }, audit: { target: input.audience, data: { name: input.name, permissions: input.permissions } } };
  },
});

export const updateApi = defineOperation({
  name: "api.updated",
  role: "admin",
  input: z.object({ api_id: id("API"), name: text("a name"), permissions: words(1000) }),
  async run(ctx, input) {
    checkPermissionNames(input.permissions);
    const wid = ctx.access.workspace.id;
    const [api] = await ctx.db.select().from(apis).where(and(eq(apis.workspaceId, wid), eq(apis.id, input.api_id))).limit(1);
    if (!api) throw formError("This API no longer exists");
    await ctx.db.update(apis).set({ name: input.name, updatedAt: ctx.now }).where(eq(apis.id, api.id));
    const removed = api.permissions.filter((p) => !input.permissions.includes(p));
    if (JSON.stringify(api.permissions) !== JSON.stringify(input.permissions)) {
      // Dropping a permission drops it from every grant and role of the API too.
      await setApiPermissions(ctx.db, { workspaceId: wid, clock: ctx.service.clock, actor: ctx.access.operator.userId, audience: api.audience, permissions: input.permissions });
    }
    if (api.name === input.name && removed.length === 0 && JSON.stringify(api.permissions) === JSON.stringify(input.permissions)) return { result: { removed }, audit: null };
    return { result: { removed }, audit: { target: api.audience, data: { name: input.name, previous_name: api.name, permissions: input.permissions, removed } } };
  },
});

/**
 * Activates or deactivates an API. Tokens for a deactivated API fail every check (the `api` link
 * of lib/authority) and it cannot be requested; nothing is deleted, so they pass again if it is
 * activated before they expire. Deactivating is confirmed by typing the audience.
 */
export const setApiActive = defineOperation({
  name: "api.status_changed",
  role: "admin",
  input: z.object({ api_id: id("API"), active: z.enum(["true", "false"]).transform((v) => v === "true"), confirm: confirmField() }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [api] = await ctx.db.select().from(apis).where(and(eq(apis.workspaceId, wid), eq(apis.id, input.api_id))).limit(1);
    if (!api) throw formError("This API no longer exists");
    if (!input.active) requireConfirmation(input.confirm, api.audience, "the audience");
    if (api.active === input.active) return { result: { active: input.active }, audit: null };
    await ctx.db.update(apis).set({ active: input.active, updatedAt: ctx.now }).where(eq(apis.id, api.id));
    return { result: { active: input.active }, audit: { target: api.audience, data: { active: input.active } } };
  },
});

/** What deleting an API ends, counted for its confirmation and its audit event. */
export async function apiFootprint(db: Database, workspaceId: string, apiId: string, now: Date): Promise<{ applications: number; grants: number; accessTokens: number }> {
  const [a] = await db.select({ n: count() }).from(apiGrants).where(and(eq(apiGrants.workspaceId, workspaceId), eq(apiGrants.apiId, apiId)));
  const [g] = await db.select({ n: count() }).from(grants).where(and(eq(grants.workspaceId, workspaceId), eq(grants.apiId, apiId), isNull(grants.revokedAt)));
  const [t] = await db
    .select({ n: count() })
    .from(accessTokens)
    .where(and(eq(accessTokens.workspaceId, workspaceId), eq(accessTokens.apiId, apiId), isNull(accessTokens.revokedAt), gt(accessTokens.expiresAt, now)));
  return { applications: Number(a?.n ?? 0), grants: Number(g?.n ?? 0), accessTokens: Number(t?.n ?? 0) };
}

/**
 * Deletes an API for good: applications' access to it, roles' permissions on it and every user
 * grant for it (with its refresh tokens) go by foreign-key cascade; access tokens for it, which
 * have no foreign keys, are deleted here. Confirmed by typing the audience.
 */
export const deleteApi = defineOperation({
  name: "api.deleted",
  role: "admin",
  input: z.object({ api_id: id("API"), confirm: confirmField() }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [api] = await ctx.db.select().from(apis).where(and(eq(apis.workspaceId, wid), eq(apis.id, input.api_id))).for("update");
    if (!api) throw formError("This API no longer exists");
    requireConfirmation(input.confirm, api.audience, "the audience");
    const ended = await apiFootprint(ctx.db, wid, api.id, ctx.now);
    await ctx.db.delete(accessTokens).where(and(eq(accessTokens.workspaceId, wid), eq(accessTokens.apiId, api.id)));
    await ctx.db.delete(apis).where(eq(apis.id, api.id));
    return {
      result: { deleted: api.audience },
      audit: { target: api.audience, data: { name: api.name, applications: ended.applications, grants_ended: ended.grants, access_tokens_ended: ended.accessTokens } },
    };
  },
});

export async function getApi(db: import("../../db/client").Database, workspaceId: string, apiId: string) {
  const [row] = await db.select().from(apis).where(and(eq(apis.workspaceId, workspaceId), eq(apis.id, apiId))).limit(1);
  return row ?? null;
}
