/**
 * The upstream identity providers of e2e/federation.spec.ts, driven by the browser: each shows a
 * small sign-in page of its own, where the test types a username and signs in or cancels.
 *
 * - Contoso ID: a real OpenID Connect provider (the `oidc-provider` package), the workspace's
 *   generic OIDC social provider. Email and name only in UserInfo, so Latchkey fetches it.
 * - A GitHub stand-in, strict the way GitHub is (client id and exact redirect URI at authorize;
 *   client credentials, the code once, the redirect URI and the PKCE verifier at the token
 *   endpoint; the user API under /api/v3, GitHub Enterprise's shape).
 *
 * Both listen on the fixed loopback ports e2e/fixtures/e2e-workspace.json names (e2e/env.ts).
 * tests/helpers/federation has browserless twins of these for the integration tests.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { exportJWK, generateKeyPair } from "jose";

export interface Upstream {
  close(): Promise<void>;
}

async function listen(server: Server, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(error.code === "EADDRINUSE" ? new Error(`port ${port} is in use: the federation spec needs it for an upstream (e2e/env.ts)`) : error),
    );
    server.listen(port, "127.0.0.1", resolve);
  });
}

function closer(server: Server): () => Promise<void> {
  return async () => {
    if (!server.listening) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function html(res: ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(page(title, body));
}

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><h1>${escape(title)}</h1>${body}</body></html>`;
}

/** The upstream's sign-in form: a username, "Sign in" or "Cancel". */
function signInForm(action: string, hidden: Record<string, string>, error?: string): string {
  const fields = Object.entries(hidden)
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join("");
  return `${error ? `<p role="alert">${escape(error)}</p>` : ""}
    <form method="post" action="${escape(action)}">${fields}
      <label for="username">Username</label> <input id="username" name="username" autocomplete="off">
      <button type="submit" name="decision" value="allow">Sign in</button>
      <button type="submit" name="decision" value="deny" formnovalidate>Cancel</button>
    </form>`;
}

// --- Contoso ID (oidc-provider) -----------------------------------------------------------------

export interface ContosoAccount {
  /** The username typed on the upstream's page, and the `sub`. */
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
}

interface KoaContext {
  path: string;
  method: string;
  req: IncomingMessage;
  res: ServerResponse;
  status: number;
  body: unknown;
  set(header: string, value: string): void;
  redirect(url: string): void;
}

interface ProviderInstance {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string; prompt: { name: string } }>;
  interactionResult(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<string>;
}

interface GrantModel {
  addOIDCScope(scope: string): void;
  save(): Promise<string>;
}

export async function startContoso(options: { port: number; clientId: string; clientSecret: string; redirectUri: string; accounts: ContosoAccount[] }): Promise<Upstream> {
  const issuer = `http://127.0.0.1:${options.port}`;
  const accounts = new Map(options.accounts.map((a) => [a.sub, a]));
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  // A string specifier: the package ships no type declarations (the shapes used are typed above).
  const specifier: string = "oidc-provider";
  const { default: Provider } = (await import(specifier)) as { default: new (issuer: string, config: Record<string, unknown>) => ProviderInstance };
  const store = new Map<string, Record<string, unknown>>();

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: "contoso-key", alg: "RS256", use: "sig" }] },
    adapter: memoryAdapter(store),
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    cookies: { keys: ["contoso-cookie-key-0123456789abcdef"] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts.get(id);
      return account ? { accountId: id, claims: () => ({ ...account }) } : undefined;
    },
    // Every grant is pre-approved: the upstream's consent screen is not what the spec is about.
    async loadExistingGrant(ctx: {
      oidc: {
        result?: { consent?: { grantId?: string } };
        session: { accountId: string; grantIdFor(clientId: string): string | undefined };
        client: { clientId: string };
        provider: { Grant: (new (init: { clientId: string; accountId: string }) => GrantModel) & { find(id: string): Promise<unknown> } };
      };
    }) {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
  });

  provider.use(async (ctx, next) => {
    const match = /^\/interaction\/([^/]+)$/.exec(ctx.path);
    if (!match) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (details.prompt.name !== "login") throw new Error(`unexpected upstream prompt ${details.prompt.name}`);
    const action = `/interaction/${details.uid}`;
    if (ctx.method === "GET") {
      ctx.set("content-type", "text/html; charset=utf-8");
      ctx.body = page("Sign in to Contoso ID", signInForm(action, {}));
      return;
    }
    const form = await readForm(ctx.req);
    let result: Record<string, unknown>;
    if (form.get("decision") === "deny") result = { error: "access_denied", error_description: "The user cancelled the sign-in" };
    else {
      const account = accounts.get(form.get("username") ?? "");
      if (!account) {
        ctx.status = 401;
        ctx.set("content-type", "text/html; charset=utf-8");
        ctx.body = page("Sign in to Contoso ID", signInForm(action, {}, "Unknown username"));
        return;
      }
      result = { login: { accountId: account.sub } };
    }
    ctx.redirect(await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false }));
  });

  const server = createServer(provider.callback());
  await listen(server, options.port);
  return { close: closer(server) };
}

/** oidc-provider's storage, in memory, per upstream instance. */
function memoryAdapter(store: Map<string, Record<string, unknown>>) {
  return class MemoryAdapter {
    constructor(private readonly name: string) {}
    private key(id: string) {
      return `${this.name}:${id}`;
    }
    async upsert(id: string, payload: Record<string, unknown>) {
      store.set(this.key(id), payload);
    }
    async find(id: string) {
      return store.get(this.key(id));
    }
    async findByUid(uid: string) {
      for (const [key, payload] of store) if (key.startsWith(`${this.name}:`) && payload.uid === uid) return payload;
      return undefined;
    }
    async findByUserCode(userCode: string) {
      for (const [key, payload] of store) if (key.startsWith(`${this.name}:`) && payload.userCode === userCode) return payload;
      return undefined;
    }
    async consume(id: string) {
      const payload = store.get(this.key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [key, payload] of store) if (payload.grantId === grantId) store.delete(key);
    }
  };
}

// --- the GitHub stand-in ------------------------------------------------------------------------

export interface GithubUser {
  id: number;
  login: string;
  name: string | null;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

export async function startGithubStandin(options: { port: number; clientId: string; clientSecret: string; redirectUri: string; users: GithubUser[] }): Promise<Upstream> {
  const users = new Map(options.users.map((u) => [u.login, u]));
  const codes = new Map<string, { userId: number; redirectUri: string; challenge: string; used: boolean }>();
  const tokens = new Map<string, GithubUser>();

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
    res.end(JSON.stringify(body));
  };

  /** GitHub's checks of an authorization request; the problem, or null. */
  function refusal(params: URLSearchParams): string | null {
    if (params.get("client_id") !== options.clientId) return "Unknown client_id.";
    if (params.get("redirect_uri") !== options.redirectUri) return "The redirect_uri MUST match the registered callback URL for this application.";
    if (params.get("code_challenge_method") !== "S256" || !params.get("code_challenge")) return "PKCE with S256 is expected.";
    return null;
  }

  const AUTHORIZE_FIELDS = ["client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method"];

  async function authorize(req: IncomingMessage, res: ServerResponse, url: URL) {
    const params = req.method === "POST" ? await readForm(req) : url.searchParams;
    const problem = refusal(params);
    if (problem) return html(res, 400, "Application error", `<p role="alert">${escape(problem)}</p>`);
    const hidden = Object.fromEntries(AUTHORIZE_FIELDS.map((name) => [name, params.get(name) ?? ""]));
    if (req.method === "GET") return html(res, 200, "Sign in to GitHub", signInForm("/login/oauth/authorize", hidden));
    const back = new URL(params.get("redirect_uri")!);
    const state = params.get("state");
    if (state) back.searchParams.set("state", state);
    if (params.get("decision") === "deny") {
      back.searchParams.set("error", "access_denied");
      back.searchParams.set("error_description", "The user has denied your application access.");
    } else {
      const user = users.get(params.get("username") ?? "");
      if (!user) return html(res, 401, "Sign in to GitHub", signInForm("/login/oauth/authorize", hidden, "Incorrect username."));
      const code = randomBytes(10).toString("hex");
      codes.set(code, { userId: user.id, redirectUri: params.get("redirect_uri")!, challenge: params.get("code_challenge")!, used: false });
      back.searchParams.set("code", code);
    }
    res.writeHead(302, { location: back.href }).end();
  }

  async function token(req: IncomingMessage, res: ServerResponse) {
    const form = await readForm(req);
    let id = form.get("client_id");
    let secret = form.get("client_secret");
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "");
    if (basic) [id, secret] = Buffer.from(basic[1]!, "base64").toString("utf8").split(":").map(decodeURIComponent) as [string, string];
    // Like GitHub, a refused token request is a 200 with an `error` field.
    if (id !== options.clientId || secret !== options.clientSecret) return json(res, 200, { error: "incorrect_client_credentials" });
    const pending = codes.get(form.get("code") ?? "");
    const challenge = createHash("sha256").update(form.get("code_verifier") ?? "").digest("base64url");
    if (!pending || pending.used || pending.challenge !== challenge || form.get("redirect_uri") !== pending.redirectUri) {
      if (pending) pending.used = true;
      return json(res, 200, { error: "bad_verification_code" });
    }
    pending.used = true;
    const user = [...users.values()].find((u) => u.id === pending.userId)!;
    const accessToken = `gho_${randomBytes(16).toString("hex")}`;
    tokens.set(accessToken, user);
    json(res, 200, { access_token: accessToken, token_type: "bearer", scope: "read:user,user:email" });
  }

  function api(req: IncomingMessage, res: ServerResponse, path: string) {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
    const user = bearer ? tokens.get(bearer[1]!) : undefined;
    if (!user) return json(res, 401, { message: "Bad credentials" });
    if (path === "/api/v3/user") return json(res, 200, { id: user.id, login: user.login, name: user.name, email: null, type: "User" });
    if (path === "/api/v3/user/emails") return json(res, 200, user.emails.map((e) => ({ ...e, visibility: e.primary ? "private" : null })));
    json(res, 404, { message: "Not Found" });
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://standin");
    const route = `${req.method} ${url.pathname}`;
    const handled =
      route === "GET /login/oauth/authorize" || route === "POST /login/oauth/authorize"
        ? authorize(req, res, url)
        : route === "POST /login/oauth/access_token"
          ? token(req, res)
          : req.method === "GET" && url.pathname.startsWith("/api/v3/")
            ? Promise.resolve(api(req, res, url.pathname))
            : Promise.resolve(json(res, 404, { message: "Not Found" }));
    handled.catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(error));
    });
  });
  await listen(server, options.port);
  return { close: closer(server) };
}
