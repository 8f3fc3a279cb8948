// The `social_providers` section (by key, in button order) and the providers each application of the file offers.
import { and, eq } from "drizzle-orm";
import { clientSocialProviders, socialProviders } from "../../../db/schema";
import { decryptSecret, encryptSecret, newId } from "../../crypto";
import { OPTIONAL_PROVIDER_FIELDS } from "../document/social-providers";
import { differs, type ImportContext } from "./context";

export const socialSecretPurpose = (providerId: string) => `social-provider:${providerId}`;

/**
 * A stored secret is replaced only when the file's differs from it (the same secret re-encrypted
 * would count as a change on every import).
 */
export function sealedIfChanged(masterKey: Buffer, stored: string | null, secret: string | undefined, purpose: string): string | undefined {
  if (secret === undefined) return undefined;
  if (stored !== null) {
    try {
      if (decryptSecret(masterKey, stored, purpose) === secret) return undefined;
    } catch {
      // Unreadable (another master key): replace it.
    }
  }
  return encryptSecret(masterKey, secret, purpose);
}

/** Providers the file does not mention are left as they are; the file's list sets its providers' order. */
export async function importSocialProviders(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid, opts } = ctx;
  const { socialPk, clientPk } = ctx.ids;
  const existing = new Map((await tx.select().from(socialProviders).where(eq(socialProviders.workspaceId, wid))).map((p) => [p.key, p]));
  for (const [position, provider] of file.social_providers.entries()) {
    const config = Object.fromEntries(OPTIONAL_PROVIDER_FIELDS.flatMap((f) => (provider[f] !== undefined ? [[f, provider[f]]] : [])));
    const desired = { preset: provider.preset, name: provider.name.trim(), enabled: provider.enabled, position, clientId: provider.client_id, config };
    const secret = provider.client_secret ? ctx.secrets.get(provider.client_secret.env) : undefined;
    const row = existing.get(provider.key);
    if (!row) {
      const id = newId();
      await tx.insert(socialProviders).values({
        id,
        workspaceId: wid,
        key: provider.key,
        ...desired,
        secretEncrypted: secret === undefined ? null : encryptSecret(opts.masterKey, secret, socialSecretPurpose(id)),
        createdAt: now,
        updatedAt: now,
      });
      socialPk.set(provider.key, id);
      ctx.changes++;
      continue;
    }
    socialPk.set(provider.key, row.id);
    const sealed = sealedIfChanged(opts.masterKey, row.secretEncrypted, secret, socialSecretPurpose(row.id));
    if (differs(row, desired) || sealed) {
      await tx
        .update(socialProviders)
        .set({ ...desired, ...(sealed ? { secretEncrypted: sealed } : {}), updatedAt: now })
        .where(eq(socialProviders.id, row.id));
      ctx.changes++;
    }
  }

  // An application's providers are replaced by its list when it has one; a provider the file does
  // not define cannot be listed (validation), so it is dropped from an application with a list.
  const offered = await tx.select().from(clientSocialProviders).where(eq(clientSocialProviders.workspaceId, wid));
  for (const app of file.applications) {
    if (app.social_providers === undefined) continue;
    const pk = clientPk.get(app.client_id) as string;
    const wanted = new Set(app.social_providers.map((key) => socialPk.get(key) as string));
    const current = offered.filter((o) => o.clientPk === pk);
    for (const row of current) {
      if (wanted.has(row.providerId)) continue;
      await tx.delete(clientSocialProviders).where(and(eq(clientSocialProviders.clientPk, pk), eq(clientSocialProviders.providerId, row.providerId)));
      ctx.changes++;
    }
    for (const providerId of wanted) {
      if (current.some((row) => row.providerId === providerId)) continue;
      await tx.insert(clientSocialProviders).values({ workspaceId: wid, clientPk: pk, providerId });
      ctx.changes++;
    }
  }
}
