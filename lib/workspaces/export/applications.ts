// The `applications` section as the workspace holds it: sorted by client_id; client secrets never appear.
import { eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { clientSocialProviders, clients } from "../../../db/schema";
import type { WorkspaceDocument } from "../document";
import { byKey, policyField } from "./shared";
import { applicationOptionsOf } from "../document/applications";
import { orderedSocialProviders } from "./social-providers";

export async function exportApplications(db: Database, wid: string): Promise<Pick<WorkspaceDocument, "applications">> {
  const [clientRows, orderedProviders, offeredRows] = await Promise.all([
    db.select().from(clients).where(eq(clients.workspaceId, wid)),
    orderedSocialProviders(db, wid),
    db.select().from(clientSocialProviders).where(eq(clientSocialProviders.workspaceId, wid)),
  ]);
  const providerOrder = new Map(orderedProviders.map((p, i) => [p.id, i]));
  return {
    applications: clientRows.sort(byKey((c) => c.clientId)).map((c) => ({
      client_id: c.clientId,
      name: c.name,
      type: c.type,
      redirect_uris: c.redirectUris,
      post_logout_redirect_uris: c.postLogoutRedirectUris,
      ...(c.homeUri ? { home_uri: c.homeUri } : {}),
      allowed_origins: c.allowedOrigins,
      identity_scopes: c.identityScopes as WorkspaceDocument["applications"][number]["identity_scopes"],
      active: c.active,
      account_security: c.accountSecurity,
      // The options switched on, each as its own key (lib/surfaces/application-options.ts); an option no feature declares any more is dropped.
      ...applicationOptionsOf(c.options),
      ...policyField(c.authPolicy),
      ...(c.type === "PUBLIC" ? {} : { secret_lifetime_days: c.secretLifetimeDays }),
      // M2M clients have no sign-in page, so no providers to offer.
      ...(c.type === "M2M"
        ? {}
        : {
            social_providers: offeredRows
              .filter((o) => o.clientPk === c.id)
              .sort((a, b) => (providerOrder.get(a.providerId) ?? 0) - (providerOrder.get(b.providerId) ?? 0))
              .map((o) => orderedProviders[providerOrder.get(o.providerId) as number].key),
          }),
    })),
  };
}
