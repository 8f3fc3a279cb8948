/**
 * The reserved operator workspace (Keycloak's master realm): `system` holds the console's own
 * WEB_CONFIDENTIAL application and the operators, who are its users. The console signs operators
 * in through `/t/system` exactly as a customer application signs its users in.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { clients, clientSecrets, serviceSettings, workspaces } from "../../db/schema";
import { createClientSecret, isActiveSecret, rotateClientSecret } from "../clients/secrets";
import { DAY } from "../clock";
import { decryptSecret, encryptSecret, newId } from "../crypto";
import { issuerFor } from "../http/context";
import { SYSTEM_WORKSPACE_ID, SYSTEM_WORKSPACE_NAME } from "../operators/system";
import { announceChange, forgetWorkspace, type Service } from "../service";

export { SYSTEM_WORKSPACE_ID, SYSTEM_WORKSPACE_NAME } from "../operators/system";
export const CONSOLE_CLIENT_ID = "console";
export const CONSOLE_CLIENT_NAME = "Latchkey console";
export const CONSOLE_SCOPES = ["openid", "email", "profile"];
/** The console's client secret lives a year and is replaced automatically a month before it expires. */
const CONSOLE_SECRET_LIFETIME_DAYS = 365;
const CONSOLE_SECRET_RENEW_MS = 30 * DAY;
const SECRET_SETTING = "console.client_secret";
const SECRET_PURPOSE = "console-client-secret";

export const consoleRedirectUri = (publicUrl: string) => `${publicUrl}/console/auth/callback`;
export const consoleSignedOutUri = (publicUrl: string) => `${publicUrl}/console/signed-out`;
export const systemIssuer = (publicUrl: string) => issuerFor(publicUrl, SYSTEM_WORKSPACE_ID);

async function lock(tx: Database, name: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`latchkey:${name}`}))`);
}

/**
 * Creates the system workspace and the console application when missing, and re-syncs the
 * console's redirect URIs with PUBLIC_URL (they change when the public URL does). Idempotent and
 * safe to run from several processes at once.
 */
export async function ensureSystemWorkspace(service: Service): Promise<{ created: boolean }> {
  const { publicUrl } = service.config;
  const desired = {
    name: CONSOLE_CLIENT_NAME,
    type: "WEB_CONFIDENTIAL" as const,
    active: true,
    redirectUris: [consoleRedirectUri(publicUrl)],
    postLogoutRedirectUris: [consoleSignedOutUri(publicUrl)],
    allowedOrigins: [] as string[],
    identityScopes: CONSOLE_SCOPES,
    accountSecurity: false,
    secretLifetimeDays: CONSOLE_SECRET_LIFETIME_DAYS,
  };
  const created = await service.db.transaction(async (tx) => {
    await lock(tx, "system-workspace");
    const now = service.clock.now();
    const [workspace] = await tx.select().from(workspaces).where(eq(workspaces.id, SYSTEM_WORKSPACE_ID)).limit(1);
    if (!workspace) {
      await tx.insert(workspaces).values({ id: SYSTEM_WORKSPACE_ID, name: SYSTEM_WORKSPACE_NAME, system: true, createdAt: now, updatedAt: now });
    } else if (!workspace.system) {
      // The workspace file refuses this id, so this only happens if someone wrote it by hand.
      throw new Error(`Workspace "${SYSTEM_WORKSPACE_ID}" exists but is not the operator workspace; rename it first`);
    }
    const [client] = await tx
      .select()
      .from(clients)
      .where(and(eq(clients.workspaceId, SYSTEM_WORKSPACE_ID), eq(clients.clientId, CONSOLE_CLIENT_ID)))
      .limit(1);
    const outdated = !!client && JSON.stringify(pick(client, desired)) !== JSON.stringify(desired);
    if (!client) {
      await tx.insert(clients).values({ id: newId(), workspaceId: SYSTEM_WORKSPACE_ID, clientId: CONSOLE_CLIENT_ID, ...desired, createdAt: now, updatedAt: now });
    } else if (outdated) {
      await tx.update(clients).set({ ...desired, updatedAt: now }).where(eq(clients.id, client.id));
    }
    // Other processes already serving it (its discovery document) drop what they built once this commits.
    if (!workspace || !client || outdated) await announceChange(tx, SYSTEM_WORKSPACE_ID);
    return !workspace;
  });
  forgetWorkspace(service, SYSTEM_WORKSPACE_ID);
  await consoleClientSecret(service);
  service.cache.set("console:system-ready", true);
  return { created };
}

function pick<T extends object>(row: Record<string, unknown>, shape: T): T {
  return Object.fromEntries(Object.keys(shape).map((k) => [k, row[k]])) as T;
}

/** Runs ensureSystemWorkspace once per process (the server does it at start; `next dev` on first sign-in). */
export async function systemWorkspaceReady(service: Service): Promise<void> {
  if (service.cache.get("console:system-ready")) return;
  await ensureSystemWorkspace(service);
}

interface StoredSecret {
  secret: string;
  secretId: string;
}

/**
 * The console client's secret, kept encrypted under the master key in service_settings so the
 * console server can authenticate as its client. A new one is made (rotated with a day of
 * overlap) when it is missing, unreadable (the master key changed), revoked, or within a month of
 * expiry.
 */
export async function consoleClientSecret(service: Service): Promise<string> {
  const db = service.db;
  return db.transaction(async (tx) => {
    await lock(tx, "console-client-secret");
    const now = service.clock.now();
    const [setting] = await tx.select().from(serviceSettings).where(eq(serviceSettings.key, SECRET_SETTING)).limit(1);
    let stored: StoredSecret | null = null;
    if (setting) {
      try {
        stored = JSON.parse(decryptSecret(service.config.masterKey, setting.value, SECRET_PURPOSE)) as StoredSecret;
      } catch {
        stored = null;
      }
    }
    if (stored) {
      const [row] = await tx.select().from(clientSecrets).where(eq(clientSecrets.id, stored.secretId)).limit(1);
      if (row && isActiveSecret(row, now) && row.expiresAt.getTime() - now.getTime() > CONSOLE_SECRET_RENEW_MS) return stored.secret;
    }
    const [client] = await tx
      .select({ id: clients.id })
      .from(clients)
      .where(and(eq(clients.workspaceId, SYSTEM_WORKSPACE_ID), eq(clients.clientId, CONSOLE_CLIENT_ID)))
      .limit(1);
    if (!client) throw new Error("The console application does not exist; run ensureSystemWorkspace first");
    const ref = { workspaceId: SYSTEM_WORKSPACE_ID, clientId: CONSOLE_CLIENT_ID, clock: service.clock, lifetimeDays: CONSOLE_SECRET_LIFETIME_DAYS };
    const activeCount = (await tx.select().from(clientSecrets).where(eq(clientSecrets.clientPk, client.id))).filter((s) => isActiveSecret(s, now)).length;
    // Another process may still hold the old secret for a moment: keep it a day, unless it was never ours to read.
    const fresh = activeCount === 0 ? await createClientSecret(tx, ref) : await rotateClientSecret(tx, { ...ref, overlapHours: stored ? 24 : 0 });
    const value = encryptSecret(service.config.masterKey, JSON.stringify({ secret: fresh.secret, secretId: fresh.id } satisfies StoredSecret), SECRET_PURPOSE);
    await tx
      .insert(serviceSettings)
      .values({ key: SECRET_SETTING, value, updatedAt: now })
      .onConflictDoUpdate({ target: serviceSettings.key, set: { value, updatedAt: now } });
    return fresh.secret;
  });
}
