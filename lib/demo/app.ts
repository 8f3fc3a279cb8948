/**
 * A small relying party built on the integration guide's module (./latchkey.ts): the demo
 * application this server offers at /demo (./serve.ts), and the guide's application in the
 * end-to-end tests. One framework-free handler, `(Request) => Promise<Response>`:
 *
 *   GET  {base}            signed out: the sign-in buttons; signed in: the user, the ID token's
 *                          claims, UserInfo's answer, the session check's answer, and the buttons
 *                          (with "Security settings" when the application offers the
 *                          account-security portal: the backend handoff, see below)
 *   POST {base}/start      code flow with PKCE, state and nonce (field `app`: "standard" or "mfa")
 *   GET  {callback path}   the registered redirect URI: the transaction consumed once, the code exchanged
 *   POST {base}/refresh    refresh grant (the refresh token rotates)
 *   POST {base}/revoke     revokes the refresh token (the grant ends; the hosted session does not)
 *   POST {base}/logout     ends the local session, then hosted logout back to {base}
 *   POST {base}/account-security/start
 *                          "Security settings": the backend handoff's start route (SPEC.md "Customer
 *                          backend routes in the handoff"): a pending record under a fresh state,
 *                          `launch` with the user's access token, 303 to the launch URL
 *   GET  {handoff callback path}
 *                          the registered handoff callback: challenge, state and intent checked
 *                          against the pending record, taken once for this browser; `approve`; 303
 *                          to the completion URL. The portal's way back (`return_uri`) is {base}.
 *   GET  {base}/style.css  the stylesheet (pages carry no inline style or script)
 *
 * Tokens stay on the server: each browser has a random id in an HttpOnly, SameSite=Lax cookie
 * scoped to {base}, keying an in-memory record (transaction, tokens, pending handoff launches, the
 * last events). Nothing survives a restart, and with several server processes (WEB_CONCURRENCY) a
 * browser may reach one that does not know it: it is a demo, a real application keeps sessions in
 * its own store.
 * Every POST must come from this application's own pages (lib/http/guards.ts sameOriginRequest):
 * that is its CSRF proof.
 *
 * "Security settings" is the account-security backend handoff (./handoff.ts) for a confidential
 * registration; it registers the handoff's destinations itself when they are not saved yet, as a
 * customer server does before its first launch. Only when that is impossible (a public
 * registration, or a refused configuration) is the button the portal's direct link, and the page
 * says why.
 */
import { createHash, randomBytes } from "node:crypto";
import { parseCookieHeader } from "../http/cookies";
import { sameOriginRequest } from "../http/guards";
import { SECURITY_HEADERS } from "../http/security-headers";
import { escapeHtml as esc } from "../hosted/html";
import { exactQuery, expiryTime, handoffCall, LAUNCH_TTL_MS, newLaunchState, putPendingLaunch, takePendingLaunch, type PendingLaunch } from "./handoff";
import * as latchkey from "./latchkey";
import type { Latchkey, Registration, SignedIn, Transaction } from "./latchkey";
import { DEMO_STYLESHEET } from "./style";

export type DemoAppKind = "standard" | "mfa";

export interface DemoAppOptions {
  /** This application's origin (its pages post only to it), e.g. http://localhost:3000. */
  origin: string;
  /** The path the application lives under, e.g. /demo; its home page, where sign-out comes back to. */
  basePath: string;
  /** The registrations it signs in with; `mfa` offers a second button. The redirect URI's path is the callback route. */
  registrations: { standard: Registration; mfa?: Registration };
  /** Shown on the signed-out page (e.g. the demo user's credentials), as text. */
  hint?: () => Promise<string | null>;
  /** Why the application cannot sign anyone in right now (asked on every request), or null. */
  unavailable?: () => Promise<string | null>;
  /**
   * Latchkey's account-security portal (docs/account-security.md). `status` is asked when the
   * signed-in page is drawn; `callbackUri` (a route of this application, on its origin) and
   * `returnUri` are the handoff destinations it registers. Absent: no "Security settings".
   */
  portal?: {
    status: (clientId: string) => Promise<PortalStatus>;
    callbackUri: string;
    returnUri: string;
  };
  /** Discovery (the guide's `connect`); replaceable in tests. */
  connect?: (registration: Registration) => Promise<Latchkey>;
}

/** Whether an application offers the portal, and the handoff configuration it has saved (nulls when none). */
export interface PortalStatus {
  offered: boolean;
  saved: { callbackUri: string | null; returnUri: string | null; version: number };
}

interface BrowserState {
  seenAt: number;
  transaction?: { kind: DemoAppKind; value: Transaction; expiresAt: number };
  session?: { kind: DemoAppKind; signedIn: SignedIn; revoked: boolean; refreshes: number };
  /** Pending handoff launches of this browser, by state. */
  launches: Map<string, PendingLaunch<DemoAppKind>>;
  /** What the last actions did, newest first, shown on the next page. */
  events: string[];
}

/** A transaction not finished within this long is dropped (the hosted sign-in's own limit is shorter). */
const TRANSACTION_TTL_MS = 10 * 60_000;
/** Browsers idle this long are forgotten; at most MAX_BROWSERS are kept (the oldest go first). */
const IDLE_MS = 12 * 60 * 60_000;
const MAX_BROWSERS = 1000;
const MAX_EVENTS = 5;

/**
 * The records live on globalThis: in the production server this module can be loaded twice (the
 * direct path in server.ts and Next's bundle of app/demo), and both must see the same browsers.
 */
function storeFor(key: string): Map<string, BrowserState> {
  const all = ((globalThis as Record<symbol, unknown>)[Symbol.for("latchkey.demo-app.browsers")] ??= new Map()) as Map<string, Map<string, BrowserState>>;
  let store = all.get(key);
  if (!store) all.set(key, (store = new Map()));
  return store;
}

export function createDemoApp(options: DemoAppOptions): (request: Request) => Promise<Response> {
  const base = options.basePath.replace(/\/$/, "");
  const cookieName = "latchkey_demo";
  const secureCookie = new URL(options.origin).protocol === "https:" || new URL(options.origin).hostname === "localhost";
  const browsers = storeFor(`${options.origin}${base}`);
  const connect = options.connect ?? latchkey.connect;
  const connections = new Map<DemoAppKind, Promise<Latchkey>>();
  const callbackPath = new URL(options.registrations.standard.redirectUri).pathname;
  const handoffCallbackPath = options.portal ? new URL(options.portal.callbackUri).pathname : null;

  /** Discovery once per registration; a failure is not kept, so the next request tries again. */
  function connection(kind: DemoAppKind): Promise<Latchkey> {
    const registration = kind === "mfa" ? options.registrations.mfa : options.registrations.standard;
    if (!registration) return Promise.reject(new Error("no such application"));
    let pending = connections.get(kind);
    if (!pending) {
      pending = connect(registration);
      connections.set(kind, pending);
      pending.catch(() => connections.delete(kind));
    }
    return pending;
  }

  function browserOf(request: Request): { id: string; state: BrowserState; fresh: boolean } {
    const now = Date.now();
    const id = parseCookieHeader(request.headers.get("cookie")).get(cookieName);
    const known = id && /^[A-Za-z0-9_-]{43}$/.test(id) ? browsers.get(id) : undefined;
    if (known && now - known.seenAt < IDLE_MS) {
      known.seenAt = now;
      // Most recently used last, so eviction takes the oldest.
      browsers.delete(id!);
      browsers.set(id!, known);
      return { id: id!, state: known, fresh: false };
    }
    if (id && known) browsers.delete(id);
    const state: BrowserState = { seenAt: now, events: [], launches: new Map() };
    const fresh = randomBytes(32).toString("base64url");
    browsers.set(fresh, state);
    while (browsers.size > MAX_BROWSERS) browsers.delete(browsers.keys().next().value!);
    return { id: fresh, state, fresh: true };
  }

  const cookie = (id: string) => `${cookieName}=${id}; Path=${base || "/"}; HttpOnly; SameSite=Lax${secureCookie ? "; Secure" : ""}`;

  function page(status: number, title: string, body: string, browser?: { id: string; fresh: boolean }): Response {
    const headers = new Headers({
      ...SECURITY_HEADERS,
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": `default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self' ${new URL(options.registrations.standard.issuer).origin}; base-uri 'none'; frame-ancestors 'none'`,
    });
    if (browser?.fresh) headers.append("set-cookie", cookie(browser.id));
    return new Response(layout(base, title, body), { status, headers });
  }

  function redirect(location: string, browser?: { id: string; fresh: boolean }): Response {
    const headers = new Headers({ ...SECURITY_HEADERS, location, "cache-control": "no-store" });
    if (browser?.fresh) headers.append("set-cookie", cookie(browser.id));
    return new Response(null, { status: 303, headers });
  }

  const note = (state: BrowserState, text: string) => {
    state.events.unshift(`${new Date().toISOString().slice(11, 19)} UTC: ${text}`);
    state.events.length = Math.min(state.events.length, MAX_EVENTS);
  };

  async function home(request: Request): Promise<Response> {
    const browser = browserOf(request);
    const { state } = browser;
    const unavailable = await options.unavailable?.();
    if (unavailable) return page(503, "Demo application unavailable", `<h1>The demo application is not available</h1><p>${esc(unavailable)}</p>`, browser);
    const events = state.events.length ? `<section aria-labelledby="events"><h2 id="events">What just happened</h2><ul class="events">${state.events.map((e) => `<li>${esc(e)}</li>`).join("")}</ul></section>` : "";
    if (!state.session) {
      const hint = await options.hint?.();
      const mfa = options.registrations.mfa
        ? `<form method="post" action="${base}/start"><input type="hidden" name="app" value="mfa"><button type="submit" class="secondary">Sign in with MFA required</button></form>`
        : "";
      return page(
        200,
        "Demo application",
        `<h1>Demo application</h1>
<p>This small application signs its users in with Latchkey (OpenID Connect, authorization code with PKCE) as the application <code>${esc(options.registrations.standard.clientId)}</code> of <code>${esc(options.registrations.standard.issuer.href)}</code>.</p>
${hint ? `<p class="hint">${esc(hint)}</p>` : ""}
${events}
<div class="actions"><form method="post" action="${base}/start"><input type="hidden" name="app" value="standard"><button type="submit">Sign in</button></form>${mfa}</div>`,
        browser,
      );
    }
    const { signedIn, kind, revoked, refreshes } = state.session;
    const lk = await connection(kind);
    const check = await latchkey.sessionCheck(lk, signedIn).catch((error: unknown) => ({ status: 0, body: { error: errorText(error) } }));
    const valid = await latchkey.checkSession(lk, signedIn);
    const name = typeof signedIn.userinfo.name === "string" ? signedIn.userinfo.name : typeof signedIn.claims.name === "string" ? signedIn.claims.name : "";
    const security = options.portal ? securitySettings(base, lk.registration, await portalEntry(lk.registration)) : "";
    const email = typeof signedIn.userinfo.email === "string" ? signedIn.userinfo.email : "";
    return page(
      200,
      "Signed in: demo application",
      `<h1>Signed in${name ? ` as ${esc(name)}` : ""}</h1>
<p>${email ? `<strong>${esc(email)}</strong> · ` : ""}application <code>${esc(lk.registration.clientId)}</code>${kind === "mfa" ? " (MFA required)" : ""} · subject <code>${esc(signedIn.sub)}</code></p>
${events}
<section aria-labelledby="check"><h2 id="check">Session check</h2>
<p>The application asks <code>${esc(lk.registration.issuer.href)}/oidc/session</code> whether this sign-in is still valid: HTTP ${check.status || "(no answer)"}, so <strong class="${valid ? "ok" : "bad"}">${valid ? "still valid" : "no longer valid"}</strong>.</p>
<pre>${esc(JSON.stringify(check.body, null, 2))}</pre></section>
<section aria-labelledby="tokens"><h2 id="tokens">Tokens</h2>
<p>Kept on the server, never sent to this page. Access token <code>#${fingerprint(signedIn.accessToken)}</code> expires at ${esc(new Date(signedIn.accessTokenExpiresAt).toISOString().slice(11, 19))} UTC; refresh token <code>#${fingerprint(signedIn.refreshToken)}</code>${revoked ? " (revoked)" : ""}; refreshed ${refreshes} time${refreshes === 1 ? "" : "s"}.</p>
<div class="actions">
<form method="post" action="${base}/refresh"><button type="submit">Refresh tokens</button></form>
<form method="post" action="${base}/revoke"><button type="submit" class="secondary">Revoke</button></form>
<form method="post" action="${base}/logout"><button type="submit" class="secondary">Sign out</button></form>
</div></section>
${security}
<section aria-labelledby="claims"><h2 id="claims">ID token claims</h2><pre>${esc(JSON.stringify(signedIn.claims, null, 2))}</pre></section>
<section aria-labelledby="userinfo"><h2 id="userinfo">UserInfo</h2><pre>${esc(JSON.stringify(signedIn.userinfo, null, 2))}</pre></section>`,
      browser,
    );
  }

  async function start(request: Request): Promise<Response> {
    const browser = browserOf(request);
    const unavailable = await options.unavailable?.();
    if (unavailable) return page(503, "Demo application unavailable", `<h1>The demo application is not available</h1><p>${esc(unavailable)}</p>`, browser);
    const form = await request.formData().catch(() => null);
    const kind: DemoAppKind = form?.get("app") === "mfa" && options.registrations.mfa ? "mfa" : "standard";
    let lk: Latchkey;
    try {
      lk = await connection(kind);
    } catch (error) {
      return page(502, "Issuer unreachable", `<h1>The application cannot reach its issuer</h1><p>Discovery of <code>${esc(options.registrations.standard.issuer.href)}</code> failed: ${esc(errorText(error))}</p>${back(base)}`, browser);
    }
    const { transaction, url } = await latchkey.startSignIn(lk);
    browser.state.transaction = { kind, value: transaction, expiresAt: Date.now() + TRANSACTION_TTL_MS };
    return redirect(url.href, browser);
  }

  async function callback(request: Request): Promise<Response> {
    const browser = browserOf(request);
    const url = new URL(request.url);
    const pending = browser.state.transaction;
    // Consumed once, whatever happens next.
    delete browser.state.transaction;
    const fail = (title: string, text: string) => page(400, title, `<h1>${esc(title)}</h1><p>${text}</p>${back(base)}`, browser);
    if (!pending || pending.expiresAt < Date.now()) {
      return fail("Sign-in not finished", "This browser has no sign-in in progress here: it was already finished, it took more than 10 minutes, or it was started elsewhere. Start again.");
    }
    if (url.searchParams.get("state") !== pending.value.state) {
      return fail("Sign-in not finished", "The answer does not belong to the sign-in this browser started (its <code>state</code> differs), so it was refused. Start again.");
    }
    const error = url.searchParams.get("error");
    if (error) {
      const description = url.searchParams.get("error_description");
      const what = error === "access_denied" ? "The sign-in was cancelled or refused" : "Latchkey could not sign you in";
      return fail("Sign-in not finished", `${esc(what)} (<code>${esc(error)}</code>${description ? `: ${esc(description)}` : ""}).`);
    }
    try {
      const lk = await connection(pending.kind);
      const signedIn = await latchkey.finishSignIn(lk, url.pathname + url.search, pending.value);
      browser.state.session = { kind: pending.kind, signedIn, revoked: false, refreshes: 0 };
      browser.state.events = [];
      note(browser.state, "Signed in: the code was exchanged for tokens, the ID token verified and UserInfo fetched.");
      return redirect(`${base}`, browser);
    } catch (error) {
      return fail("Sign-in not finished", `The code could not be exchanged: ${esc(errorText(error))}.`);
    }
  }

  async function action(request: Request, name: "refresh" | "revoke" | "logout"): Promise<Response> {
    if (!sameOriginRequest(request, options.origin)) {
      return page(403, "Refused", `<h1>Refused</h1><p>This form was not sent from this application's own page.</p>${back(base)}`);
    }
    const browser = browserOf(request);
    const { state } = browser;
    const session = state.session;
    if (!session) return redirect(base, browser);
    const lk = await connection(session.kind);
    if (name === "refresh") {
      try {
        const next = await latchkey.refresh(lk, session.signedIn);
        const rotated = next.refreshToken !== session.signedIn.refreshToken;
        note(state, `Refreshed: new access token #${fingerprint(next.accessToken)} until ${new Date(next.accessTokenExpiresAt).toISOString().slice(11, 19)} UTC; refresh token ${rotated ? `rotated #${fingerprint(session.signedIn.refreshToken)} → #${fingerprint(next.refreshToken)}` : "unchanged"}.`);
        session.signedIn = next;
        session.refreshes += 1;
      } catch (error) {
        // As the guide says: a failed refresh ends the local session.
        delete state.session;
        note(state, `Refresh refused (${errorText(error)}), so the application ended its session: sign in again.`);
      }
      return redirect(base, browser);
    }
    if (name === "revoke") {
      try {
        await latchkey.revoke(lk, session.signedIn);
        session.revoked = true;
        note(state, "Revoked the refresh token: the grant and its access tokens ended (the session check below says so; a refresh now fails). Your Latchkey sign-in itself is still open.");
      } catch (error) {
        note(state, `Revocation failed: ${errorText(error)}.`);
      }
      return redirect(base, browser);
    }
    delete state.session;
    if (session.revoked) {
      // Hosted logout needs the application's live grant; after a revocation it would only show an error.
      note(state, "Signed out of the application. The grant was revoked, so hosted logout was skipped: your Latchkey sign-in is still open (signing in again skips the password).");
      return redirect(base, browser);
    }
    note(state, "Signed out: the application ended its session, then Latchkey ended the hosted session and sent you back here.");
    return redirect(latchkey.logoutUrl(lk).href, browser);
  }

  /** How the signed-in page opens the portal for this registration: not at all, the backend handoff, or the direct link (and why). */
  async function portalEntry(registration: Registration): Promise<PortalEntry> {
    const portal = options.portal!;
    const status = await portal.status(registration.clientId);
    if (!status.offered) return { kind: "off" };
    if (registration.clientSecret === null) return { kind: "direct", why: "this is a public application (no client secret), and only confidential ones can use it" };
    const registered = (s: PortalStatus) => s.saved.callbackUri === portal.callbackUri && s.saved.returnUri === portal.returnUri;
    if (registered(status)) return { kind: "handoff" };
    // Not registered yet, or for other addresses: register them, as a customer server does before its first launch.
    const answer = await handoffCall(registration, "configuration", { callback_uri: portal.callbackUri, return_uri: portal.returnUri, version: status.saved.version });
    if (answer.ok) return { kind: "handoff" };
    // A stale version: another process registered meanwhile, which is fine when it registered the same.
    if (answer.code === "VERSION_CONFLICT" && registered(await portal.status(registration.clientId))) return { kind: "handoff" };
    const refusal = `HTTP ${answer.status}${answer.code ? ` ${answer.code}` : ""}`;
    console.error(`[latchkey] demo application: the handoff configuration of ${registration.clientId} was refused (${refusal})`);
    return { kind: "direct", why: `Latchkey refused its handoff configuration (${refusal})` };
  }

  /**
   * The user's access token for this browser's sign-in, refreshed first when it expires within 30
   * seconds; null when the refresh fails, which ends the local session (as the guide says).
   */
  async function currentAccessToken(state: BrowserState, lk: Latchkey): Promise<string | null> {
    const session = state.session!;
    if (session.signedIn.accessTokenExpiresAt - Date.now() > 30_000) return session.signedIn.accessToken;
    try {
      session.signedIn = await latchkey.refresh(lk, session.signedIn);
      session.refreshes += 1;
      note(state, "Refreshed the tokens first: the access token was about to expire.");
      return session.signedIn.accessToken;
    } catch (error) {
      delete state.session;
      note(state, `Refresh refused (${errorText(error)}), so the application ended its session: sign in again.`);
      return null;
    }
  }

  /** Latchkey no longer accepts the sign-in behind the token: end the local session. */
  function signInAgain(state: BrowserState): void {
    delete state.session;
    note(state, "Latchkey answered REAUTHENTICATION_REQUIRED (the sign-in behind the access token has ended), so the application ended its session: sign in again.");
  }

  /** POST {base}/account-security/start: "Security settings", the handoff's start route. */
  async function securityStart(request: Request): Promise<Response> {
    const browser = browserOf(request);
    const { state } = browser;
    const session = state.session;
    if (!session) return redirect(base, browser);
    const lk = await connection(session.kind);
    const token = await currentAccessToken(state, lk);
    if (!token) return redirect(base, browser);
    const launchState = newLaunchState();
    const now = Date.now();
    const pending: PendingLaunch<DemoAppKind> = { kind: session.kind, sub: session.signedIn.sub, intent: null, expiresAt: now + LAUNCH_TTL_MS };
    putPendingLaunch(state.launches, launchState, pending, now);
    const launch = await handoffCall(lk.registration, "launch", { user_token: token, state: launchState });
    if (!launch.ok) {
      state.launches.delete(launchState);
      if (launch.code === "REAUTHENTICATION_REQUIRED") signInAgain(state);
      else note(state, `Security settings could not be opened: Latchkey's launch answered HTTP ${launch.status}${launch.code ? ` ${launch.code}` : ""}.`);
      return redirect(base, browser);
    }
    const { launch_url: launchUrl, intent } = launch.body;
    const expiresAt = expiryTime(launch.body.expires_at);
    // Only ever to the pinned issuer.
    if (typeof launchUrl !== "string" || !launchUrl.startsWith(`${lk.registration.issuer.href}/`) || typeof intent !== "string" || expiresAt === null) {
      state.launches.delete(launchState);
      note(state, "Security settings could not be opened: Latchkey's launch answer was not understood.");
      return redirect(base, browser);
    }
    pending.intent = intent;
    pending.expiresAt = Math.min(pending.expiresAt, expiresAt);
    note(state, "Security settings: the application's server started a backend handoff (launch, with its client secret and your access token, server to server) and sent your browser to the launch URL.");
    return redirect(launchUrl, browser);
  }

  /** GET the registered handoff callback. */
  async function securityCallback(request: Request): Promise<Response> {
    const browser = browserOf(request);
    const { state } = browser;
    const fail = (text: string) => page(400, "Security settings not opened", `<h1>Security settings not opened</h1><p>${text}</p>${back(base)}`, browser);
    const query = exactQuery(new URL(request.url).searchParams, ["challenge", "state", "intent"]);
    if (!query) return fail("The handoff callback must carry exactly <code>challenge</code>, <code>state</code> and <code>intent</code>, once each.");
    // Taken first, once, and only from this browser's own records.
    const pending = takePendingLaunch(state.launches, query.state);
    if (!pending) {
      return fail("No security-settings launch of this browser matches this callback: it was already used, it is more than 2 minutes old, or it was started in another browser. Open Security settings again.");
    }
    const session = state.session;
    if (!session || session.kind !== pending.kind || session.signedIn.sub !== pending.sub || pending.intent === null || pending.intent !== query.intent) {
      return fail("This callback does not belong to the sign-in that started the launch (another user, another sign-in or another intent), so it was refused.");
    }
    const lk = await connection(session.kind);
    const token = await currentAccessToken(state, lk);
    if (!token) return redirect(base, browser);
    const approval = await handoffCall(lk.registration, "approve", { user_token: token, challenge: query.challenge, state: query.state });
    if (!approval.ok) {
      if (approval.code === "REAUTHENTICATION_REQUIRED") {
        signInAgain(state);
        return redirect(base, browser);
      }
      return fail(`Latchkey did not approve the handoff (HTTP ${approval.status}${approval.code ? ` <code>${esc(approval.code)}</code>` : ""}). Open Security settings again.`);
    }
    const completionUrl = approval.body.completion_url;
    if (typeof completionUrl !== "string" || !completionUrl.startsWith(`${lk.registration.issuer.href}/`)) return fail("Latchkey's approval was not understood.");
    note(state, "Security settings: Latchkey sent your browser back with a challenge, the application's server approved it (approve) and sent you on to the portal.");
    return redirect(completionUrl, browser);
  }

  return async (request) => {
    const url = new URL(request.url);
    const path = url.pathname.replace(/\/$/, "") || "/";
    const method = request.method === "HEAD" ? "GET" : request.method; // as Next answers HEAD
    try {
      if (method === "GET" && path === `${base}/style.css`) {
        return new Response(DEMO_STYLESHEET, { headers: { ...SECURITY_HEADERS, "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=300" } });
      }
      if (method === "GET" && path === callbackPath) return await callback(request);
      if (method === "GET" && path === handoffCallbackPath) return await securityCallback(request);
      if (method === "POST" && options.portal && path === `${base}/account-security/start`) {
        if (!sameOriginRequest(request, options.origin)) return page(403, "Refused", `<h1>Refused</h1><p>This form was not sent from this application's own page.</p>${back(base)}`);
        return await securityStart(request);
      }
      if (method === "GET" && (path === (base || "/") || path === new URL(options.registrations.standard.signedOutUri).pathname.replace(/\/$/, ""))) return await home(request);
      if (method === "POST" && path === `${base}/start`) {
        if (!sameOriginRequest(request, options.origin)) return page(403, "Refused", `<h1>Refused</h1><p>This form was not sent from this application's own page.</p>${back(base)}`);
        return await start(request);
      }
      if (method === "POST" && (path === `${base}/refresh` || path === `${base}/revoke` || path === `${base}/logout`)) {
        return await action(request, path.slice(base.length + 1) as "refresh" | "revoke" | "logout");
      }
      return page(404, "Not found", `<h1>Not found</h1><p>This page is not part of the demo application.</p>${back(base)}`);
    } catch (error) {
      console.error(`[latchkey] demo application: ${errorText(error)}`);
      return page(502, "Something failed", `<h1>Something failed</h1><p>${esc(errorText(error))}</p>${back(base)}`);
    }
  };
}

type PortalEntry = { kind: "off" } | { kind: "handoff" } | { kind: "direct"; why: string };

/**
 * The "Security settings" section. The backend handoff: a form post to this application's start
 * route. The direct link (only when the handoff is not possible): a plain GET to the issuer, which
 * opens the portal on the user's hosted session, or asks them to sign in, and never signs anyone
 * in to this application. Either way the portal's "Back to …" comes back to {base}.
 */
function securitySettings(base: string, registration: Registration, entry: PortalEntry): string {
  const heading = `<h2 id="security">Security settings</h2>`;
  if (entry.kind === "off") {
    return `<section aria-labelledby="security">${heading}<p>Latchkey's account-security portal is switched off for <code>${esc(registration.clientId)}</code>: an operator switches it on in the console (the application's page, "Offer the account-security portal").</p></section>`;
  }
  const what = "Passkeys, authenticator apps, security keys, recovery codes and the applications signed in as you, on Latchkey's account-security portal";
  if (entry.kind === "handoff") {
    return `<section aria-labelledby="security">${heading}
<p>${what}. The button is the backend handoff: this application's server asks Latchkey for a launch with its client secret and your access token (server to server, <code>${esc(registration.issuer.href)}/auth/account/launch</code>) and sends your browser to it, where your Latchkey sign-in opens the portal.</p>
<div class="actions"><form method="post" action="${base}/account-security/start"><button type="submit">Security settings</button></form></div></section>`;
  }
  return `<section aria-labelledby="security">${heading}
<p>${what}. The backend handoff is not available: ${esc(entry.why)}. So the button is the portal's direct link instead (<code>${esc(registration.issuer.href)}/auth/account</code>).</p>
<div class="actions"><form method="get" action="${esc(registration.issuer.href)}/auth/account"><input type="hidden" name="client_id" value="${esc(registration.clientId)}"><button type="submit">Security settings</button></form></div></section>`;
}

function layout(base: string, title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><link rel="stylesheet" href="${base}/style.css"></head>
<body><main>
${body}
<footer><a href="/">Latchkey home</a></footer>
</main></body></html>`;
}

const back = (base: string) => `<p><a href="${base || "/"}">Back to the demo application</a></p>`;

/** A short, non-secret name for a token: the start of its SHA-256. */
function fingerprint(token: string): string {
  return createHash("sha256").update(token).digest("hex").slice(0, 8);
}

/** An error as one line: openid-client's OAuth errors by their `error` code and description. */
function errorText(error: unknown): string {
  if (error && typeof error === "object") {
    const e = error as { error?: unknown; error_description?: unknown; code?: unknown; message?: unknown };
    if (typeof e.error === "string") return typeof e.error_description === "string" ? `${e.error}: ${e.error_description}` : e.error;
    if (typeof e.message === "string") return typeof e.code === "string" ? `${e.message} (${e.code})` : e.message;
  }
  return String(error);
}
