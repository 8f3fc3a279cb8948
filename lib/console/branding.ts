/**
 * The workspace's branding in the console: display name, primary colour and theme, and the logo.
 * The rules are lib/branding's (the same the workspace file goes through); every change is one
 * audited operation (`console.workspace.branding_changed`, saying what changed).
 */
import { eq } from "drizzle-orm";
import { z } from "zod";
import { workspaces } from "../../db/schema";
import { checkLogo } from "../branding/logo";
import { displayNameField, primaryColorField, resolveBranding, storedBranding, themeField, type StoredBranding } from "../branding/rule";
import { deleteLogo, loadBranding, writeLogo, type HostedBranding } from "../branding/store";
import type { Service } from "../service";
import { defineOperation, formError, type OperationContext } from "./operation";

/** The branding as the console shows it (with the logo's address), or null for an unknown workspace. */
export function getBranding(service: Service, workspaceId: string): Promise<HostedBranding | null> {
  return loadBranding(service.db, workspaceId);
}

const FIELDS = ["displayName", "primaryColor", "theme"] as const;

export const setBranding = defineOperation({
  name: "workspace.branding_changed",
  role: "admin",
  input: z.object({
    // Empty: the workspace's name.
    display_name: z.preprocess((v) => (v ?? ""), displayNameField),
    primary_color: primaryColorField,
    theme: themeField,
  }),
  async run(ctx: OperationContext, input) {
    const wid = ctx.access.workspace.id;
    const [row] = await ctx.db.select({ name: workspaces.name, branding: workspaces.branding }).from(workspaces).where(eq(workspaces.id, wid)).for("update");
    if (!row) throw formError("This workspace no longer exists");
    const current = resolveBranding(row.branding, row.name);
    const before: StoredBranding = storedBranding({
      displayName: current.custom.displayName ? current.displayName : null,
      primaryColor: current.custom.primaryColor ? current.primaryColor : null,
      theme: current.theme,
    });
    const after = storedBranding({
      // The workspace's own name is the default, not a choice to keep when the name changes.
      displayName: input.display_name && input.display_name !== row.name ? input.display_name : null,
      primaryColor: input.primary_color,
      theme: input.theme,
    });
    const changed = FIELDS.filter((f) => (before[f] ?? null) !== (after[f] ?? null));
    if (changed.length === 0) return { result: { changed }, audit: null };
    await ctx.db.update(workspaces).set({ branding: after, updatedAt: ctx.now }).where(eq(workspaces.id, wid));
    return { result: { changed }, audit: { target: wid, data: { changed, before, after } } };
  },
});

export const setLogo = defineOperation({
  name: "workspace.branding_changed",
  role: "admin",
  input: z.object({ logo: z.instanceof(Uint8Array, { error: "Choose an image file" }) }),
  async run(ctx: OperationContext, input) {
    // A LogoError is answered beside the logo field, as every "operator" coded error with its field (runOperation).
    const logo = checkLogo(input.logo);
    const changed = await writeLogo(ctx.db, ctx.access.workspace.id, logo, ctx.now);
    const result = { digest: logo.digest, contentType: logo.contentType, bytes: logo.bytes.length };
    return { result, audit: changed ? { target: ctx.access.workspace.id, data: { changed: ["logo"], logo: result } } : null };
  },
});

export const removeLogo = defineOperation({
  name: "workspace.branding_changed",
  role: "admin",
  input: z.object({}),
  async run(ctx: OperationContext) {
    const removed = await deleteLogo(ctx.db, ctx.access.workspace.id);
    return { result: { removed }, audit: removed ? { target: ctx.access.workspace.id, data: { changed: ["logo"], logo: null } } : null };
  },
});
