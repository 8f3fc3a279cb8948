/**
 * The console's sign-in routes under /console/auth, as plain endpoints over Web types: each
 * route.ts binds one (`export const POST = consoleSignOut;`). What each declares:
 *
 * - start (GET): no guard. It only opens a fresh transaction bound to this browser's cookie and
 *   sends the browser to the system workspace's authorize endpoint; a cross-site link to it
 *   changes nothing but that.
 * - callback (GET): no guard. The transaction cookie (HttpOnly, set by start in this browser) and
 *   `state` are its proof that this browser began the sign-in (lib/console/login.ts).
 * - sign-out (POST): the same-origin guard (lib/http/guards.ts), as every form post to our pages;
 *   the session cookie is SameSite=Lax too.
 */
import { clientAddressOf } from "../http/client-address";
import { parseCookieHeader } from "../http/cookies";
import { guarded, sameOrigin, type GuardContext } from "../http/guards";
import { redirect303 } from "../http/response";
import { hostedError } from "../hosted/errors";
import { getService } from "../service";
import { CONSOLE_SESSION_COOKIE } from "./authz";
import { clearLoginCookie, clearSessionCookie, CONSOLE_TX_COOKIE, ConsoleLoginError, endConsoleSession, finishConsoleLogin, safeReturnTo, startConsoleLogin } from "./login";

/** A console route as Next binds it; the service is the process's own. */
export type ConsoleRoute = (request: Request) => Promise<Response>;

/** The endpoint with the process's service, for binding in a route.ts. */
export const withService =
  (endpoint: (request: Request, ctx: GuardContext) => Promise<Response>): ConsoleRoute =>
  async (request) => {
    const service = await getService();
    // The console is served at the default host only (lib/hostnames): its origin is PUBLIC_URL.
    return endpoint(request, { service, origin: service.config.publicUrl });
  };

const redirect = (location: string, cookies: string[]): Response => redirect303(location, cookies.map((cookie): [string, string] => ["Set-Cookie", cookie]));

/** GET /console/auth/start: a fresh transaction, then the system workspace's authorize endpoint. */
export async function startEndpoint(request: Request, { service }: GuardContext): Promise<Response> {
  const next = safeReturnTo(new URL(request.url).searchParams.get("next"));
  const { location, cookie } = await startConsoleLogin(service, next);
  return redirect(location, [cookie]);
}

/** GET /console/auth/callback: consume the transaction, exchange the code, start a console session. */
export async function callbackEndpoint(request: Request, { service }: GuardContext): Promise<Response> {
  // The browser asked for PUBLIC_URL's callback; the query is all that is read from the request URL.
  const url = new URL(request.url);
  const callback = new URL(`${service.config.publicUrl}${url.pathname}${url.search}`);
  try {
    const done = await finishConsoleLogin(service, {
      url: callback,
      txCookie: parseCookieHeader(request.headers.get("cookie")).get(CONSOLE_TX_COOKIE),
      ip: clientAddressOf(request.headers, service.config.trustProxy),
      userAgent: request.headers.get("user-agent"),
    });
    return redirect(done.returnTo, [done.cookie, clearLoginCookie()]);
  } catch (error) {
    if (!(error instanceof ConsoleLoginError)) throw error;
    const page = hostedError("console_sign_in_failed", { reason: error.message }, { oauthError: error.code });
    page.headers.append("Set-Cookie", clearLoginCookie());
    return page;
  }
}

/**
 * POST /console/auth/sign-out, from the console's own pages: ends the console session, then hands
 * the browser to hosted logout, which ends the hosted session and returns to /console/signed-out.
 */
export const signOutEndpoint = guarded(
  async (request: Request, { service }: GuardContext): Promise<Response> => {
    const token = parseCookieHeader(request.headers.get("cookie")).get(CONSOLE_SESSION_COOKIE);
    const { logoutUrl } = await endConsoleSession(service, token);
    return redirect(logoutUrl, [clearSessionCookie()]);
  },
  { use: [sameOrigin(() => hostedError("cross_site_sign_out"))] },
);

export const consoleSignInStart: ConsoleRoute = withService(startEndpoint);
export const consoleSignInCallback: ConsoleRoute = withService(callbackEndpoint);
export const consoleSignOut: ConsoleRoute = withService(signOutEndpoint);
