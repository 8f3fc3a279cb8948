/**
 * Errors a developer can act on (issue 25): the rules stay as SPEC.md states them, but each refusal
 * says what was received and what to change, never echoing a secret, and a production issuer never
 * lists an application's registered redirect URIs to an unauthenticated caller.
 *
 * - the hosted error page: a redirect-URI mismatch shows the URI received; on a development issuer
 *   (PUBLIC_URL on http loopback) also the registered ones and the application's console page;
 *   an unusable `state` shows its length and whether it is base64url, and the recipes;
 * - the redirect's `error_description`: an unusable `nonce` the same way, in ASCII;
 * - the token, revocation and introspection endpoints: a body `client_secret` names the header to send.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { authorizeQuery, authorizeQueryWith, basic, call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { MINIMAL, SPA, standardWorkspace, WEB } from "../helpers/fixtures";
import { escapeHtml } from "../../lib/hosted/html";
import { consoleApplicationUrl, RECIPES_PATH } from "../../lib/oauth/authorize";
import { isLoopbackPublicUrl } from "../../lib/config";

const DEV_URL = "http://localhost:3000";
let prod: Harness;
let dev: Harness;
const ws = uniqueWorkspaceId("deverr");

beforeAll(async () => {
  prod = await createHarness();
  dev = await createHarness({ publicUrl: DEV_URL });
  await seed(prod, standardWorkspace(ws));
  await seed(dev, standardWorkspace(ws));
});

const spaQuery = (overrides: Record<string, string | null> = {}) => authorizeQueryWith({ ...SPA }, overrides);

async function page(h: Harness, query: URLSearchParams | string, headers: Record<string, string> = {}): Promise<string> {
  const res = await call(h, `/t/${ws}/oauth2/authorize?${query}`, { headers });
  expect(res.status).toBe(400);
  expect(res.headers.get("location")).toBeNull();
  expect(res.headers.get("content-type")).toContain("text/html");
  return res.text();
}

const ATTEMPTED = "https://app.example.test/callback/";

describe("a redirect URI that is not registered: the hosted page", () => {
  it("shows the URI received, escaped", async () => {
    const body = await page(prod, spaQuery({ redirect_uri: ATTEMPTED }));
    expect(body).toContain(`<p>Redirect URI received:</p><ul><li><code>${ATTEMPTED}</code></li></ul>`);
    const hostile = "https://x.example/<script>alert(1)</script>";
    const escaped = await page(prod, spaQuery({ redirect_uri: hostile }));
    expect(escaped).not.toContain("<script>");
    expect(escaped).toContain(`<code>${escapeHtml(hostile)}</code>`);
  });

  it("on a production issuer, never lists the registered URIs or links to the console", async () => {
    expect(isLoopbackPublicUrl(prod.service.config.publicUrl)).toBe(false);
    const body = await page(prod, spaQuery({ redirect_uri: ATTEMPTED }));
    expect(body).not.toContain(`<code>${SPA.redirect_uri}</code>`);
    expect(body).not.toContain("Registered for this application");
    expect(body).not.toContain("/console/");
    expect(body).not.toContain("<a ");
  });

  it("on a development issuer (http://localhost), also lists the registered URIs and links to the application's console page", async () => {
    const body = await page(dev, spaQuery({ redirect_uri: ATTEMPTED }));
    expect(body).toContain(`<code>${ATTEMPTED}</code>`);
    expect(body).toContain(`<p>Registered for this application (shown on a localhost server only):</p><ul><li><code>${SPA.redirect_uri}</code></li></ul>`);
    const href = `${DEV_URL}/console/w/${ws}/applications/spa?tab=settings`;
    expect(consoleApplicationUrl(DEV_URL, ws, SPA.client_id)).toBe(href);
    expect(body).toContain(`<p><a href="${href.replace("&", "&amp;")}">Change this application&#39;s redirect URIs in the console</a></p>`);
    // Only the requesting application's URIs.
    expect(body).not.toContain(MINIMAL.redirect_uri);
    expect(body).not.toContain(WEB.redirect_uri);
  });

  it("says when none or several were received", async () => {
    expect(await page(prod, spaQuery({ redirect_uri: null }))).toContain("<p>No redirect_uri was received.</p>");
    expect(await page(prod, spaQuery({ redirect_uri: "" }))).toContain("<p>No redirect_uri was received.</p>");
    const twice = await page(prod, `${spaQuery()}&redirect_uri=${encodeURIComponent(ATTEMPTED)}`);
    expect(twice).toContain(`<p>redirect_uri was received 2 times; send it once:</p><ul><li><code>${SPA.redirect_uri}</code></li><li><code>${ATTEMPTED}</code></li></ul>`);
  });

  it("shows at most 2000 characters of what was received", async () => {
    const long = `https://app.example.test/${"a".repeat(3000)}`;
    const body = await page(prod, spaQuery({ redirect_uri: long }));
    expect(body).toContain(`<code>${long.slice(0, 2000)}…</code>`);
    expect(body).not.toContain(long.slice(0, 2001));
  });

  it("is in the request's language", async () => {
    const body = await page(dev, spaQuery({ redirect_uri: ATTEMPTED }), { "accept-language": "de" });
    expect(body).toContain("<p>Empfangene Weiterleitungs-URI:</p>");
    expect(body).toContain("Für diese Anwendung registriert (nur auf einem localhost-Server angezeigt):");
    expect(body).toContain(">Weiterleitungs-URIs dieser Anwendung in der Konsole ändern</a>");
  });
});

describe("an unusable state: the hosted page", () => {
  it("shows its length and whether it is base64url, never the value, and points to the recipes", async () => {
    const short = "abcDEF123";
    const body = await page(prod, spaQuery({ state: short }));
    expect(body).toContain("<p>Received: 9 characters, all base64url.</p>");
    expect(body).toContain(`<p>Settings for common client libraries:</p><ul><li><code>${RECIPES_PATH}</code></li></ul>`);
    expect(RECIPES_PATH).toBe("docs/recipes/README.md");
    expect(body).not.toContain(short);

    const padded = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY+/==";
    const notBase64url = await page(prod, spaQuery({ state: padded }));
    expect(notBase64url).toContain("<p>Received: 36 characters, not all base64url (only A–Z, a–z, 0–9, - and _, without = padding).</p>");
    expect(notBase64url).not.toContain(padded);
    expect(notBase64url).not.toContain("QUJDREVGR0hJSktMTU5PUFFSU1RVVldY");

    expect(await page(prod, spaQuery({ state: "a".repeat(129) }))).toContain("<p>Received: 129 characters, all base64url.</p>");
  });

  it("says when none or several were received", async () => {
    expect(await page(prod, spaQuery({ state: null }))).toContain("<p>No state was received.</p>");
    const twice = await page(prod, `${spaQuery()}&state=${"b".repeat(32)}`);
    expect(twice).toContain("<p>state was received 2 times.</p>");
    expect(twice).not.toContain("b".repeat(32));
  });

  it("is in the request's language", async () => {
    const body = await page(prod, spaQuery({ state: "abc" }), { "accept-language": "fr" });
    expect(body).toContain("<p>Reçu\u00a0: 3 caractères, tous base64url.</p>");
  });
});

describe("an unusable nonce: the callback's error_description", () => {
  async function description(nonce: string): Promise<string> {
    const query = spaQuery({ nonce });
    const res = await call(prod, `/t/${ws}/oauth2/authorize?${query}`);
    expect(res.status).toBe(303);
    const url = new URL(res.headers.get("location")!);
    expect(url.origin + url.pathname).toBe(SPA.redirect_uri);
    expect(url.searchParams.get("error")).toBe("invalid_request");
    expect(url.searchParams.get("state")).toBe(query.get("state"));
    return url.searchParams.get("error_description")!;
  }

  it("gives its length and whether it is base64url, never the value, and points to the recipes, in RFC 6749's characters", async () => {
    const short = "shortNonce12";
    const first = await description(short);
    expect(first).toBe("nonce must be 24-128 base64url characters; received 12 characters, all base64url. Settings for common client libraries: docs/recipes/README.md");
    const padded = "bm9uY2Utd2l0aC1wYWRkaW5nLWFuZC1wbHVz+A==";
    const second = await description(padded);
    expect(second).toBe(
      "nonce must be 24-128 base64url characters; received 40 characters, not all base64url (only A-Z, a-z, 0-9, - and _, without = padding). Settings for common client libraries: docs/recipes/README.md",
    );
    for (const [text, value] of [
      [first, short],
      [second, padded],
    ]) {
      expect(text).not.toContain(value);
      // RFC 6749 §4.1.2.1: error_description is %x20-21 / %x23-5B / %x5D-7E.
      expect(text).toMatch(/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/);
    }
    expect(await description("n".repeat(129))).toContain("received 129 characters, all base64url");
  });
});

describe("a body client_secret: the header to send instead, on every endpoint that authenticates clients", () => {
  const INSTEAD =
    "client_secret in the body is not supported; confidential clients use HTTP Basic: send the header Authorization: Basic base64(urlencode(client_id):urlencode(client_secret)) and leave client_secret out of the body";

  for (const [endpoint, form] of [
    ["/oauth2/token", { grant_type: "client_credentials", resource: "https://api.example.test", scope: "read:things" }],
    ["/oauth2/revoke", { token: "lka_unknown" }],
    ["/oauth2/introspect", { token: "lka_unknown" }],
  ] as const) {
    it(`${endpoint}: without Basic, and beside it`, async () => {
      for (const headers of [{}, { authorization: basic(WEB.client_id, WEB.secret) }] as Record<string, string>[]) {
        const res = await call(prod, `/t/${ws}${endpoint}`, { form: { ...form, client_id: WEB.client_id, client_secret: WEB.secret }, headers });
        expect(res.status).toBe(400);
        const text = await res.text();
        expect(JSON.parse(text)).toEqual({ error: "invalid_request", error_description: INSTEAD });
        expect(text).not.toContain(WEB.secret);
      }
    });
  }
});
