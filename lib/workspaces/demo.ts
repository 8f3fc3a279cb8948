/**
 * The demo workspace a fresh installation starts with, so that `npm start` on an empty database
 * gives something to sign in to. Created only while no customer workspace exists yet.
 */
import { and, eq, inArray, ne } from "drizzle-orm";
import type { Database } from "../../db/client";
import { clients, users, workspaces } from "../../db/schema";
import { verifyPassword } from "../authn/password";
import type { WorkspaceDocumentInput } from "./document";
import { importWorkspace, type ImportOptions } from "./file";

export const DEMO_WORKSPACE_ID = "demo";
export const DEMO_SPA_CLIENT_ID = "demo-spa";
export const DEMO_WEB_CLIENT_ID = "demo-web";
export const DEMO_MFA_CLIENT_ID = "demo-spa-mfa";

/**
 * Where the demo application (lib/demo, served by this server at /demo) receives the sign-in and
 * where hosted logout returns: the redirect URIs of `demo-spa` and `demo-spa-mfa`.
 */
export function demoAppUris(publicUrl: string): { home: string; callback: string } {
  return { home: `${publicUrl}/demo`, callback: `${publicUrl}/demo/callback` };
}

/**
 * `demo-web`'s addresses: the integration guide's application (docs/integration.md), whose code
 * uses `${APP_ORIGIN}/auth/callback` and `${APP_ORIGIN}/signed-out` with APP_ORIGIN
 * http://localhost:4000.
 */
export const DEMO_WEB_URIS = { callback: "http://localhost:4000/auth/callback", signedOut: "http://localhost:4000/signed-out" } as const;
/** What earlier releases registered for demo-web, which the guide's code never used. */
const FORMER_DEMO_WEB = { redirectUris: ["http://localhost:4000/callback"], postLogout: ["http://localhost:4000/"] };

/** The demo workspace's file, its demo application's addresses under `publicUrl`. */
export function demoWorkspace(publicUrl: string) {
  const app = demoAppUris(publicUrl);
  return {
    id: DEMO_WORKSPACE_ID,
    name: "Demo workspace",
    // Every way to sign in, and a passkey offered to those who have none.
    auth_policy: { first_factors: ["password", "email_otp", "passkey"], mfa: "off", passkey_enrollment: "offer", sign_up: false },
    applications: [
      {
        // The demo application at /demo signs in with this public client (PKCE, no secret).
        client_id: DEMO_SPA_CLIENT_ID,
        name: "Demo application",
        type: "PUBLIC",
        redirect_uris: [app.callback],
        post_logout_redirect_uris: [app.home],
        // The account-security portal's "Back to Demo application" returns to /demo, not to the server's root.
        home_uri: app.home,
        allowed_origins: [],
        identity_scopes: ["openid", "email", "profile"],
        account_security: true,
      },
      {
        // The same application, registered again to show one that requires MFA: sign in with
        // this client_id and the demo user is asked to enrol a second factor.
        client_id: DEMO_MFA_CLIENT_ID,
        name: "Demo application (MFA required)",
        type: "PUBLIC",
        redirect_uris: [app.callback],
        post_logout_redirect_uris: [app.home],
        home_uri: app.home,
        allowed_origins: [],
        identity_scopes: ["openid", "email", "profile"],
        account_security: true,
        auth_policy: { mfa: "required" },
      },
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

/** The demo's applications for the start-up message, e.g. "demo-spa (public, PKCE)". */
export function demoClientsLine(): string {
  return demoWorkspace("")
    .applications.map((a) => `${a.client_id} (${a.type === "PUBLIC" ? "public, PKCE" : "confidential"}${"auth_policy" in a && a.auth_policy?.mfa === "required" ? ", MFA required" : ""})`)
    .join("  ");
}

/** The demo application's address in earlier releases, which nothing served. */
const FORMER_DEMO_ORIGIN = "http://localhost:5173";

/** A redirect URI the demo itself registered: the former one, or /demo/callback under some PUBLIC_URL. */
const demoOwnedRedirect = (uri: string) => uri === `${FORMER_DEMO_ORIGIN}/callback` || /^https?:\/\/[^/]+\/demo\/callback$/.test(uri);

/**
 * Imports the demo workspace when no workspace other than the operator ("system") workspace
 * exists. When this creates `demo-web`, its generated secret is returned so the start-up
 * message can print it once; it cannot be read back later.
 *
 * When the demo workspace exists already, its two demo-application clients are pointed at this
 * server's /demo (`publicUrl`) if they still carry only addresses the demo itself registered (an
 * earlier release's http://localhost:5173, or another PUBLIC_URL's /demo/callback), and demo-web
 * gets the integration guide's addresses and offline_access if it still has exactly an earlier
 * release's; addresses someone registered by hand are left alone. `repointed` names the clients changed.
 */
export async function ensureDemoWorkspace(
  db: Database,
  opts: Pick<ImportOptions, "clock" | "masterKey"> & { publicUrl: string },
): Promise<{ created: boolean; webSecret?: string; repointed?: string[] }> {
  const [demo] = await db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, DEMO_WORKSPACE_ID)).limit(1);
  if (demo) return repointDemoApplication(db, opts);
  const [other] = await db
    .select({ id: workspaces.id })
    .from(workspaces)
    .where(and(ne(workspaces.id, "system"), eq(workspaces.system, false)))
    .limit(1);
  if (other) return { created: false };
  const { clock, masterKey } = opts;
  const result = await importWorkspace(db, demoWorkspace(opts.publicUrl), { clock, masterKey, generateSecrets: true });
  const webSecret = result.generatedSecrets?.find((s) => s.clientId === DEMO_WEB_CLIENT_ID)?.secret;
  return { created: result.created, ...(webSecret ? { webSecret } : {}) };
}

async function repointDemoApplication(db: Database, opts: Pick<ImportOptions, "clock"> & { publicUrl: string }): Promise<{ created: false; repointed?: string[] }> {
  const app = demoAppUris(opts.publicUrl);
  const rows = await db
    .select({ id: clients.id, clientId: clients.clientId, redirectUris: clients.redirectUris, postLogout: clients.postLogoutRedirectUris, origins: clients.allowedOrigins, scopes: clients.identityScopes, homeUri: clients.homeUri })
    .from(clients)
    .where(and(eq(clients.workspaceId, DEMO_WORKSPACE_ID), inArray(clients.clientId, [DEMO_SPA_CLIENT_ID, DEMO_MFA_CLIENT_ID, DEMO_WEB_CLIENT_ID])));
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
    if (row.homeUri === null && sameList(row.redirectUris, [app.callback])) {
      // Registered before home pages were: the portal's way back goes to /demo rather than the server's root.
      await db.update(clients).set({ homeUri: app.home, updatedAt: opts.clock.now() }).where(eq(clients.id, row.id));
      continue;
    }
    if (row.redirectUris.includes(app.callback) || row.redirectUris.length === 0 || !row.redirectUris.every(demoOwnedRedirect)) continue;
    await db
      .update(clients)
      .set({
        redirectUris: [app.callback],
        postLogoutRedirectUris: [app.home],
        homeUri: app.home,
        allowedOrigins: row.origins.filter((o) => o !== FORMER_DEMO_ORIGIN),
        updatedAt: opts.clock.now(),
      })
      .where(eq(clients.id, row.id));
    repointed.push(row.clientId);
  }
  return repointed.length ? { created: false, repointed: repointed.sort() } : { created: false };
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
