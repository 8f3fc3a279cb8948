/**
 * Where the e2e servers listen. Override with E2E_PORT / E2E_APP_PORT when the defaults are
 * taken (for example by another run on the same machine); the fixture's redirect URIs follow.
 */
export const LATCHKEY_PORT = Number(process.env.E2E_PORT || 3111);
export const APP_PORT = Number(process.env.E2E_APP_PORT || 3112);
export const ISSUER = `http://localhost:${LATCHKEY_PORT}/t/e2e`;
export const APP = `http://localhost:${APP_PORT}`;

/**
 * The single-page app of e2e/oidc-client-ts.spec.ts (e2e/spa/server.ts). The fixture registers
 * http://localhost:3113 as the origin, callback and sign-out destination of its public client
 * `e2e-browser`, so this port is fixed.
 */
export const SPA_PORT = 3113;
export const SPA = `http://localhost:${SPA_PORT}`;

/**
 * The SMTP server the email specs start in their own process (e2e/smtp-inbox.ts); the e2e
 * Latchkey server sends to it (SMTP_URL in playwright.config.ts). Specs that send no mail do not
 * need it: delivery happens after the answer, and a failure is only logged.
 */
export const SMTP_PORT = Number(process.env.E2E_SMTP_PORT || 3125);

/**
 * The e2e server's clock (e2e/serve.mjs): the system's, shifted by the milliseconds in this file.
 * A spec that moves it must put it back (shiftServerClock(0)) before it ends: the specs share the server.
 */
export const SERVER_CLOCK_FILE = `.test-data/e2e-clock-${LATCHKEY_PORT}`;

export async function shiftServerClock(ms: number): Promise<void> {
  const { writeFileSync } = await import("node:fs");
  writeFileSync(SERVER_CLOCK_FILE, String(ms));
  // The server re-reads the file at most every 100 ms.
  await new Promise((resolve) => setTimeout(resolve, 250));
}

/**
 * Federation (e2e/federation.spec.ts). The upstreams the spec starts listen on fixed ports because
 * e2e/fixtures/e2e-workspace.json names them (the social providers' issuer and endpoints); the
 * application that offers them is a client of its own, so the other specs' sign-in page keeps
 * no social buttons.
 */
export const CONTOSO_PORT = 3118; // oidc-provider: the generic OpenID Connect provider "Contoso ID"
export const GITHUB_PORT = 3119; // the GitHub stand-in
export const FEDERATION_APP_PORT = 3120; // the customer app for the client e2e-federation
export const CONTOSO_ISSUER = `http://127.0.0.1:${CONTOSO_PORT}`;
export const GITHUB_ORIGIN = `http://127.0.0.1:${GITHUB_PORT}`;
/** The enterprise identity provider: a second workspace of the same server (e2e/fixtures/e2e-idp-workspace.json). */
export const IDP_ISSUER = `http://localhost:${LATCHKEY_PORT}/t/e2e-idp`;
/**
 * The upstreams' client credentials for the e2e workspace. e2e/serve.mjs gives the same secrets to
 * the import as the environment values the fixture's `{"env": ...}` references name: keep both in step.
 */
export const CONTOSO_CLIENT = { id: "latchkey-e2e", secret: "contoso-e2e-secret-0123456789abcdef" };
export const GITHUB_CLIENT = { id: "Iv1.e2estandin01", secret: "github-e2e-secret-0123456789abcdef" };

/**
 * Workspace hostnames (e2e/hostnames.spec.ts): the workspace `acme` of
 * e2e/fixtures/e2e-hostnames-workspace.json has the verified hostname login.acme.test, served with
 * PUBLIC_URL's scheme and port. No DNS knows these names: Chromium maps them to loopback
 * (HOST_RESOLVER_RULES, in playwright.config.ts), the customer app with its RESOLVE mapping.
 */
export const ACME_HOSTNAME = "login.acme.test";
/** A name that reaches the server but is no one's hostname. */
export const UNKNOWN_HOSTNAME = "other.acme.test";
export const ACME_ISSUER = `http://${ACME_HOSTNAME}:${LATCHKEY_PORT}/t/acme`;
/** The same workspace at the default host. */
export const ACME_DEFAULT_HOST_ISSUER = `http://localhost:${LATCHKEY_PORT}/t/acme`;
export const ACME_APP_PORT = 3121; // the customer app for the client acme-web (the fixture's redirect URIs)
export const HOST_RESOLVER_RULES = `MAP ${ACME_HOSTNAME} 127.0.0.1, MAP ${UNKNOWN_HOSTNAME} 127.0.0.1`;
