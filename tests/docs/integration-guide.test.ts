/**
 * docs/integration.md works as written, with the application `npm start` registers for it: the
 * demo workspace's confidential `demo-web` (lib/workspaces/demo.ts, the document the first start
 * imports, here under an id of this run's own), so the guide and the demo cannot drift apart. The
 * TypeScript blocks marked `<!-- guide:run -->` form one module, kept verbatim in
 * lib/demo/latchkey.ts (the demo application's code, so the project's type check covers it), which
 * runs unchanged (its defaults: APP_ORIGIN http://localhost:4000, /auth/callback, /signed-out,
 * offline_access) as the customer against the production listener on http://localhost (so the
 * guide's `allowInsecureRequests` branch is the one taken): discovery, the authorization URL, the
 * hosted sign-in driven like a browser (fetch and cookies), the callback and code exchange,
 * UserInfo, the session check, refresh, hosted logout and revocation. The guide's own workspace
 * file is imported with the command it shows (which prints the secret), and registers what
 * demo-web does. The paths, commands, console labels and key-rotation timings the guide names are
 * checked against the repository.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { listClientSecrets } from "../../lib/clients/secrets";
import { runCommand, USAGE } from "../../lib/cli/commands";
import { applicationKinds } from "../../lib/console/applications";
import { JWKS_MAX_AGE_MS, RETIRED_KEY_PUBLISHED_MS } from "../../lib/oauth/keys";
import type { Service } from "../../lib/service";
import { DEMO_APP_CLIENT_ID, DEMO_USER, DEMO_WEB_CLIENT_ID, demoWorkspace } from "../../lib/workspaces/demo";
import { importWorkspace } from "../../lib/workspaces/file";
import { Browser, startLiveServer, type LiveServer } from "../helpers/guide/live-server";

const root = path.resolve(import.meta.dirname, "..", "..");
const guidePath = path.join(root, "docs", "integration.md");
const guide = readFileSync(guidePath, "utf8");

/** The guide's code blocks of one language. */
const blocks = (lang: string) => [...guide.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map((m) => m[1]!);
/** The blocks that form the runnable module, in the guide's order. */
const runnable = [...guide.matchAll(/^<!-- guide:run -->\n```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);

type Guide = typeof import("../../lib/demo/latchkey");

const workspaceFile = JSON.parse(blocks("json").find((b) => b.includes('"users"') && b.includes('"WEB_CONFIDENTIAL"'))!) as {
  id: string;
  applications: { client_id: string; redirect_uris: string[]; post_logout_redirect_uris: string[]; identity_scopes: string[] }[];
  users: { email: string; password: string }[];
};
const guideApp = workspaceFile.applications[0]!;
const APP_ORIGIN = "http://localhost:4000"; // the guide's default application origin
/** The demo workspace's demo-web, which the guide's code signs in with. */
const demoWeb = () => demoWorkspace(publicUrl).applications.find((a) => a.client_id === DEMO_WEB_CLIENT_ID)!;
const user = DEMO_USER;

let service: Service;
let publicUrl: string;
let issuer: string;
/** The demo workspace, under an id unique to this run (PostgreSQL runs share one database). */
let demoId: string;
/** The guide's own workspace file, imported as the guide says. */
let acmeId: string;
let importOutput = "";
let guideModule: Guide;
let lk: import("../../lib/demo/latchkey").Latchkey;
let live: LiveServer;

beforeAll(async () => {
  // The production listener on http://localhost:<port>, with the real clock (openid-client checks the ID token's iat and exp).
  live = await startLiveServer();
  ({ service, publicUrl } = live);

  // The demo workspace as the first start creates it, with demo-web's secret generated (and shown once).
  demoId = `demo-${randomBytes(3).toString("hex")}`;
  issuer = `${publicUrl}/t/${demoId}`;
  const demo = await importWorkspace(service.db, { ...demoWorkspace(publicUrl), id: demoId }, { clock: service.clock, masterKey: service.config.masterKey, generateSecrets: true });
  const secret = demo.generatedSecrets?.find((g) => g.clientId === DEMO_WEB_CLIENT_ID)?.secret;
  expect(secret).toMatch(/^lks_/);

  // The guide's workspace file, imported with the command it shows.
  acmeId = `${workspaceFile.id}-${randomBytes(3).toString("hex")}`;
  const out: string[] = [];
  const status = await runCommand(
    service.db,
    service.config,
    service.clock,
    { argv: ["workspace", "import", "acme.json"], stdin: JSON.stringify({ ...workspaceFile, id: acmeId }) },
    { out: (text) => out.push(text), err: () => {} },
  );
  expect(status).toBe(0);
  importOutput = out.join("");

  // The guide's configuration comes from the environment its code names; APP_ORIGIN is left to its default.
  vi.stubEnv("LATCHKEY_ISSUER", issuer);
  vi.stubEnv("LATCHKEY_CLIENT_ID", DEMO_WEB_CLIENT_ID);
  vi.stubEnv("LATCHKEY_CLIENT_SECRET", secret!);
  vi.stubEnv("APP_ORIGIN", undefined);
  guideModule = await import("../../lib/demo/latchkey");
  // As the guide says: `const latchkey = await connect(registrationFromEnv());`
  lk = await guideModule.connect(guideModule.registrationFromEnv());
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await live.close();
});

/** The browser follows the authorization URL, signs in on the hosted page if it shows, and is sent to the callback (returned, as the request URL the app sees). */
async function browserSignIn(url: URL, browser: Browser): Promise<string> {
  const location = await browser.signIn(url, user);
  expect(location.origin).toBe(APP_ORIGIN);
  return location.pathname + location.search;
}

describe("docs/integration.md: the guide's code against a live server", () => {
  it("the guide's code, unchanged, is demo-web's registration: its defaults and its workspace file register what the demo workspace does", () => {
    const registration = guideModule.registrationFromEnv({ LATCHKEY_CLIENT_SECRET: "x" });
    const web = demoWeb();
    expect([registration.redirectUri]).toEqual(web.redirect_uris);
    expect([registration.signedOutUri]).toEqual(web.post_logout_redirect_uris);
    expect(registration.scope.split(" ").sort()).toEqual([...web.identity_scopes].sort());
    expect(web.type).toBe("WEB_CONFIDENTIAL");
    // The guide's acme-web is the same registration under another name.
    expect({ redirect: guideApp.redirect_uris, postLogout: guideApp.post_logout_redirect_uris, scopes: guideApp.identity_scopes }).toEqual({
      redirect: web.redirect_uris,
      postLogout: web.post_logout_redirect_uris,
      scopes: web.identity_scopes,
    });
    // The guide tells the reader how to use demo-web instead of registering anything.
    expect(guide).toContain(`LATCHKEY_CLIENT_ID=${DEMO_WEB_CLIENT_ID}`);
    expect(guide).toContain("LATCHKEY_ISSUER=http://localhost:3000/t/demo");
  });

  it("says what the demo application at /demo is: the confidential client demo-app, as the README and the start-up banner say", () => {
    const demoApp = demoWorkspace(publicUrl).applications.find((a) => a.client_id === DEMO_APP_CLIENT_ID)!;
    expect(demoApp.type).toBe("WEB_CONFIDENTIAL");
    expect(guide).toContain(`the confidential client \`${DEMO_APP_CLIENT_ID}\``);
    expect(guide).not.toMatch(/public client, no secret/);
  });

  it("the import prints the application's only secret, so no `secret create` follows it", async () => {
    expect(importOutput).toContain(`New secret for client ${guideApp.client_id}:`);
    expect(/^ {2}secret: +(lks_\S+)$/m.test(importOutput)).toBe(true);
    const secrets = await listClientSecrets(service.db, { workspaceId: acmeId, clientId: guideApp.client_id, clock: service.clock });
    expect(secrets.filter((s) => s.status === "active")).toHaveLength(1);
    for (const block of blocks("sh")) expect(block).not.toMatch(/secret create/);
    // Importing the same file again prints no further secret (the guide says so).
    const again: string[] = [];
    const file = JSON.stringify({ ...workspaceFile, id: acmeId });
    expect(await runCommand(service.db, service.config, service.clock, { argv: ["workspace", "import", "acme.json"], stdin: file }, { out: (t) => again.push(t), err: () => {} })).toBe(0);
    expect(again.join("")).not.toContain("secret:");
    expect((await listClientSecrets(service.db, { workspaceId: acmeId, clientId: guideApp.client_id, clock: service.clock })).filter((s) => s.status === "active")).toHaveLength(1);
  });

  it("discovers the local issuer only through the guide's allowInsecureRequests branch", async () => {
    expect(new URL(issuer).hostname).toBe("localhost");
    expect(lk.config.serverMetadata().issuer).toBe(issuer);
    // Without the branch, openid-client refuses the local server: the error the guide quotes.
    await expect(client.discovery(new URL(issuer), DEMO_WEB_CLIENT_ID)).rejects.toMatchObject({ code: "OAUTH_HTTP_REQUEST_FORBIDDEN" });
    expect(guide).toContain("OAUTH_HTTP_REQUEST_FORBIDDEN");
    // A confidential application without its secret stops at start-up: never public authentication instead.
    expect(() => guideModule.registrationFromEnv({ LATCHKEY_ISSUER: issuer })).toThrow("LATCHKEY_CLIENT_SECRET is not set");
  });

  it("signs in, checks the session, refreshes, signs out through hosted logout, then revokes", async () => {
    const g = guideModule;
    const browser = new Browser(publicUrl);
    const { transaction, url } = await g.startSignIn(lk);
    expect(url.searchParams.get("client_id")).toBe(DEMO_WEB_CLIENT_ID);
    expect(url.searchParams.get("redirect_uri")).toBe(demoWeb().redirect_uris[0]);
    expect(url.searchParams.get("scope")).toBe("openid email profile offline_access");

    const callback = await browserSignIn(url, browser);
    const query = new URL(callback, APP_ORIGIN).searchParams;
    expect([...query.keys()].sort()).toEqual(["code", "iss", "state"]);
    expect(query.get("iss")).toBe(issuer);

    const signedIn = await g.finishSignIn(lk, callback, transaction);
    expect(signedIn.iss).toBe(issuer);
    expect(signedIn.claims).toMatchObject({ aud: DEMO_WEB_CLIENT_ID, nonce: transaction.nonce, amr: ["pwd"], email: user.email, email_verified: true });
    expect(signedIn.userinfo).toMatchObject({ sub: signedIn.sub, email: user.email, email_verified: true, name: "Demo User" });
    // The code is single use: the same callback again fails.
    await expect(g.finishSignIn(lk, callback, transaction)).rejects.toThrow();
    // ...and that replay ended what the first exchange issued (the guide's step 3).
    expect(await g.checkSession(lk, signedIn)).toBe(false);

    // A fresh sign-in in the same browser skips the form (live hosted session).
    const second = await g.startSignIn(lk);
    const session = await g.finishSignIn(lk, await browserSignIn(second.url, browser), second.transaction);
    expect(session.sub).toBe(signedIn.sub);
    // The pushed start (RFC 9126): the browser carries client_id and request_uri only, and signs in the same.
    const pushed = await g.startSignInPushed(lk);
    expect([...pushed.url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);
    const pushedSession = await g.finishSignIn(lk, await browserSignIn(pushed.url, browser), pushed.transaction);
    expect(pushedSession.sub).toBe(signedIn.sub);
    expect(await g.checkSession(lk, session)).toBe(true);
    expect(await g.checkSession(lk, { ...session, sub: "someone-else" })).toBe(false);

    const refreshed = await g.refresh(lk, session);
    expect(refreshed.refreshToken).not.toBe(session.refreshToken);
    expect(refreshed.accessToken).not.toBe(session.accessToken);
    expect(await g.checkSession(lk, refreshed)).toBe(true);

    // Hosted logout (before any revocation): back to the registered post-logout URI.
    const logout = g.logoutUrl(lk);
    expect([...logout.searchParams.keys()].sort()).toEqual(["client_id", "post_logout_redirect_uri"]);
    const loggedOut = await browser.browse(logout);
    expect(loggedOut.status).toBe(303);
    expect(loggedOut.headers.get("location")).toBe(demoWeb().post_logout_redirect_uris[0]);
    expect(await g.checkSession(lk, refreshed)).toBe(false);
    await expect(g.refresh(lk, refreshed)).rejects.toThrow();
    await expect(g.revoke(lk, refreshed)).resolves.toBeUndefined();
  });

  it("issues a refresh token without offline_access (as the guide says); revocation alone ends the grant", async () => {
    const g = guideModule;
    const transaction = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
    const url = client.buildAuthorizationUrl(lk.config, {
      redirect_uri: demoWeb().redirect_uris[0]!,
      scope: "openid email",
      state: transaction.state,
      nonce: transaction.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(transaction.codeVerifier),
      code_challenge_method: "S256",
    });
    const session = await g.finishSignIn(lk, await browserSignIn(url, new Browser(publicUrl)), transaction);
    expect(session.refreshToken).toMatch(/\S{20,}/);
    expect(await g.checkSession(lk, session)).toBe(true);
    await g.revoke(lk, session);
    expect(await g.checkSession(lk, session)).toBe(false);
    await expect(g.refresh(lk, session)).rejects.toThrow();
  });
});

describe("docs/integration.md: what it names exists", () => {
  it("marks the module's blocks, which lib/demo/latchkey.ts (the demo application's code) holds verbatim", () => {
    expect(runnable.length).toBeGreaterThanOrEqual(5);
    const copy = readFileSync(path.join(root, "lib", "demo", "latchkey.ts"), "utf8");
    // The copy is the guide's blocks, joined, after its own header comment.
    expect(copy.slice(copy.indexOf("*/\n") + 3)).toBe(runnable.join("\n"));
    expect(runnable[0]).toContain("client.allowInsecureRequests");
    expect(runnable[0]).toMatch(/issuer\.hostname === "localhost"/);
    expect(guide).toMatch(/Never allow them in production/);
  });

  it("links only to files in the repository", () => {
    const targets = [...guide.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
    const named = [...guide.matchAll(/`((?:e2e|lib|tests|docs|app|components|db|cli)\/[^`\s]+)`/g)].map((m) => m[1]!);
    expect(targets.length).toBeGreaterThan(3);
    for (const target of targets) expect(existsSync(path.resolve(path.dirname(guidePath), target)), target).toBe(true);
    for (const name of named) expect(existsSync(path.join(root, name)), name).toBe(true);
  });

  it("uses only commands the CLI has", () => {
    const commands = blocks("sh").flatMap((b) => [...b.matchAll(/npm run latchkey -- ([a-z]+ [a-z]+)/g)].map((m) => m[1]!));
    expect(commands).toContain("workspace import");
    for (const command of commands) expect(USAGE).toContain(`  ${command} `);
  });

  it("names the console's labels", () => {
    const console = section("In the console");
    expect(console).toContain(`*${applicationKinds.web_confidential.label}*`);
    const sources = filesUnder(path.join(root, "app", "console"), ".tsx")
      .concat(filesUnder(path.join(root, "components", "console"), ".tsx"))
      .map((f) => readFileSync(f, "utf8"))
      .join("\n");
    const labels = [...console.matchAll(/\*\*([^*]+)\*\*/g)].map((m) => m[1]!);
    expect(labels.length).toBeGreaterThanOrEqual(6);
    for (const label of labels) {
      for (const part of label.split(" → ")) expect(sources.includes(`"${part}"`) || sources.includes(`>${part}<`), part).toBe(true);
    }
  });

  it("gives the key-rotation timings the service and docs/console.md use", async () => {
    const seconds = JWKS_MAX_AGE_MS / 1000;
    const minutes = RETIRED_KEY_PUBLISHED_MS / 60_000;
    const jwks = await fetch(`${issuer}/.well-known/jwks.json`);
    expect(guide).toContain(`\`Cache-Control: ${jwks.headers.get("cache-control")}\``);
    expect(guide).toContain(`max-age=${seconds}`);
    expect(guide).toContain(`at least ${seconds} seconds before it signs`);
    expect(guide).toContain(`${minutes} minutes after`);
    const consoleDoc = readFileSync(path.join(root, "docs", "console.md"), "utf8");
    expect(consoleDoc).toContain(`at least ${seconds} s later`);
    expect(consoleDoc).toContain(`another\n   ${minutes} minutes`);
  });

  it("explains offline_access as the contract does", () => {
    const text = section("3. Discovery and configuration").replace(/\s+/g, " ");
    expect(text).toContain("returns a refresh token **even when `offline_access` was not requested**");
    expect(text).toContain("not a durable compatibility promise");
  });
});

/** The text of a `##` or `###` section of the guide. */
function section(heading: string): string {
  const start = guide.search(new RegExp(`^#{2,3} ${heading.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));
  if (start < 0) throw new Error(`no section "${heading}"`);
  const level = /^#+/.exec(guide.slice(start))![0];
  const rest = guide.slice(guide.indexOf("\n", start) + 1);
  const end = rest.search(new RegExp(`^#{2,${level.length}} `, "m"));
  return end < 0 ? rest : rest.slice(0, end);
}

function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full, ext) : full.endsWith(ext) ? [full] : [];
  });
}
