// The `organizations` section: organizations by slug (their members are a later step, after users).
import { eq } from "drizzle-orm";
import { organizations } from "../../../db/schema";
import { newId } from "../../crypto";
import { differs, type ImportContext } from "./context";

export async function importOrganizations(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid } = ctx;
  const { orgPk } = ctx.ids;
  const existingOrgs = new Map(
    (await tx.select().from(organizations).where(eq(organizations.workspaceId, wid))).map((o) => [o.slug, o]),
  );
  for (const org of file.organizations) {
    const desired = { name: org.name, active: org.active };
    const existing = existingOrgs.get(org.slug);
    if (!existing) {
      const id = newId();
      await tx.insert(organizations).values({ id, workspaceId: wid, slug: org.slug, ...desired, createdAt: now, updatedAt: now });
      orgPk.set(org.slug, id);
      ctx.changes++;
    } else {
      orgPk.set(org.slug, existing.id);
      if (differs(existing, desired)) {
        await tx.update(organizations).set({ ...desired, updatedAt: now }).where(eq(organizations.id, existing.id));
        ctx.changes++;
      }
    }
  }
}
