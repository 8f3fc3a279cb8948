/**
 * The system under fuzz: the production request listener (`createRequestListener`) on a real
 * `http.Server` on an ephemeral loopback port, over the test database (PGlite, or the run's
 * PostgreSQL database when DATABASE_URL is set), with one seeded workspace and a source of live
 * values (client ids, tokens, codes, sessions, sign-in transactions) minted on demand (`Live`).
 *
 * Paths the listener hands to Next (authorize, logout, the sign-in form post, pages, unknown
 * paths) are served by the real Next request handler of the production build, in this process
 * and over this same service, exactly as server.ts runs it. Without a build (a developer running
 * only this file, or FUZZ_HANDLER=route-table) a stand-in serves them through the route table's
 * non-machine dispatch; it cannot show what Next itself does with a request. Under CI a missing
 * build is an error, as in the dispatch-equivalence test.
 */
import { existsSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { organizations, users } from "../../db/schema";
import { DEFAULT_SETTINGS, issueToken, saveDirectory } from "../../lib/organizations/scim/directory";
import { newId } from "../../lib/crypto";
import { allowInvitationSend, inviteToOrganization } from "../../lib/organizations/invitations";
import { invitationView } from "../../lib/organizations/invitations/acceptance";
import { entryView } from "../../lib/organizations/admin-portal";
import { makeLink as makePortalLink } from "../../lib/organizations/admin-portal/links";
import { createHostedSession, getLiveSession } from "../../lib/authn/hosted-session";
import { signInView } from "../../lib/sign-in/view";
import { deviceView } from "../../lib/oauth/device-authorization/verification";
import { evidenceFor } from "../../lib/authn/evidence";
import { notFoundResponse } from "../../lib/oauth/errors";
import { createRequestListener, ISSUER_PATH_HEADERS, writeResponse, type NodeHandler } from "../../lib/server/node-server";
import { nodeRequest } from "../../lib/http/node-request";
import { contextFor, dispatch, resolveWorkspace } from "../../lib/server/router";
import type { EndpointContext } from "../../lib/http/context";
import { ACME, API, M2M, SPA, WEB, authzWorkspace } from "../helpers/fixtures";
import { authorizeQuery, basic, call, createHarness, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { OUTBOX, outboxFor } from "../helpers/factors/email";
import { addDomain, addSamlConnection } from "../helpers/federation/setup";
import { addHostname, applyHostnameVerification, hostnameTxtRecord } from "../../lib/hostnames/hostnames";
import { forgetHostnames } from "../../lib/hostnames/directory";
import { readAuthnRequest, samlIdpStandin, type SamlIdpStandin } from "../helpers/federation/saml-idp-standin";

const root = path.resolve(import.meta.dirname, "..", "..");
const ci = !!process.env.CI && process.env.CI !== "0" && process.env.CI !== "false";

export const HOST = new URL(PUBLIC_URL).host;

/** The verified hostname the world gives its workspace. */
export const workspaceHostname = (ws: string) => `login.${ws}.test`;

export interface World {
  port: number;
  ws: string;
  /** A verified hostname of `ws` (lib/hostnames): it serves that workspace's issuer only. */
  hostname: string;
  live: Live;
  /** Who serves the paths the listener hands on: the real Next handler, or the route-table stand-in. */
  handler: "next" | "route-table stand-in";
  close(): Promise<void>;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : 0);
    });
  });
}

/** The stand-in for Next: what the route.ts files under app/t/[tenant] answer, through the route table. */
function routeTableHandler(h: Harness): NodeHandler {
  return async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const url = req.url ?? "/";
      const request = nodeRequest(req, PUBLIC_URL);
      const response = url.startsWith("/t/") ? ((await dispatch(request, h.service)) ?? (await signInPage(h, request)) ?? notFoundResponse()) : notFoundResponse();
      await writeResponse(response, res, url.startsWith("/t/") ? ISSUER_PATH_HEADERS : {});
    } catch (error) {
      console.error("[fuzz stand-in] failed:", error);
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end("Internal Server Error");
    }
  };
}

/** The hosted sign-in page (app/t/[tenant]/sign-in/page.tsx) as far as the stand-in needs it: its status. */
async function signInPage(h: Harness, request: Request): Promise<Response | null> {
  const url = new URL(request.url);
  const match = /^\/t\/([a-z0-9][a-z0-9-]{0,62})\/sign-in$/.exec(url.pathname);
  if (!match || (request.method !== "GET" && request.method !== "HEAD")) return null;
  const workspace = await resolveWorkspace(h.service, match[1]);
  if (!workspace) return null;
  const view = await signInView(contextFor(h.service, workspace), url.searchParams.get("tx") ?? "", request.headers.get("cookie"));
  return new Response(view.kind === "step" ? "<form>sign in</form>" : "<p>expired</p>", { status: 200, headers: { "content-type": "text/html; charset=utf-8" } });
}

async function nextHandler(h: Harness): Promise<{ handle: NodeHandler; close: () => Promise<void> } | null> {
  if (process.env.FUZZ_HANDLER === "route-table") return null;
  if (!existsSync(path.join(root, ".next", "BUILD_ID"))) {
    if (ci) throw new Error("No production build (.next/BUILD_ID): run `npm run build` first (npm test does).");
    return null;
  }
  // Next's route bundles reach the service through the process-global holder of lib/service.ts:
  // hand them this harness's service, as server.ts hands them its own.
  const holder = (globalThis as Record<symbol, { service?: Promise<unknown> }>)[Symbol.for("latchkey.service")];
  if (!holder) throw new Error("lib/service.ts holder missing");
  holder.service = Promise.resolve({ service: h.service, handle: h.handle });
  (process.env as Record<string, string>).NODE_ENV = "production";
  process.env.NEXT_TELEMETRY_DISABLED = "1";
  const { default: next } = await import("next");
  const app = next({ dev: false, dir: root, hostname: "127.0.0.1", port: 0 });
  const handle = app.getRequestHandler();
  await app.prepare();
  return {
    handle,
    close: async () => {
      holder.service = undefined;
      await (app as unknown as { close?: () => Promise<void> }).close?.();
    },
  };
}

export async function startWorld(): Promise<World> {
  // Limits high enough never to throttle the fuzzer, so every case reaches the endpoint (the
  // limiter still counts every request and failure).
  // Mail goes to the development outbox, so the steps that send a code (sign-in, sign-up, password reset) go past "unavailable".
  const h = await createHarness({ rateLimits: { requestsPerMinute: 10_000_000, failuresPer5Minutes: 10_000_000 }, mail: OUTBOX });
  const ws = uniqueWorkspaceId("fuzz");
  const doc = authzWorkspace(ws);
  // The device flow (lib/oauth/device-authorization) is switched on for the SPA and the web app.
  for (const app of doc.applications) if (app.client_id === SPA.client_id || app.client_id === WEB.client_id) app.device_authorization_grant = true;
  await seed(h, { ...doc, password_screening: { minimum_score: 2 }, password_reset: "email" });
  const hostname = workspaceHostname(ws);
  const claim = await addHostname(h.service.db, { workspaceId: ws, hostname, now: h.clock.now() });
  await applyHostnameVerification(h.service.db, { workspaceId: ws, id: claim.id, now: h.clock.now(), lookup: { ok: true, records: [hostnameTxtRecord(claim).value] } });
  forgetHostnames(h.service);
  const viaNext = await nextHandler(h);
  const server = createServer(createRequestListener(h.service, PUBLIC_URL, viaNext?.handle ?? routeTableHandler(h)));
  const port = await listen(server);
  const live = new Live(h, ws);
  return {
    port,
    ws,
    hostname,
    live,
    handler: viaNext ? "next" : "route-table stand-in",
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await viaNext?.close();
    },
  };
}

export type TokenClient = "spa" | "web";

/** Routes that only read the tokens a request presents (never revoke, rotate or end anything with them). */
const READ_ONLY_ROUTES = new Set(["/oidc/userinfo", "/oidc/session", "/oauth2/introspect", "/authorization/check"]);

/** Routes that never read or advance a sign-in transaction a request names: the portal's forms (they may open one of their own). */
const leavesSignInAlone = (route: string | null) => route !== null && route.startsWith("/account/");

/**
 * Live values, minted in process through the route table (setup, not the system under fuzz).
 * Every minted value is also kept: the fuzzer mixes in earlier ones, which may since have been
 * spent, rotated or revoked by other cases.
 *
 * What a case spends is minted for it: a code, a sign-in transaction, a SAML response, the tokens
 * a case revokes, refreshes or logs out with, a session it ends. What a case only presents is
 * reused from case to case while it is as good as a fresh one: a bearer token, or a token to
 * introspect or check, while the shared session it was issued in is still the live one (checked
 * at each use, as before each mint) and no request since has named it or its code at a route that
 * could spend it; the sign-in transaction the portal's forms are sent (they never read one) while
 * no request has named it at a route that could touch it (`sending`, called before every
 * request). The lists of earlier values then hold a reused value once per case that used it,
 * where they held one fresh value each. Minting these afresh for each case (a dozen statements
 * each: an authorization code and its exchange, /authorize and the sign-in page's view) was most
 * of the fuzzer's own time.
 */
export class Live {
  private shared: string | null = null;
  private userId: string | null = null;
  readonly minted = new Map<string, string[]>();

  constructor(
    readonly h: Harness,
    readonly ws: string,
  ) {}

  private keep(kind: string, value: string): string {
    const list = this.minted.get(kind) ?? [];
    list.push(value);
    if (list.length > 50) list.shift();
    this.minted.set(kind, list);
    return value;
  }

  /** A value minted earlier (or a plausible-looking dead one before any was). */
  earlier(kind: string, pick: number): string {
    const list = this.minted.get(kind);
    if (!list?.length) return kind === "csrf" ? "x".repeat(43) : `lka_${"A".repeat(43)}`;
    return list[pick % list.length];
  }

  private async ctx(): Promise<EndpointContext> {
    const workspace = await resolveWorkspace(this.h.service, this.ws);
    return contextFor(this.h.service, workspace!);
  }

  /** A new hosted session for Ada (no password check: the session row is created directly). */
  async freshSession(): Promise<string> {
    const ctx = await this.ctx();
    if (!this.userId) {
      const [row] = await this.h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, this.ws), eq(users.emailNormalized, "ada@example.test"))).limit(1);
      this.userId = row.id;
    }
    const { cookie } = await createHostedSession(ctx, { userId: this.userId, evidence: [evidenceFor("password", ctx.service.clock.now())], userAgent: "fuzz", ip: null });
    return this.keep("session", cookie.split(";")[0]);
  }

  /** The shared live session cookie (`lk_session=…`), replaced when a case ended it. */
  async session(): Promise<string> {
    if (this.shared && (await getLiveSession(await this.ctx(), this.shared))) return this.shared;
    this.shared = await this.freshSession();
    return this.shared;
  }

  /** A fresh authorization code of `client` in `cookie`'s session (the shared one by default). */
  async code(client: TokenClient, cookie?: string): Promise<{ code: string; verifier: string; redirectUri: string }> {
    const redirectUri = client === "spa" ? SPA.redirect_uri : WEB.redirect_uri;
    const scope = "openid email profile read:things";
    for (let attempt = 0; attempt < 2; attempt++) {
      const { query, verifier } = authorizeQuery({ client_id: client, redirect_uri: redirectUri, scope, resource: API });
      const res = await call(this.h, `/t/${this.ws}/oauth2/authorize?${query}`, { cookie: cookie ?? (await this.session()) });
      const location = res.headers.get("location");
      const code = location ? new URL(location, PUBLIC_URL).searchParams.get("code") : null;
      if (code) return { code: this.keep("code", code), verifier, redirectUri };
      this.shared = null;
    }
    throw new Error(`could not mint a code for ${client}`);
  }

  private counter = 0;
  private scim: { token: string; user: string | null } | null = null;

  /** A value not used before: `prefix`, a number, `suffix`. */
  fresh(prefix: string, suffix: string): string {
    return `${prefix}-${++this.counter}${suffix}`;
  }

  /** The SCIM token of the organization acme's directory (lib/organizations/scim), which provisions any address. */
  async scimToken(): Promise<string> {
    if (this.scim) return this.scim.token;
    const [org] = await this.h.service.db.select({ id: organizations.id }).from(organizations).where(and(eq(organizations.workspaceId, this.ws), eq(organizations.slug, ACME)));
    const directory = await saveDirectory(this.h.service.db, { workspaceId: this.ws, organizationId: org.id, settings: { ...DEFAULT_SETTINGS, anyDomain: true }, now: this.h.clock.now() });
    const { token } = await issueToken(this.h.service.db, { workspaceId: this.ws, directoryId: directory.id, overlapHours: 0, now: this.h.clock.now() });
    this.scim = { token, user: null };
    return token;
  }

  /** A user of that directory, provisioned again when a case deleted it. */
  async scimUser(): Promise<string> {
    const token = await this.scimToken();
    const auth = { authorization: `Bearer ${token}` };
    if (this.scim!.user && (await call(this.h, `/t/${this.ws}/scim/v2/o/${ACME}/Users/${this.scim!.user}`, { headers: auth })).status === 200) return this.scim!.user;
    const res = await call(this.h, `/t/${this.ws}/scim/v2/o/${ACME}/Users`, {
      body: JSON.stringify({ userName: this.fresh("fuzz-user", "@acme.test"), externalId: this.fresh("fuzz-subject", "") }),
      headers: { ...auth, "content-type": "application/scim+json" },
    });
    if (res.status !== 201) throw new Error(`could not provision a SCIM user: ${res.status}`);
    this.scim!.user = ((await res.json()) as { id: string }).id;
    return this.scim!.user;
  }

  /** A fresh pushed authorization request (RFC 9126) of the public client: its request_uri, used once by the authorization endpoint. */
  async pushedRequest(): Promise<string> {
    const { query } = authorizeQuery({ client_id: SPA.client_id, redirect_uri: SPA.redirect_uri, scope: "openid email" });
    const res = await call(this.h, `/t/${this.ws}/oauth2/par`, { form: Object.fromEntries(query) });
    if (res.status !== 201) throw new Error(`could not push a request: ${res.status}`);
    return this.keep("request_uri", ((await res.json()) as { request_uri: string }).request_uri);
  }

  /** Fresh tokens of `client` (code exchange). */
  async tokens(client: TokenClient, cookie?: string): Promise<{ access: string; refresh: string; id: string }> {
    const { code, verifier, redirectUri } = await this.code(client, cookie);
    return this.exchange(client, code, verifier, redirectUri);
  }

  private async exchange(client: TokenClient, code: string, verifier: string, redirectUri: string): Promise<{ access: string; refresh: string; id: string }> {
    const form: Record<string, string> = { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier };
    if (client === "spa") form.client_id = SPA.client_id;
    const res = await call(this.h, `/t/${this.ws}/oauth2/token`, { form, headers: client === "web" ? { authorization: basic(WEB.client_id, WEB.secret) } : {} });
    const body = (await res.json()) as { access_token?: string; refresh_token?: string; id_token?: string };
    if (!body.access_token || !body.refresh_token || !body.id_token) throw new Error(`code exchange failed: ${JSON.stringify(body)}`);
    return { access: this.keep("access", body.access_token), refresh: this.keep("refresh", body.refresh_token), id: this.keep("id", body.id_token) };
  }

  /** Tokens of each client that no request has named since they were minted (see `reusableTokens`). */
  private readonly reusable = new Map<TokenClient, { session: string; code: string; tokens: { access: string; refresh: string; id: string } }>();
  /** The M2M token no request has named since it was minted (see `reusableM2mToken`). */
  private reusableM2m: string | null = null;
  /** The sign-in transaction handed to the portal's forms that no request has named since at a route that could touch it. */
  private untouchedTransaction: { tx: string; cookie: string; csrf: string } | null = null;

  /**
   * Tokens of `client` in the shared session for a case that only presents them (a bearer token,
   * a token to inspect): the last ones minted while no request has named them and the shared
   * session they were issued in is still the live one, else fresh ones (`tokens`). The lists of
   * earlier values grow as with fresh ones.
   */
  async reusableTokens(client: TokenClient): Promise<{ access: string; refresh: string; id: string }> {
    const session = await this.session();
    const kept = this.reusable.get(client);
    if (kept && kept.session === session) {
      this.keep("code", kept.code);
      const { access, refresh, id } = kept.tokens;
      return { access: this.keep("access", access), refresh: this.keep("refresh", refresh), id: this.keep("id", id) };
    }
    const { code, verifier, redirectUri } = await this.code(client);
    const tokens = await this.exchange(client, code, verifier, redirectUri);
    if (this.shared) this.reusable.set(client, { session: this.shared, code, tokens });
    return tokens;
  }

  /**
   * Before a request is sent to `route` (a path of the route table, or null for a page): the
   * reused values it names that it could spend are minted afresh for the next case. Tokens (or
   * their code) named anywhere but at a route that only reads them; the portal's sign-in
   * transaction named anywhere but at the portal's forms.
   */
  sending(route: string | null, bytes: string): void {
    if (route === null || !READ_ONLY_ROUTES.has(route)) {
      for (const [client, { code, tokens }] of this.reusable) {
        if ([code, tokens.access, tokens.refresh, tokens.id].some((v) => bytes.includes(v))) this.reusable.delete(client);
      }
      if (this.reusableM2m !== null && bytes.includes(this.reusableM2m)) this.reusableM2m = null;
    }
    // A transaction's id is in its form field and in its binding cookie's name.
    if (this.untouchedTransaction !== null && !leavesSignInAlone(route) && bytes.includes(this.untouchedTransaction.tx)) this.untouchedTransaction = null;
  }

  /** An M2M access token for a case that only presents it: the last one minted while no request has named it (as `reusableTokens`). */
  async reusableM2mToken(): Promise<string> {
    if (this.reusableM2m !== null) return this.keep("m2m", this.reusableM2m);
    this.reusableM2m = await this.m2mToken();
    return this.reusableM2m;
  }

  async m2mToken(): Promise<string> {
    const res = await call(this.h, `/t/${this.ws}/oauth2/token`, {
      form: { grant_type: "client_credentials", resource: API, scope: "read:things" },
      headers: { authorization: basic(M2M.client_id, M2M.secret) },
    });
    const body = (await res.json()) as { access_token?: string };
    if (!body.access_token) throw new Error(`client_credentials failed: ${JSON.stringify(body)}`);
    return this.keep("m2m", body.access_token);
  }

  private saml: { idp: SamlIdpStandin; connectionId: string } | null = null;

  /** The workspace's SAML connection (made on first use, with a verified domain that signs in through it). */
  async samlConnection(): Promise<string> {
    if (!this.saml) {
      const idp = samlIdpStandin("https://idp.fuzz.test/saml");
      const { id } = await addSamlConnection(this.h, this.ws, { organization: "acme", idp });
      await addDomain(this.h, this.ws, { organization: "acme", domain: "saml.fuzz.test", verified: true });
      this.saml = { idp, connectionId: id };
    }
    return this.saml.connectionId;
  }

  /** A valid SAML response to a pending round trip of the connection, as its identity provider would POST it (unsent). */
  async samlResponse(): Promise<{ connectionId: string; SAMLResponse: string; RelayState: string }> {
    const connectionId = await this.samlConnection();
    const { tx, cookie, csrf } = await this.signInTransaction();
    const res = await call(this.h, `/t/${this.ws}/sign-in/sso`, { form: { tx, csrf, email: "ada@saml.fuzz.test" }, cookie, headers: { origin: PUBLIC_URL } });
    const location = res.headers.get("location");
    if (res.status !== 303 || !location) throw new Error(`single sign-on did not redirect: ${res.status}`);
    const request = readAuthnRequest(new URL(location));
    const { SAMLResponse, RelayState } = await this.saml!.idp.respond(request, { nameId: "ada-fuzz", attributes: { email: "ada@saml.fuzz.test" } }, this.h.clock.now());
    return { connectionId, SAMLResponse, RelayState: this.keep("relay", RelayState!) };
  }

  /**
   * An open sign-in transaction for a case sent to `route`. A route that leaves sign-in
   * transactions alone (the portal's forms) cannot make it any less new: there, the last one
   * handed out is reused while no request has named it at a route that could touch it (as
   * `reusableTokens`); elsewhere it is a new one.
   */
  async signInTransactionFor(route: string): Promise<{ tx: string; cookie: string; csrf: string }> {
    if (!leavesSignInAlone(route)) return this.signInTransaction();
    if (this.untouchedTransaction !== null) {
      const { tx, cookie, csrf } = this.untouchedTransaction;
      this.keep("tx", tx);
      this.keep("txcookie", cookie);
      return { tx, cookie, csrf: this.keep("csrf", csrf) };
    }
    this.untouchedTransaction = await this.signInTransaction();
    return this.untouchedTransaction;
  }

  /** A new device authorization of `client` (RFC 8628): its device code and user code. */
  async deviceAuthorization(client: TokenClient): Promise<{ deviceCode: string; userCode: string }> {
    const res = await call(this.h, `/t/${this.ws}/oauth2/device_authorization`, {
      form: client === "spa" ? { client_id: SPA.client_id, scope: "openid email" } : { scope: "openid" },
      headers: client === "web" ? { authorization: basic(WEB.client_id, WEB.secret) } : {},
    });
    const body = (await res.json()) as { device_code?: string; user_code?: string };
    if (!body.device_code || !body.user_code) throw new Error(`device authorization failed: ${JSON.stringify(body)}`);
    return { deviceCode: this.keep("device", body.device_code), userCode: body.user_code };
  }

  /**
   * A device authorization of the SPA entered on the device page by a browser with the shared
   * session: its id, the browser's cookies (binding and session) and the page form's CSRF token
   * (the consent's when `consent`, else the sign-in button's).
   */
  async deviceOnPage(consent: boolean): Promise<{ d: string; cookie: string; csrf: string }> {
    const { userCode } = await this.deviceAuthorization("spa");
    const session = consent ? await this.session() : "";
    const res = await call(this.h, `/t/${this.ws}/device/code`, { form: { user_code: userCode }, cookie: session, headers: { origin: PUBLIC_URL } });
    const binding = res.headers.getSetCookie().find((c) => c.startsWith("lk_device_"))!.split(";")[0];
    const location = new URL(res.headers.get("location")!, PUBLIC_URL);
    const cookie = [binding, session].filter(Boolean).join("; ");
    const d = binding.slice("lk_device_".length, binding.indexOf("="));
    const view = await deviceView(await this.ctx(), { d }, cookie);
    if (view.kind !== "consent" && view.kind !== "sign_in") throw new Error(`device page shows ${view.kind} (${location})`);
    return { d, cookie, csrf: view.csrf };
  }

  private invitations = 0;
  private invitingOrganization: string | null = null;

  /**
   * A pending organization invitation of a new address: the link's secret (read from the outbox)
   * and the acceptance form's CSRF token. A fresh organization every 40 (the organization's hourly
   * number of sends is 50).
   */
  async invitation(): Promise<{ token: string; csrf: string }> {
    const n = this.invitations++;
    if (n % 40 === 0 || !this.invitingOrganization) {
      const now = this.h.clock.now();
      this.invitingOrganization = newId();
      await this.h.service.db.insert(organizations).values({ id: this.invitingOrganization, workspaceId: this.ws, slug: `fuzz-invitations-${n}`, name: "Fuzz invitations", active: true, createdAt: now, updatedAt: now });
    }
    const email = `fuzz-invited-${n}@invited.example`;
    const actor = { kind: "operator" as const, userId: "fuzz-operator" };
    const target = { workspaceId: this.ws, organizationId: this.invitingOrganization, actor };
    const allowance = await allowInvitationSend(this.h.service, target);
    await this.h.service.db.transaction((tx) => inviteToOrganization(this.h.service, tx, { ...target, email, roleIds: [], administrator: false }, allowance));
    const [mail] = await outboxFor(this.h, this.ws, email);
    const token = decodeURIComponent(/invitation\?token=(\S+)/.exec(mail?.text ?? "")?.[1] ?? "");
    const view = await invitationView(await this.ctx(), { token });
    if (view.kind !== "accept") throw new Error(`the invitation page shows ${view.kind}`);
    return { token: this.keep("invitation", token), csrf: view.csrf };
  }

  private portalLinks = 0;

  /** An unused setup link of an organization's admin portal (a fresh address each): its secret and the page's CSRF token. */
  async portalLink(): Promise<{ token: string; csrf: string }> {
    const n = this.portalLinks++;
    const now = this.h.clock.now();
    if (n === 0) {
      this.portalOrganization = newId();
      await this.h.service.db.insert(organizations).values({ id: this.portalOrganization, workspaceId: this.ws, slug: "fuzz-portal", name: "Fuzz portal", active: true, createdAt: now, updatedAt: now });
    }
    const email = `fuzz-portal-${n}@portal.example`;
    const { token } = await makePortalLink(this.h.service.db, { workspaceId: this.ws, organizationId: this.portalOrganization!, email, emailNormalized: email, ttlHours: 24, createdBy: { userId: "fuzz-operator", email: "operator@fuzz.example" }, now });
    const view = await entryView(await this.ctx(), { link: token });
    if (view.kind !== "link") throw new Error(`the setup link's page shows ${view.kind}`);
    return { token: this.keep("portal-link", token), csrf: view.csrf };
  }
  private portalOrganization: string | null = null;

  /** An open sign-in transaction of the SPA: its id, the browser-binding cookie and the form's CSRF token. */
  async signInTransaction(): Promise<{ tx: string; cookie: string; csrf: string }> {
    const { query } = authorizeQuery({ client_id: SPA.client_id, redirect_uri: SPA.redirect_uri });
    const res = await call(this.h, `/t/${this.ws}/oauth2/authorize?${query}`);
    const location = new URL(res.headers.get("location")!, PUBLIC_URL);
    const tx = location.searchParams.get("tx");
    if (!tx) throw new Error(`authorize did not start a transaction: ${location}`);
    const cookie = res.headers.getSetCookie()[0].split(";")[0];
    const view = await signInView(await this.ctx(), tx, cookie);
    if (view.kind !== "step") throw new Error("sign-in transaction not open");
    this.keep("tx", tx);
    this.keep("txcookie", cookie);
    return { tx, cookie, csrf: this.keep("csrf", view.csrf) };
  }
}
