/**
 * Where the e2e servers listen. Override with E2E_PORT / E2E_APP_PORT when the defaults are
 * taken (for example by another run on the same machine); the fixture's redirect URIs follow.
 */
export const LATCHKEY_PORT = Number(process.env.E2E_PORT || 3111);
export const APP_PORT = Number(process.env.E2E_APP_PORT || 3112);
export const ISSUER = `http://localhost:${LATCHKEY_PORT}/t/e2e`;
export const APP = `http://localhost:${APP_PORT}`;
