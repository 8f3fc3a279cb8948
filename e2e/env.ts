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
