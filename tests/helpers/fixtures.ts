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
