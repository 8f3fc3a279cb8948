/**
 * A stand-in for GitHub's OAuth and user API on 127.0.0.1 at a random port, strict the way
 * GitHub is: the authorization request's client id and redirect URI, the token request's client
 * credentials, code (once), redirect URI and PKCE verifier (S256). Like GitHub, a refused token
 * request is a 200 with an `error` field. The API lives under `/api/v3` (GitHub Enterprise's
 * shape), so `apiBase` is `<origin>/api/v3`.
 *
 * `authorize(url, { user })` plays the browser: the stand-in signs in the chosen user at once and
 * the callback URL comes back; `{ deny: true }` answers `error=access_denied`.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface GithubUser {
  id: number;
  login: string;
  name: string | null;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

export interface GithubStandin {
  origin: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  apiBase: string;
  clientId: string;
  clientSecret: string;
  /** Requests received, by path. */
  hits: Map<string, number>;
  /** Its `social_providers` entry of a workspace file (key `github`), the secret read from the variable `secretEnv`. */
  workspaceProvider(secretEnv: string): Record<string, unknown>;
  /** Follows the authorization URL as the browser would and returns the callback URL. */
  authorize(url: URL, choice: { user?: number; deny?: boolean }): Promise<URL>;
  close(): Promise<void>;
}

interface PendingCode {
  userId: number;
  redirectUri: string;
  challenge: string;
  used: boolean;
}

const CHOICE_HEADER = "x-test-choice";

export async function startGithubStandin(options: { redirectUris: string[]; users: GithubUser[]; clientId?: string; clientSecret?: string }): Promise<GithubStandin> {
  const clientId = options.clientId ?? "Iv1.standin0001";
  const clientSecret = options.clientSecret ?? "standin-secret-0123456789abcdef";
  const users = new Map(options.users.map((u) => [u.id, u]));
  const codes = new Map<string, PendingCode>();
  const tokens = new Map<string, number>();
  const hits = new Map<string, number>();

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
    res.end(JSON.stringify(body));
  };

  async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
  }

  function authorizeEndpoint(url: URL, req: IncomingMessage, res: ServerResponse) {
    const redirectUri = url.searchParams.get("redirect_uri") ?? "";
    if (url.searchParams.get("client_id") !== clientId || !options.redirectUris.includes(redirectUri)) {
      res.writeHead(400, { "content-type": "text/plain" });
      res.end("The redirect_uri MUST match the registered callback URL for this application.");
      return;
    }
    const back = new URL(redirectUri);
    const state = url.searchParams.get("state");
    if (state !== null) back.searchParams.set("state", state);
    const choice = JSON.parse(String(req.headers[CHOICE_HEADER] ?? "{}")) as { user?: number; deny?: boolean };
    if (choice.deny) {
      back.searchParams.set("error", "access_denied");
      back.searchParams.set("error_description", "The user has denied your application access.");
    } else {
      if (choice.user === undefined || !users.has(choice.user)) throw new Error(`No stand-in user ${String(choice.user)}`);
      if (url.searchParams.get("code_challenge_method") !== "S256" || !url.searchParams.get("code_challenge")) throw new Error("The stand-in expects PKCE with S256");
      const code = randomBytes(10).toString("hex");
      codes.set(code, { userId: choice.user, redirectUri, challenge: url.searchParams.get("code_challenge")!, used: false });
      back.searchParams.set("code", code);
    }
    res.writeHead(302, { location: back.href });
    res.end();
  }

  async function tokenEndpoint(req: IncomingMessage, res: ServerResponse) {
    const form = await readForm(req);
    let id = form.get("client_id");
    let secret = form.get("client_secret");
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "");
    if (basic) [id, secret] = Buffer.from(basic[1]!, "base64").toString("utf8").split(":").map(decodeURIComponent) as [string, string];
    if (id !== clientId || secret !== clientSecret) return json(res, 200, { error: "incorrect_client_credentials", error_description: "The client_id and/or client_secret passed are incorrect." });
    const pending = codes.get(form.get("code") ?? "");
    const verifier = form.get("code_verifier") ?? "";
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    if (!pending || pending.used || pending.challenge !== challenge) {
      if (pending) pending.used = true;
      return json(res, 200, { error: "bad_verification_code", error_description: "The code passed is incorrect or expired." });
    }
    pending.used = true;
    if (form.get("redirect_uri") !== pending.redirectUri) return json(res, 200, { error: "redirect_uri_mismatch", error_description: "The redirect_uri MUST match the registered callback URL for this application." });
    const token = `gho_${randomBytes(16).toString("hex")}`;
    tokens.set(token, pending.userId);
    return json(res, 200, { access_token: token, token_type: "bearer", scope: "read:user,user:email" });
  }

  function api(path: string, req: IncomingMessage, res: ServerResponse) {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
    const userId = bearer ? tokens.get(bearer[1]!) : undefined;
    const user = userId === undefined ? undefined : users.get(userId);
    if (!user) return json(res, 401, { message: "Bad credentials" });
    if (path === "/api/v3/user") return json(res, 200, { id: user.id, login: user.login, name: user.name, email: null, type: "User" });
    if (path === "/api/v3/user/emails") return json(res, 200, user.emails.map((e) => ({ ...e, visibility: e.primary ? "private" : null })));
    return json(res, 404, { message: "Not Found" });
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://standin");
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    const done = (error: unknown) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(error));
    };
    try {
      if (req.method === "GET" && url.pathname === "/login/oauth/authorize") return authorizeEndpoint(url, req, res);
      if (req.method === "POST" && url.pathname === "/login/oauth/access_token") return void tokenEndpoint(req, res).catch(done);
      if (req.method === "GET" && url.pathname.startsWith("/api/v3/")) return api(url.pathname, req, res);
      json(res, 404, { message: "Not Found" });
    } catch (error) {
      done(error);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    authorizationEndpoint: `${origin}/login/oauth/authorize`,
    tokenEndpoint: `${origin}/login/oauth/access_token`,
    apiBase: `${origin}/api/v3`,
    clientId,
    clientSecret,
    hits,
    workspaceProvider(secretEnv) {
      return {
        key: "github",
        preset: "github",
        name: "GitHub",
        client_id: clientId,
        client_secret: { env: secretEnv },
        authorization_endpoint: `${origin}/login/oauth/authorize`,
        token_endpoint: `${origin}/login/oauth/access_token`,
        api_base: `${origin}/api/v3`,
      };
    },
    async authorize(url, choice) {
      const response = await fetch(url, { redirect: "manual", headers: { [CHOICE_HEADER]: JSON.stringify(choice) } });
      const location = response.headers.get("location");
      if (response.status !== 302 || !location) throw new Error(`The stand-in answered ${response.status}: ${await response.text()}`);
      return new URL(location);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
