/**
 * Export of the workspace file: one function per section, each reading what its part of the
 * document needs (./<section>.ts, and a feature's `export`, lib/surfaces/workspace-file.ts), run
 * together and joined in document order. Lists are sorted by natural key so exports are stable.
 */
import { eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { workspaces } from "../../../db/schema";
import { readLogo } from "../../branding/store";
import { WORKSPACE_SECTIONS } from "../../features/registry";
import { inSectionOrder } from "../../surfaces/workspace-file";
import type { WorkspaceDocument } from "../document";
import { brandingEntry } from "../document/branding";
import { exportApiGrants, exportApis } from "./apis";
import { exportApplications } from "./applications";
import { exportOrganizations } from "./organizations";
import { exportRoles } from "./roles";
import { policyField } from "./shared";
import { exportSocialProviders } from "./social-providers";
import { exportUsers } from "./users";

type Workspace = typeof workspaces.$inferSelect;
type SectionExport = (db: Database, workspace: Workspace) => Promise<object>;

/** lib/workspaces' own sections in document order; a feature's goes after the one it names. */
const OWN_EXPORTS: ReadonlyArray<readonly [string, SectionExport]> = [
  ["workspace", async (_db, w) => ({ id: w.id, name: w.name, ...policyField(w.authPolicy) })],
  [
    "branding",
    async (db, w) => {
      const branding = brandingEntry(w.branding, w.name, await readLogo(db, w.id));
      return branding ? { branding } : {};
    },
  ],
  ["applications", (db, w) => exportApplications(db, w.id)],
  ["apis", (db, w) => exportApis(db, w.id)],
  ["api_grants", (db, w) => exportApiGrants(db, w.id)],
  ["roles", (db, w) => exportRoles(db, w.id)],
  ["organizations", (db, w) => exportOrganizations(db, w.id)],
  ["social_providers", (db, w) => exportSocialProviders(db, w.id)],
  ["users", (db, w) => exportUsers(db, w.id)],
];

const EXPORTS = inSectionOrder<SectionExport>(OWN_EXPORTS, WORKSPACE_SECTIONS, (s) => (db, w) => s.export(db, w.id));

/**
 * The workspace as a document importWorkspace accepts. Passwords appear as `password_hash`;
 * client secrets never appear, nor do upstream secrets (connections' and social providers'
 * `client_secret` is left out: import then keeps the stored one), nor do enrolled factors (passkeys, authenticator apps, recovery
 * codes): they are secrets bound to this installation and are never exported or imported, nor is
 * a SAML connection's SP key pair (its identity provider and options are). Null when the
 * workspace does not exist or is the operator workspace. Lists are sorted by natural key so
 * exports are stable; social providers keep their button order.
 */
export async function exportWorkspace(db: Database, workspaceId: string): Promise<WorkspaceDocument | null> {
  const [workspace] = await db.select().from(workspaces).where(eq(workspaces.id, workspaceId));
  if (!workspace || workspace.system) return null;
  const parts = await Promise.all(EXPORTS.map((part) => part(db, workspace)));
  return Object.assign({}, ...parts) as WorkspaceDocument;
}
