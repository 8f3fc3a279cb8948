/**
 * A real OpenID Connect upstream for tests: the `oidc-provider` package (v9) on 127.0.0.1 at a
 * random port, with one confidential client, a fixed set of accounts, and an interaction route
 * that signs in the account a test names (no browser: `authorize` follows the redirects with
 * fetch and a cookie jar, and returns the callback as the browser would deliver it).
 *
 * Failure modes a test can switch on (`upstream.tamper`): ID tokens re-signed with a key the
 * upstream does not publish, or with changed claims (a wrong `iss`, another `nonce`); a changed
 * UserInfo answer; a wrong `iss` on the authorization response. `close()` stops it (upstream down).
 * `now` moves the ID tokens' times to a test clock (oidc-provider itself only knows real time).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";

export interface UpstreamAccount {
  sub: string;
  email?: string;
  /** Passed through as given, so a test can send the string "true". */
  email_verified?: unknown;
  name?: string;
}

export interface UpstreamTamper {
  /** Claims to set (or, with `undefined`, remove) in the ID token, re-signed with the upstream's key. */
  idTokenClaims?: Record<string, unknown>;
  /** Re-sign the ID token with a key the upstream does not publish (same `kid`). */
  signWithUnpublishedKey?: boolean;
  /** Claims to set in the UserInfo answer. */
  userinfoClaims?: Record<string, unknown>;
  /** The `iss` of the authorization response (RFC 9207); null leaves it out. */
  responseIss?: string | null;
}

export interface OidcProviderUpstreamOptions {
  clientId?: string;
  clientSecret?: string;
  redirectUris: string[];
  accounts: UpstreamAccount[];
  /** Put email and profile claims in the ID token too (by default they are only in UserInfo). */
  claimsInIdToken?: boolean;
  /** The clock the ID tokens' `iat`, `exp` and `auth_time` follow (default: real time). */
  now?: () => Date;
  /** How the client authenticates at the token endpoint (default client_secret_basic). */
  clientAuthMethod?: "client_secret_basic" | "client_secret_post";
}

export interface LoginChoice {
  /** The account that signs in upstream. */
  account?: string;
  amr?: string[];
  acr?: string;
  /** The user refuses: the upstream answers `error=access_denied`. */
  deny?: boolean;
}

/** What the browser brings back to the redirect URI: the URL, and the form body for response_mode=form_post. */
export interface DeliveredCallback {
  url: URL;
  body?: URLSearchParams;
}

export interface OidcProviderUpstream {
  issuer: string;
  port: number;
  clientId: string;
  clientSecret: string;
  tamper: UpstreamTamper;
  /** Requests the upstream received, by path (`/token`, `/me`, ...). */
  hits: Map<string, number>;
  /** Follows an authorization URL through the upstream's sign-in to the callback. */
  authorize(url: URL, choice?: LoginChoice): Promise<DeliveredCallback>;
  close(): Promise<void>;
}

interface KoaContext {
  path: string;
  method: string;
  body: unknown;
  status: number;
  req: IncomingMessage;
  res: ServerResponse;
  get(header: string): string;
  set(header: string, value: string): void;
  redirect(url: string): void;
}

interface ProviderInstance {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string; prompt: { name: string } }>;
  interactionResult(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<string>;
  Grant: new (init: { clientId: string; accountId: string }) => { addOIDCScope(scope: string): void; save(): Promise<string> };
}

const LOGIN_HEADER = "x-test-login";

export async function startOidcProviderUpstream(options: OidcProviderUpstreamOptions): Promise<OidcProviderUpstream> {
  const clientId = options.clientId ?? "latchkey-test";
  const clientSecret = options.clientSecret ?? "upstream-secret-0123456789abcdef";
  const accounts = new Map(options.accounts.map((a) => [a.sub, a]));

  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingJwk: JWK = { ...(await exportJWK(privateKey)), kid: "upstream-key", alg: "RS256", use: "sig" };
  const unpublished = await generateKeyPair("RS256", { extractable: true });

  // The issuer needs the port, so the server listens before the provider exists.
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;

  // A string specifier: the package ships no type declarations (the shapes used are typed above).
  const specifier: string = "oidc-provider";
  const { default: Provider } = (await import(specifier)) as { default: new (issuer: string, config: Record<string, unknown>) => ProviderInstance };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: options.clientAuthMethod ?? "client_secret_basic",
      },
    ],
    jwks: { keys: [signingJwk] },
    adapter: MemoryAdapter,
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    cookies: { keys: ["upstream-cookie-key-0123456789"] },
    claims: { acr: null, amr: null, auth_time: null, openid: ["sub", "acr", "amr", "auth_time"], email: ["email", "email_verified"], profile: ["name"] },
    conformIdTokenClaims: !options.claimsInIdToken,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return { accountId: id, claims: () => ({ ...account }) };
    },
    // Every grant is pre-approved: the upstream's consent screen is not what these tests are about.
    async loadExistingGrant(ctx: {
      oidc: {
        result?: { consent?: { grantId?: string } };
        session: { accountId: string; grantIdFor(clientId: string): string | undefined };
        client: { clientId: string };
        provider: { Grant: ProviderInstance["Grant"] & { find(id: string): Promise<unknown> } };
      };
    }) {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
    renderError(ctx: KoaContext, out: Record<string, string>) {
      ctx.set("content-type", "application/json");
      ctx.body = JSON.stringify(out);
    },
  });

  const tamper: UpstreamTamper = {};
  const hits = new Map<string, number>();

  async function resign(idToken: string): Promise<string> {
    const shift = options.now ? Math.floor((options.now().getTime() - Date.now()) / 1000) : 0;
    if (!tamper.idTokenClaims && !tamper.signWithUnpublishedKey && shift === 0) return idToken;
    const header = decodeProtectedHeader(idToken);
    const claims: Record<string, unknown> = { ...decodeJwt(idToken) };
    for (const name of ["iat", "exp", "auth_time"]) if (typeof claims[name] === "number") claims[name] = (claims[name] as number) + shift;
    for (const [name, value] of Object.entries(tamper.idTokenClaims ?? {})) {
      if (value === undefined) delete claims[name];
      else claims[name] = value;
    }
    const key = tamper.signWithUnpublishedKey ? unpublished.privateKey : privateKey;
    return new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: header.kid ?? "upstream-key" }).sign(key);
  }

  provider.use(async (ctx, next) => {
    hits.set(ctx.path, (hits.get(ctx.path) ?? 0) + 1);
    if (ctx.path.startsWith("/interaction/")) {
      const details = await provider.interactionDetails(ctx.req, ctx.res);
      const choice = JSON.parse(ctx.get(LOGIN_HEADER) || "{}") as LoginChoice;
      let result: Record<string, unknown>;
      if (choice.deny) result = { error: "access_denied", error_description: "The user declined" };
      else if (details.prompt.name === "login") {
        if (!choice.account || !accounts.has(choice.account)) throw new Error(`No upstream account ${String(choice.account)}`);
        result = { login: { accountId: choice.account, ...(choice.amr ? { amr: choice.amr } : {}), ...(choice.acr ? { acr: choice.acr } : {}) } };
      } else throw new Error(`Unexpected upstream prompt ${details.prompt.name}`);
      ctx.redirect(await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false }));
      return;
    }
    await next();
    if (ctx.path === "/token" && ctx.body && typeof ctx.body === "object" && "id_token" in ctx.body) {
      const body = ctx.body as Record<string, unknown>;
      ctx.body = { ...body, id_token: await resign(String(body.id_token)) };
    }
    if (ctx.path === "/me" && tamper.userinfoClaims && ctx.body && typeof ctx.body === "object") {
      ctx.body = { ...(ctx.body as Record<string, unknown>), ...tamper.userinfoClaims };
    }
  });
  handler = provider.callback();

  async function authorize(url: URL, choice: LoginChoice = {}): Promise<DeliveredCallback> {
    const jar = new Map<string, string>();
    let next = url;
    for (let hop = 0; hop < 10; hop++) {
      const headers: Record<string, string> = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") };
      if (next.pathname.startsWith("/interaction/")) headers[LOGIN_HEADER] = JSON.stringify(choice);
      const response = await fetch(next, { redirect: "manual", headers });
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(";");
        const eq = pair!.indexOf("=");
        jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        const target = new URL(location, next);
        if (target.origin !== issuer) {
          if (tamper.responseIss === null) target.searchParams.delete("iss");
          else if (tamper.responseIss !== undefined) target.searchParams.set("iss", tamper.responseIss);
          return { url: target };
        }
        next = target;
        continue;
      }
      const html = await response.text();
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
      if (response.status === 200 && action) {
        const body = new URLSearchParams();
        for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) body.append(m[1]!, decodeEntities(m[2]!));
        if (tamper.responseIss === null) body.delete("iss");
        else if (tamper.responseIss !== undefined) body.set("iss", tamper.responseIss);
        return { url: new URL(decodeEntities(action)), body };
      }
      throw new Error(`The upstream answered ${response.status} at ${next.pathname}: ${html.slice(0, 300)}`);
    }
    throw new Error("Too many redirects at the upstream");
  }

  return {
    issuer,
    port,
    clientId,
    clientSecret,
    tamper,
    hits,
    authorize,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** oidc-provider's storage, in memory (its own default says so loudly on every start). */
class MemoryAdapter {
  private static readonly store = new Map<string, Record<string, unknown>>();
  constructor(private readonly name: string) {}
  private key(id: string) {
    return `${this.name}:${id}`;
  }
  async upsert(id: string, payload: Record<string, unknown>) {
    MemoryAdapter.store.set(this.key(id), payload);
  }
  async find(id: string) {
    return MemoryAdapter.store.get(this.key(id));
  }
  async findByUid(uid: string) {
    for (const [key, payload] of MemoryAdapter.store) if (key.startsWith(`${this.name}:`) && payload.uid === uid) return payload;
    return undefined;
  }
  async findByUserCode(userCode: string) {
    for (const [key, payload] of MemoryAdapter.store) if (key.startsWith(`${this.name}:`) && payload.userCode === userCode) return payload;
    return undefined;
  }
  async consume(id: string) {
    const payload = MemoryAdapter.store.get(this.key(id));
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    MemoryAdapter.store.delete(this.key(id));
  }
  async revokeByGrantId(grantId: string) {
    for (const [key, payload] of MemoryAdapter.store) if (payload.grantId === grantId) MemoryAdapter.store.delete(key);
  }
}

function decodeEntities(value: string): string {
  return value
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}
