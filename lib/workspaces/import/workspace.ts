// The workspace row itself (id, name and authentication policy); refuses the operator workspace.
import { eq } from "drizzle-orm";
import { workspaces } from "../../../db/schema";
import { policyOverrides, WorkspaceFileError } from "../document";
import { differs, type ImportContext } from "./context";

export async function importWorkspaceRow(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid } = ctx;
  const [workspace] = await tx.select().from(workspaces).where(eq(workspaces.id, wid));
  if (workspace?.system) {
    throw new WorkspaceFileError([{ path: "$.id", message: "names the operator workspace, which cannot be imported" }]);
  }
  ctx.created = !workspace;
  // No auth_policy in the file means the defaults (lib/authn/policy.ts DEFAULT_POLICY).
  const desired = { name: file.name, authPolicy: policyOverrides(file.auth_policy) as Record<string, unknown> };
  if (!workspace) {
    await tx.insert(workspaces).values({ id: wid, ...desired, system: false, createdAt: now, updatedAt: now });
    ctx.changes++;
  } else if (differs(workspace, desired)) {
    await tx.update(workspaces).set({ ...desired, updatedAt: now }).where(eq(workspaces.id, wid));
    ctx.changes++;
  }
}
