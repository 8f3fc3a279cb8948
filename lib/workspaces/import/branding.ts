// The workspace's branding: the row's display name, primary colour and theme, and the logo. No
// `branding` in the file means the defaults and no logo, as the file says how the pages look.
import { eq } from "drizzle-orm";
import { workspaces } from "../../../db/schema";
import { logoFromDataUrl } from "../../branding/logo";
import { deleteLogo, writeLogo } from "../../branding/store";
import { brandingStored } from "../document/branding";
import { differs, type ImportContext } from "./context";

export async function importBranding(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid } = ctx;
  const [row] = await tx.select({ branding: workspaces.branding }).from(workspaces).where(eq(workspaces.id, wid));
  const desired = { branding: brandingStored(file.branding) as Record<string, unknown> };
  if (differs(row ?? { branding: {} }, desired)) {
    await tx.update(workspaces).set({ ...desired, updatedAt: now }).where(eq(workspaces.id, wid));
    ctx.changes++;
  }
  // Validation has checked the data URL; a `file` reference never gets this far.
  const data = file.branding?.logo?.data;
  const changed = data ? await writeLogo(tx, wid, logoFromDataUrl(data), now) : await deleteLogo(tx, wid);
  if (changed) ctx.changes++;
}
