/**
 * The demo workspace a fresh installation starts with, so that `npm start` on an empty database
 * gives something to sign in to. Created only while no customer workspace exists yet.
 */
import { and, eq, ne } from "drizzle-orm";
import type { Database } from "../../db/client";
import { users, workspaces } from "../../db/schema";
import { verifyPassword } from "../authn/password";
import type { WorkspaceDocumentInput } from "./document";
import { importWorkspace, type ImportOptions } from "./file";

export const DEMO_WORKSPACE_ID = "demo";
export const DEMO_WEB_CLIENT_ID = "demo-web";
export const DEMO_MFA_CLIENT_ID = "demo-spa-mfa";

export const demoWorkspace = {
  id: DEMO_WORKSPACE_ID,
  name: "Demo workspace",
  // Every way to sign in, and a passkey offered to those who have none.
  auth_policy: { first_factors: ["password", "email_otp", "passkey"], mfa: "off", passkey_enrollment: "offer", sign_up: false },
  applications: [
    {
      client_id: "demo-spa",
      name: "Demo single-page app",
      type: "PUBLIC",
      redirect_uris: ["http://localhost:5173/callback"],
      post_logout_redirect_uris: ["http://localhost:5173/"],
      allowed_origins: ["http://localhost:5173"],
      identity_scopes: ["openid", "email", "profile"],
    },
    {
      // The same single-page app, registered again to show an application that requires MFA:
      // sign in with this client_id and the demo user is asked to enrol a second factor.
      client_id: DEMO_MFA_CLIENT_ID,
      name: "Demo single-page app (MFA required)",
      type: "PUBLIC",
      redirect_uris: ["http://localhost:5173/callback"],
      post_logout_redirect_uris: ["http://localhost:5173/"],
      allowed_origins: ["http://localhost:5173"],
      identity_scopes: ["openid", "email", "profile"],
      auth_policy: { mfa: "required" },
    },
    {
      client_id: DEMO_WEB_CLIENT_ID,
      name: "Demo web app",
      type: "WEB_CONFIDENTIAL",
      redirect_uris: ["http://localhost:4000/callback"],
      post_logout_redirect_uris: ["http://localhost:4000/"],
      allowed_origins: [],
      identity_scopes: ["openid", "email", "profile"],
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

/** The demo's applications for the start-up message, e.g. "demo-spa (public, PKCE)". */
export function demoClientsLine(): string {
  return demoWorkspace.applications
    .map((a) => `${a.client_id} (${a.type === "PUBLIC" ? "public, PKCE" : "confidential"}${"auth_policy" in a && a.auth_policy?.mfa === "required" ? ", MFA required" : ""})`)
    .join("  ");
}

/**
 * Imports the demo workspace when no workspace other than the operator ("system") workspace
 * exists. When this creates `demo-web`, its generated secret is returned so the start-up
 * message can print it once; it cannot be read back later.
 */
export async function ensureDemoWorkspace(
  db: Database,
  opts: Pick<ImportOptions, "clock" | "masterKey">,
): Promise<{ created: boolean; webSecret?: string }> {
  const [other] = await db
    .select({ id: workspaces.id })
    .from(workspaces)
    .where(and(ne(workspaces.id, "system"), eq(workspaces.system, false)))
    .limit(1);
  if (other) return { created: false };
  const result = await importWorkspace(db, demoWorkspace, { ...opts, generateSecrets: true });
  const webSecret = result.generatedSecrets?.find((s) => s.clientId === DEMO_WEB_CLIENT_ID)?.secret;
  return { created: result.created, ...(webSecret ? { webSecret } : {}) };
}

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
