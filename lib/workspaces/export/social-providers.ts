// The `social_providers` section as the workspace holds it: in button order; upstream secrets never appear.
import { eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { socialProviders } from "../../../db/schema";
import type { WorkspaceDocument } from "../document";
import { OPTIONAL_PROVIDER_FIELDS } from "../document/social-providers";
import { str } from "./shared";

/** The workspace's social providers in button order (position, then key). */
export async function orderedSocialProviders(db: Database, wid: string) {
  const rows = await db.select().from(socialProviders).where(eq(socialProviders.workspaceId, wid));
  return rows.sort((a, b) => a.position - b.position || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

export async function exportSocialProviders(db: Database, wid: string): Promise<Pick<WorkspaceDocument, "social_providers">> {
  const ordered = await orderedSocialProviders(db, wid);
  return {
    social_providers: ordered.map((p) => ({
      key: p.key,
      preset: p.preset,
      name: p.name,
      client_id: p.clientId,
      ...Object.fromEntries(OPTIONAL_PROVIDER_FIELDS.flatMap((f) => (str(p.config[f]) ? [[f, str(p.config[f])]] : []))),
      enabled: p.enabled,
    })),
  };
}
