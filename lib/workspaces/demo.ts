/**
 * The demo workspace a fresh installation starts with, so that `npm start` on an empty database
 * gives something to sign in to. Created only while no customer workspace exists yet.
 */
import { and, eq, inArray, ne } from "drizzle-orm";
import type { Database } from "../../db/client";
import { clients, users, workspaces } from "../../db/schema";
import { verifyPassword } from "../authn/password";
import { FIRST_FACTORS } from "../authn/policy";
import { ensurePresetClientSecret, MAX_SECRET_LIFETIME_DAYS, SECRET_PREFIX } from "../clients/secrets";
import { deriveKey, newId } from "../crypto";
import { validateWorkspaceDocument, type WorkspaceDocumentInput } from "./document";
import { importWorkspace, type ImportOptions } from "./file";
import { applicationRow } from "./import/applications";
import { announceChange } from "../service";

export const DEMO_WORKSPACE_ID = "demo";
/** The demo application's client (its "Sign in"): confidential, so that it can use the account-security backend handoff. */
export const DEMO_APP_CLIENT_ID = "demo-app";
/** The same application requiring MFA ("Sign in with MFA required"). */
export const DEMO_APP_MFA_CLIENT_ID = "demo-app-mfa";
export const DEMO_WEB_CLIENT_ID = "demo-web";
/** The clients the demo application at /demo signs in with. */
const DEMO_APP_CLIENT_IDS = [DEMO_APP_CLIENT_ID, DEMO_APP_MFA_CLIENT_ID] as const;

/**
 * The demo application's addresses (lib/demo, served by this server at /demo): its home page (where
 * hosted logout and the account-security portal return), its OAuth callback, and its callback of
 * the account-security backend handoff.
 */
export function demoAppUris(publicUrl: string): { home: string; callback: string; handoffCallback: string } {
  return { home: `${publicUrl}/demo`, callback: `${publicUrl}/demo/callback`, handoffCallback: `${publicUrl}/demo/account-security/callback` };
}

/**
 * The client secret of the demo application's client `clientId`: derived from the master key
 * (HKDF, a label of its own), so this server can authenticate as it without the secret being
 * stored anywhere; the database holds only its hash, as for every client secret. Whoever holds
 * the master key holds every secret of the installation already.
 */
export function demoAppSecret(masterKey: Buffer, clientId: string): string {
  return SECRET_PREFIX + deriveKey(masterKey, `demo-application-client-secret:${clientId}`).toString("base64url");
}

/**
 * `demo-web`'s addresses: the integration guide's application (docs/integration.md), whose code
 * uses `${APP_ORIGIN}/auth/callback` and `${APP_ORIGIN}/signed-out` with APP_ORIGIN
 * http://localhost:4000.
 */
export const DEMO_WEB_URIS = { callback: "http://localhost:4000/auth/callback", signedOut: "http://localhost:4000/signed-out" } as const;
/** What earlier releases registered for demo-web, which the guide's code never used. */
const FORMER_DEMO_WEB = { redirectUris: ["http://localhost:4000/callback"], postLogout: ["http://localhost:4000/"] };

/** A client of the demo application at /demo, in the workspace file's terms. */
function demoApp(clientId: string, name: string, app: ReturnType<typeof demoAppUris>, masterKey: Buffer | undefined) {
  return {
    client_id: clientId,
    name,
    type: "WEB_CONFIDENTIAL" as const,
    redirect_uris: [app.callback],
    post_logout_redirect_uris: [app.home],
    // The account-security portal's "Back to Demo application" returns to /demo, not to the server's root.
    home_uri: app.home,
    allowed_origins: [],
    identity_scopes: ["openid", "email", "profile"] as ("openid" | "email" | "profile")[],
    account_security: true,
    ...(masterKey ? { secret: demoAppSecret(masterKey, clientId) } : {}),
    // The longest lifetime; each start adds it again once it has expired or was revoked.
    secret_lifetime_days: MAX_SECRET_LIFETIME_DAYS,
  };
}

/**
 * The demo workspace's file, its demo application's addresses under `publicUrl`. With the master
 * key, the demo application's clients carry their derived secrets (demoAppSecret); without it,
 * the file only describes them.
 */
export function demoWorkspace(publicUrl: string, masterKey?: Buffer) {
  const app = demoAppUris(publicUrl);
  return {
    id: DEMO_WORKSPACE_ID,
    name: "Demo workspace",
    // Every way to sign in, and a passkey offered to those who have none.
    auth_policy: { first_factors: [...FIRST_FACTORS], mfa: "off", passkey_enrollment: "offer", sign_up: false },
    // New passwords screened (common, breached and guessable ones refused: docs/sign-in.md).
    password_screening: { minimum_score: 2 },
    // "Forgot your password?" on the sign-in page: a code to the account's address (docs/sign-in.md).
    password_reset: "email",
    // A proof of work on the sign-in page under unusual activity (docs/sign-in.md).
    bot_challenge: "adaptive",
    // Every security alert by email (the development outbox shows them: docs/security.md).
    security_alerts: { new_password: true, factor_changed: true, new_recovery_codes: true, new_browser: true, token_reuse: true },
    applications: [
      // The demo application at /demo signs in with this confidential client; its secret is
      // derived from the master key (demoAppSecret), and it opens "Security settings" through the
      // account-security backend handoff.
      demoApp(DEMO_APP_CLIENT_ID, "Demo application", app, masterKey),
      // The same application, registered again to show one that requires MFA: sign in with this
      // client_id and the demo user is asked to enrol a second factor.
      { ...demoApp(DEMO_APP_MFA_CLIENT_ID, "Demo application (MFA required)", app, masterKey), auth_policy: { mfa: "required" as const } },
      {
        // The integration guide's application (docs/integration.md), on a port of its own: the
        // guide's code works with this registration unchanged (tests/docs/integration-guide.test.ts).
        client_id: DEMO_WEB_CLIENT_ID,
        name: "Demo web app",
        type: "WEB_CONFIDENTIAL",
        redirect_uris: [DEMO_WEB_URIS.callback],
        post_logout_redirect_uris: [DEMO_WEB_URIS.signedOut],
        allowed_origins: [],
        identity_scopes: ["openid", "email", "profile", "offline_access"],
        account_security: true,
      },
    ],
    apis: [],
    api_grants: [],
    roles: [],
    organizations: [],
    users: [
      {
        email: "demo@example.com",
        name: "Demo User",
        // DEMO_USER below.
        password: "demo-password",
        email_verified: true,
        status: "active",
        roles: [],
      },
    ],
  } satisfies WorkspaceDocumentInput;
}

/** The demo's applications for the start-up message, e.g. "demo-app (confidential)". */
export function demoClientsLine(): string {
  return demoWorkspace("")
    .applications.map((a) => `${a.client_id} (confidential${"auth_policy" in a && a.auth_policy?.mfa === "required" ? ", MFA required" : ""})`)
    .join("  ");
}

/** A redirect URI the demo itself registered: /demo/callback under some PUBLIC_URL. */
const demoOwnedRedirect = (uri: string) => /^https?:\/\/[^/]+\/demo\/callback$/.test(uri);

/**
 * Imports the demo workspace when no workspace other than the operator ("system") workspace
 * exists. When this creates `demo-web`, its generated secret is returned so the start-up
 * message can print it once; it cannot be read back later. (The demo application's own clients
 * carry their derived secrets, demoAppSecret, which are never shown.)
 *
 * When the demo workspace exists already (an earlier start, perhaps of an earlier release):
 * - the demo application's clients `demo-app` and `demo-app-mfa` are added when missing (releases
 *   before them signed the demo in with the public clients `demo-spa` and `demo-spa-mfa`, which
 *   stay as they are, unused); `added` names them. Their derived secrets are made active again
 *   when they expired or were revoked;
 * - those two are pointed at this server's /demo (`publicUrl`) when they still carry only the
 *   /demo addresses of another PUBLIC_URL; addresses someone registered by hand are left alone;
 * - demo-web gets the integration guide's addresses and offline_access if it still has exactly
 *   an earlier release's.
 * `repointed` names the clients changed.
 */
export async function ensureDemoWorkspace(
  db: Database,
  opts: Pick<ImportOptions, "clock" | "masterKey"> & { publicUrl: string },
): Promise<{ created: boolean; webSecret?: string; repointed?: string[]; added?: string[] }> {
  const [demo] = await db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, DEMO_WORKSPACE_ID)).limit(1);
  if (demo) {
    const added = await ensureDemoAppClients(db, opts);
    const repointed = await repointDemoApplication(db, opts);
    // Other processes already serving the demo (its discovery documents) drop what they built.
    if (added.length || repointed.length) await announceChange(db, DEMO_WORKSPACE_ID);
    return { created: false, ...(repointed.length ? { repointed } : {}), ...(added.length ? { added } : {}) };
  }
  const [other] = await db
    .select({ id: workspaces.id })
    .from(workspaces)
    .where(and(ne(workspaces.id, "system"), eq(workspaces.system, false)))
    .limit(1);
  if (other) return { created: false };
  const { clock, masterKey } = opts;
  const result = await importWorkspace(db, demoWorkspace(opts.publicUrl, masterKey), { clock, masterKey, generateSecrets: true });
  const webSecret = result.generatedSecrets?.find((s) => s.clientId === DEMO_WEB_CLIENT_ID)?.secret;
  return { created: result.created, ...(webSecret ? { webSecret } : {}) };
}

/**
 * The demo application's clients as the workspace file describes them: added when missing, and
 * their derived secrets active (kept when they are; added again when expired or revoked). A client
 * someone made public keeps no secret. Returns the client ids added.
 */
async function ensureDemoAppClients(db: Database, opts: Pick<ImportOptions, "clock" | "masterKey"> & { publicUrl: string }): Promise<string[]> {
  const file = validateWorkspaceDocument(demoWorkspace(opts.publicUrl, opts.masterKey));
  const existing = new Map(
    (
      await db
        .select({ id: clients.id, clientId: clients.clientId, type: clients.type })
        .from(clients)
        .where(and(eq(clients.workspaceId, DEMO_WORKSPACE_ID), inArray(clients.clientId, [...DEMO_APP_CLIENT_IDS])))
    ).map((row) => [row.clientId, row]),
  );
  const added: string[] = [];
  for (const app of file.applications.filter((a) => (DEMO_APP_CLIENT_IDS as readonly string[]).includes(a.client_id))) {
    let row = existing.get(app.client_id);
    if (!row) {
      const now = opts.clock.now();
      const [inserted] = await db
        .insert(clients)
        .values({ id: newId(), workspaceId: DEMO_WORKSPACE_ID, clientId: app.client_id, ...applicationRow(app), createdAt: now, updatedAt: now })
        .onConflictDoNothing()
        .returning({ id: clients.id, clientId: clients.clientId, type: clients.type });
      if (!inserted) continue; // another process added it
      row = inserted;
      added.push(app.client_id);
    }
    if (row.type !== "WEB_CONFIDENTIAL" || app.secret === undefined) continue;
    await ensurePresetClientSecret(db, { clientPk: row.id, secret: app.secret, lifetimeDays: MAX_SECRET_LIFETIME_DAYS, clock: opts.clock });
  }
  return added;
}

async function repointDemoApplication(db: Database, opts: Pick<ImportOptions, "clock"> & { publicUrl: string }): Promise<string[]> {
  const app = demoAppUris(opts.publicUrl);
  const rows = await db
    .select({ id: clients.id, clientId: clients.clientId, redirectUris: clients.redirectUris, postLogout: clients.postLogoutRedirectUris, scopes: clients.identityScopes })
    .from(clients)
    .where(and(eq(clients.workspaceId, DEMO_WORKSPACE_ID), inArray(clients.clientId, [...DEMO_APP_CLIENT_IDS, DEMO_WEB_CLIENT_ID])));
  const repointed: string[] = [];
  for (const row of rows) {
    if (row.clientId === DEMO_WEB_CLIENT_ID) {
      // demo-web as an earlier release registered it, exactly: given the guide's addresses and offline_access.
      const former = sameList(row.redirectUris, FORMER_DEMO_WEB.redirectUris) && sameList(row.postLogout, FORMER_DEMO_WEB.postLogout);
      if (!former) continue;
      await db
        .update(clients)
        .set({
          redirectUris: [DEMO_WEB_URIS.callback],
          postLogoutRedirectUris: [DEMO_WEB_URIS.signedOut],
          identityScopes: row.scopes.includes("offline_access") ? row.scopes : [...row.scopes, "offline_access"],
          updatedAt: opts.clock.now(),
        })
        .where(eq(clients.id, row.id));
      repointed.push(row.clientId);
      continue;
    }
    if (row.redirectUris.includes(app.callback) || row.redirectUris.length === 0 || !row.redirectUris.every(demoOwnedRedirect)) continue;
    // The handoff destinations follow by themselves: the demo application registers them again (lib/demo/app.ts).
    await db
      .update(clients)
      .set({ redirectUris: [app.callback], postLogoutRedirectUris: [app.home], homeUri: app.home, updatedAt: opts.clock.now() })
      .where(eq(clients.id, row.id));
    repointed.push(row.clientId);
  }
  return repointed.sort();
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((v, i) => v === b[i]);

export const DEMO_USER = { email: "demo@example.com", password: "demo-password" } as const;

/**
 * Whether the demo user still signs in with the demo password (active, password unchanged): the
 * start-up message keeps showing how to sign in to the demo until someone changes it.
 */
export async function demoSignInStillWorks(db: Database): Promise<boolean> {
  const [user] = await db
    .select({ passwordHash: users.passwordHash, status: users.status })
    .from(users)
    .where(and(eq(users.workspaceId, DEMO_WORKSPACE_ID), eq(users.emailNormalized, DEMO_USER.email)))
    .limit(1);
  if (!user?.passwordHash || user.status !== "active") return false;
  return verifyPassword(user.passwordHash, DEMO_USER.password);
}
