// The `applications` section: clients by client_id, their preset secrets, and secrets generated for new confidential clients.
import { eq } from "drizzle-orm";
import { clients } from "../../../db/schema";
import { createClientSecret, DEFAULT_SECRET_LIFETIME_DAYS, ensurePresetClientSecret, revokeAllClientSecrets } from "../../clients/secrets";
import { newId } from "../../crypto";
import { defaultIdentityScopes, policyOverrides, type ApplicationEntry } from "../document";
import { applicationOptionsOf } from "../document/applications";
import { differs, type ImportContext } from "./context";

/** The client row's fields an application entry of the file sets. */
export function applicationRow(app: ApplicationEntry) {
  return {
    name: app.name,
    type: app.type,
    active: app.active,
    redirectUris: app.redirect_uris,
    postLogoutRedirectUris: app.post_logout_redirect_uris,
    homeUri: app.home_uri ?? null,
    allowedOrigins: app.allowed_origins,
    identityScopes: app.identity_scopes ?? defaultIdentityScopes(app.type),
    accountSecurity: app.account_security,
    options: applicationOptionsOf(app),
    // An application's row holds only its overrides; no auth_policy in the file means it inherits everything.
    authPolicy: policyOverrides(app.auth_policy) as Record<string, unknown>,
    ...(app.type === "PUBLIC" ? {} : { secretLifetimeDays: app.secret_lifetime_days ?? DEFAULT_SECRET_LIFETIME_DAYS }),
  };
}

export async function importApplications(ctx: ImportContext): Promise<void> {
  const { tx, file, opts, clock, now, wid, generated } = ctx;
  const { clientPk } = ctx.ids;
  const existingClients = new Map(
    (await tx.select().from(clients).where(eq(clients.workspaceId, wid))).map((c) => [c.clientId, c]),
  );
  for (const app of file.applications) {
    const desired = applicationRow(app);
    const existing = existingClients.get(app.client_id);
    let pk: string;
    let becameConfidential = false;
    if (!existing) {
      pk = newId();
      await tx.insert(clients).values({ id: pk, workspaceId: wid, clientId: app.client_id, ...desired, createdAt: now, updatedAt: now });
      ctx.changes++;
      becameConfidential = app.type !== "PUBLIC";
    } else {
      pk = existing.id;
      if (differs(existing, desired)) {
        await tx.update(clients).set({ ...desired, updatedAt: now }).where(eq(clients.id, pk));
        ctx.changes++;
      }
      if (existing.type !== "PUBLIC" && app.type === "PUBLIC") {
        // A public client has no credentials: none may stay usable.
        ctx.changes += (await revokeAllClientSecrets(tx, { clientPk: pk, clock })).length;
      }
      becameConfidential = existing.type === "PUBLIC" && app.type !== "PUBLIC";
    }
    clientPk.set(app.client_id, pk);
    if (app.secret !== undefined) {
      const preset = await ensurePresetClientSecret(tx, {
        clientPk: pk,
        secret: app.secret,
        lifetimeDays: desired.secretLifetimeDays ?? DEFAULT_SECRET_LIFETIME_DAYS,
        clock,
      });
      if (preset.created) ctx.changes += 1 + preset.revoked.length;
    } else if (becameConfidential && opts.generateSecrets) {
      const secret = await createClientSecret(tx, { workspaceId: wid, clientId: app.client_id, clock, actor: opts.actor });
      generated.push({ clientId: app.client_id, secretId: secret.id, secret: secret.secret, expiresAt: secret.expiresAt });
      ctx.changes++;
    }
  }
}
