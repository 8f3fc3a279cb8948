// The `api_grants` section: one grant per client and API, its permissions replaced by the file's.
import { eq } from "drizzle-orm";
import { apiGrants } from "../../../db/schema";
import { newId } from "../../crypto";
import { differs, type ImportContext } from "./context";

export async function importApiGrants(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid } = ctx;
  const { clientPk, apiPk } = ctx.ids;
  const existingGrants = new Map(
    (await tx.select().from(apiGrants).where(eq(apiGrants.workspaceId, wid))).map((g) => [`${g.clientPk} ${g.apiId}`, g]),
  );
  for (const grant of file.api_grants) {
    const cpk = clientPk.get(grant.client_id) as string;
    const apk = apiPk.get(grant.audience) as string;
    const existing = existingGrants.get(`${cpk} ${apk}`);
    if (!existing) {
      await tx.insert(apiGrants).values({
        id: newId(),
        workspaceId: wid,
        clientPk: cpk,
        apiId: apk,
        permissions: grant.permissions,
        createdAt: now,
        updatedAt: now,
      });
      ctx.changes++;
    } else if (differs(existing, { permissions: grant.permissions })) {
      await tx.update(apiGrants).set({ permissions: grant.permissions, updatedAt: now }).where(eq(apiGrants.id, existing.id));
      ctx.changes++;
    }
  }
}
