/** The standard test workspace, in the workspace file format users import. */
export const SPA = { client_id: "spa", redirect_uri: "https://app.example.test/callback" };
export const WEB = { client_id: "web", redirect_uri: "https://web.example.test/callback", secret: "web-secret-0123456789abcdef0123456789abcdef" };
export const M2M = { client_id: "m2m", secret: "m2m-secret-0123456789abcdef0123456789abcdef" };
export const MINIMAL = { client_id: "minimal", redirect_uri: "https://min.example.test/cb" };
export const API = "https://api.example.test";
export const ADA = { email: "ada@example.test", password: "correct horse battery staple", name: "Ada Lovelace" };
export const BOB = { email: "bob@example.test", password: "another long password" };

type Entry = Record<string, unknown>;
export interface TestWorkspace {
  id: string;
  name: string;
  applications: Entry[];
  apis: Entry[];
  api_grants: Entry[];
  roles: Entry[];
  users: Entry[];
}

export function standardWorkspace(id: string): TestWorkspace {
  return {
    id,
    name: `Workspace ${id}`,
    applications: [
      {
        client_id: SPA.client_id,
        name: "Single-page app",
        type: "PUBLIC",
        redirect_uris: [SPA.redirect_uri],
        post_logout_redirect_uris: ["https://app.example.test/"],
        allowed_origins: ["https://app.example.test"],
        identity_scopes: ["openid", "email", "profile"],
      },
      {
        client_id: WEB.client_id,
        name: "Server web app",
        type: "WEB_CONFIDENTIAL",
        redirect_uris: [WEB.redirect_uri],
        post_logout_redirect_uris: ["https://web.example.test/signed-out"],
        identity_scopes: ["openid", "email", "profile"],
        secret: WEB.secret,
      },
      { client_id: M2M.client_id, name: "Worker", type: "M2M", secret: M2M.secret },
      { client_id: MINIMAL.client_id, name: "Minimal", type: "PUBLIC", redirect_uris: [MINIMAL.redirect_uri], identity_scopes: ["openid"] },
    ],
    apis: [{ audience: API, name: "Things API", permissions: ["read:things", "write:things", "admin:things"] }],
    api_grants: [
      { client_id: SPA.client_id, audience: API, permissions: ["read:things", "write:things"] },
      { client_id: M2M.client_id, audience: API, permissions: ["read:things"] },
    ],
    roles: [{ name: "reader", permissions: [{ audience: API, permissions: ["read:things"] }] }],
    users: [
      { email: ADA.email, name: ADA.name, password: ADA.password, email_verified: true, roles: ["reader"] },
      { email: BOB.email, password: BOB.password, email_verified: false },
    ],
  };
}

/** APIs beside API in authzWorkspace: one not granted to M2M, one inactive, one with 70 permissions. */
export const OTHER_API = "https://other.example.test";
export const INACTIVE_API = "https://inactive.example.test";
export const WIDE_API = "https://wide.example.test";
export const WIDE_PERMISSIONS = Array.from({ length: 70 }, (_, i) => `p:${String(i).padStart(2, "0")}`);
export const ACME = "acme";
export const GLOBEX = "globex";

/**
 * The standard workspace plus the authorization model: three roles, two organizations, the SPA,
 * the web app and the M2M client granted API; M2M also granted the wide and the inactive API.
 * Ada holds reader and writer at workspace level and admin in acme; Bob holds reader in globex.
 */
export function authzWorkspace(id: string): TestWorkspace & { organizations: Entry[] } {
  const base = standardWorkspace(id);
  return {
    ...base,
    apis: [
      { audience: API, name: "Things API", permissions: ["read:things", "write:things", "admin:things"] },
      { audience: OTHER_API, name: "Other API", permissions: ["read:other"] },
      { audience: INACTIVE_API, name: "Inactive API", active: false, permissions: ["read:inactive"] },
      { audience: WIDE_API, name: "Wide API", permissions: WIDE_PERMISSIONS },
    ],
    api_grants: [
      { client_id: SPA.client_id, audience: API, permissions: ["read:things", "write:things", "admin:things"] },
      { client_id: WEB.client_id, audience: API, permissions: ["read:things", "write:things"] },
      { client_id: M2M.client_id, audience: API, permissions: ["read:things", "write:things"] },
      { client_id: M2M.client_id, audience: WIDE_API, permissions: WIDE_PERMISSIONS },
      { client_id: M2M.client_id, audience: INACTIVE_API, permissions: ["read:inactive"] },
    ],
    roles: [
      { name: "reader", permissions: [{ audience: API, permissions: ["read:things"] }] },
      { name: "writer", permissions: [{ audience: API, permissions: ["write:things"] }] },
      { name: "admin", permissions: [{ audience: API, permissions: ["admin:things", "read:things"] }] },
    ],
    organizations: [
      { slug: ACME, name: "Acme", members: [ADA.email] },
      { slug: GLOBEX, name: "Globex", members: [ADA.email, BOB.email] },
    ],
    users: [
      { email: ADA.email, name: ADA.name, password: ADA.password, email_verified: true, roles: ["reader", "writer", { role: "admin", organization: ACME }] },
      { email: BOB.email, password: BOB.password, email_verified: false, roles: [{ role: "reader", organization: GLOBEX }] },
    ],
  };
}
