/** APIs (resource servers): audience, name, permissions. Permission changes reuse lib/authz/model.ts. */
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { apis } from "../../db/schema";
import { setApiPermissions } from "../authz/model";
import { newId } from "../crypto";
import { isIdentityScope } from "../oauth/scopes";
import { audienceProblem } from "../workspaces/uris";
import { checkbox, id, text, words } from "./forms";
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
  input: z.object({ api_id: id("API"), name: text("a name"), active: checkbox(), permissions: words(1000) }),
  async run(ctx, input) {
    checkPermissionNames(input.permissions);
    const wid = ctx.access.workspace.id;
    const [api] = await ctx.db.select().from(apis).where(and(eq(apis.workspaceId, wid), eq(apis.id, input.api_id))).limit(1);
    if (!api) throw formError("This API no longer exists");
    await ctx.db.update(apis).set({ name: input.name, active: input.active, updatedAt: ctx.now }).where(eq(apis.id, api.id));
    const removed = api.permissions.filter((p) => !input.permissions.includes(p));
    if (JSON.stringify(api.permissions) !== JSON.stringify(input.permissions)) {
      // Dropping a permission drops it from every grant and role of the API too.
      await setApiPermissions(ctx.db, { workspaceId: wid, clock: ctx.service.clock, actor: ctx.access.operator.userId, audience: api.audience, permissions: input.permissions });
    }
    return { result: { removed }, audit: { target: api.audience, data: { name: input.name, active: input.active, permissions: input.permissions, removed } } };
  },
});

export async function getApi(db: import("../../db/client").Database, workspaceId: string, apiId: string) {
  const [row] = await db.select().from(apis).where(and(eq(apis.workspaceId, workspaceId), eq(apis.id, apiId))).limit(1);
  return row ?? null;
}
