// The workspace row itself (id and name); refuses the operator workspace.
import { eq } from "drizzle-orm";
import { workspaces } from "../../../db/schema";
import { WorkspaceFileError } from "../document";
import type { ImportContext } from "./context";

export async function importWorkspaceRow(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid } = ctx;
  const [workspace] = await tx.select().from(workspaces).where(eq(workspaces.id, wid));
  if (workspace?.system) {
    throw new WorkspaceFileError([{ path: "$.id", message: "names the operator workspace, which cannot be imported" }]);
  }
  ctx.created = !workspace;
  if (!workspace) {
    await tx.insert(workspaces).values({ id: wid, name: file.name, system: false, createdAt: now, updatedAt: now });
    ctx.changes++;
  } else if (workspace.name !== file.name) {
    await tx.update(workspaces).set({ name: file.name, updatedAt: now }).where(eq(workspaces.id, wid));
    ctx.changes++;
  }
}
