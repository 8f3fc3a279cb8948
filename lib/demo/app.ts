/**
 * A small relying party built on the integration guide's module (./latchkey.ts): the demo
 * application this server offers at /demo (./serve.ts), and the guide's application in the
 * end-to-end tests. One framework-free handler, `(Request) => Promise<Response>`:
 *
 *   GET  {base}            signed out: the sign-in buttons; signed in: the user, the ID token's
 *                          claims, UserInfo's answer, the session check's answer, and the buttons
 *                          (with "Security settings", the account-security portal's direct link,
 *                          when the application offers the portal)
 *   POST {base}/start      code flow with PKCE, state and nonce (field `app`: "standard" or "mfa")
 *   GET  {callback path}   the registered redirect URI: the transaction consumed once, the code exchanged
 *   POST {base}/refresh    refresh grant (the refresh token rotates)
 *   POST {base}/revoke     revokes the refresh token (the grant ends; the hosted session does not)
 *   POST {base}/logout     ends the local session, then hosted logout back to {base}
 *   GET  {base}/style.css  the stylesheet (pages carry no inline style or script)
 *
 * Tokens stay on the server: each browser has a random id in an HttpOnly, SameSite=Lax cookie
 * scoped to {base}, keying an in-memory record (transaction, tokens, the last events). Nothing
 * survives a restart, and with several server processes (WEB_CONCURRENCY) a browser may reach
 * one that does not know it: it is a demo, a real application keeps sessions in its own store.
 * Every POST must come from this application's own pages (lib/http/guards.ts sameOriginRequest).
 */
import { createHash, randomBytes } from "node:crypto";
import { parseCookieHeader } from "../http/cookies";
import { sameOriginRequest } from "../http/guards";
import { SECURITY_HEADERS } from "../http/security-headers";
import { escapeHtml as esc } from "../hosted/html";
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
   * Whether the signed-in application offers Latchkey's account-security portal (asked when the
   * signed-in page is drawn): then the page has a "Security settings" button, the portal's direct
   * link for this client (docs/account-security.md). Absent: no button.
   */
  offersPortal?: (clientId: string) => Promise<boolean>;
  /** Discovery (the guide's `connect`); replaceable in tests. */
  connect?: (registration: Registration) => Promise<Latchkey>;
}

interface BrowserState {
  seenAt: number;
  transaction?: { kind: DemoAppKind; value: Transaction; expiresAt: number };
  session?: { kind: DemoAppKind; signedIn: SignedIn; revoked: boolean; refreshes: number };
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
    const state: BrowserState = { seenAt: now, events: [] };
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
    const security = options.offersPortal ? await securitySettings(lk.registration, await options.offersPortal(lk.registration.clientId)) : "";
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

  return async (request) => {
    const url = new URL(request.url);
    const path = url.pathname.replace(/\/$/, "") || "/";
    const method = request.method === "HEAD" ? "GET" : request.method; // as Next answers HEAD
    try {
      if (method === "GET" && path === `${base}/style.css`) {
        return new Response(DEMO_STYLESHEET, { headers: { ...SECURITY_HEADERS, "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=300" } });
      }
      if (method === "GET" && path === callbackPath) return await callback(request);
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

/**
 * The "Security settings" section: the portal's direct link for this client, a plain GET to the
 * issuer (no state to keep: the portal opens on the user's hosted session, or asks them to sign
 * in, and never signs anyone in to this application). The portal's "Back to …" comes back to the
 * application's registered home page.
 */
function securitySettings(registration: Registration, offered: boolean): string {
  const heading = `<h2 id="security">Security settings</h2>`;
  if (!offered) {
    return `<section aria-labelledby="security">${heading}<p>Latchkey's account-security portal is switched off for <code>${esc(registration.clientId)}</code>: an operator switches it on in the console (the application's page, "Offer the account-security portal").</p></section>`;
  }
  return `<section aria-labelledby="security">${heading}
<p>Passkeys, authenticator apps, security keys, recovery codes and the applications signed in as you, on Latchkey's account-security portal (<code>${esc(registration.issuer.href)}/auth/account</code>).</p>
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
