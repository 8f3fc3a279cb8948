/**
 * The public documents (discovery, RFC 8414 metadata, JWKS) built once per configuration
 * (lib/oauth/documents.ts): answered from the bytes built on first use until a change of the
 * workspace drops them (every kind of change the documents read, at once), a retired key leaves
 * JWKS at its time, or the entry's TTL passes; a strong ETag and 304 for If-None-Match; a bound
 * on what one workspace keeps; never one workspace's or issuer's answer for another.
 */
import { and, eq } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { apis, clients, signingKeys } from "../../db/schema";
import { ensureSystemWorkspace } from "../../lib/console/system";
import { addHostname, applyHostnameVerification, hostnameTxtRecord } from "../../lib/hostnames/hostnames";
import { forgetHostnames } from "../../lib/hostnames/directory";
import { DISCOVERY_DOCUMENTS_PER_WORKSPACE } from "../../lib/oauth/discovery";
import { DOCUMENT_TTL_MS, DocumentShelf, buildDocument, noneMatchHolds } from "../../lib/oauth/documents";
import { RETIRED_KEY_PUBLISHED_MS } from "../../lib/oauth/keys";
import { workspaceCacheKey } from "../../lib/service";
import { API, SPA, standardWorkspace } from "../helpers/fixtures";
import { call, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { adminAndViewer, createConsoleHarness, runRegistered } from "./console-helpers";

let h: Harness;
const ws = uniqueWorkspaceId("docs");
const other = uniqueWorkspaceId("docs-other");
let admin: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, standardWorkspace(ws));
  // The same client_id in another workspace, with other scopes and no API.
  await seed(h, { ...standardWorkspace(other), applications: [{ client_id: SPA.client_id, name: "Other SPA", type: "PUBLIC", redirect_uris: [SPA.redirect_uri], identity_scopes: ["openid"] }], api_grants: [], roles: [], users: [] });
  await ensureSystemWorkspace(h.service);
  ({ admin } = await adminAndViewer(h, ws, "documents.test"));
});

afterEach(() => {
  vi.restoreAllMocks();
});

const run = (name: Parameters<typeof runRegistered>[3], input: Record<string, unknown>) => runRegistered(h, admin, ws, name, input);
const discovery = (query = "", headers: Record<string, string> = {}, workspace = ws) => call(h, `/t/${workspace}/.well-known/openid-configuration${query}`, { headers });
const jwks = (headers: Record<string, string> = {}) => call(h, `/t/${ws}/.well-known/jwks.json`, { headers });
const scopes = async (query = "?client_id=spa", workspace = ws) => ((await (await discovery(query, {}, workspace)).json()) as { scopes_supported: string[] }).scopes_supported;
const kids = async () => ((await (await jwks()).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();

async function apiRow(audience: string) {
  const [row] = await h.service.db.select().from(apis).where(and(eq(apis.workspaceId, ws), eq(apis.audience, audience)));
  return row;
}

describe("built once", () => {
  it("answers from the bytes it built: a write that is not announced is not seen until the entry's TTL passes", async () => {
    expect(await scopes()).toEqual(["email", "openid", "profile", "read:things", "write:things"]);
    // Written behind the service's back (no announcement, nothing forgotten): the built bytes stay.
    await h.service.db.update(clients).set({ identityScopes: ["openid"] }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, SPA.client_id)));
    expect(await scopes()).toEqual(["email", "openid", "profile", "read:things", "write:things"]);
    // Past the TTL, it is read again.
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + DOCUMENT_TTL_MS + 1);
    expect(await scopes()).toEqual(["openid", "read:things", "write:things"]);
    vi.restoreAllMocks();
    expect((await run("updateApplication", { client_id: SPA.client_id, name: "Single-page app", redirect_uris: SPA.redirect_uri, allowed_origins: "https://app.example.test", identity_scopes: ["openid", "email", "profile"] })).ok).toBe(true);
    expect(await scopes()).toEqual(["email", "openid", "profile", "read:things", "write:things"]);
  });

  it("answers JWKS from the bytes it built too, until its TTL", async () => {
    const before = await kids();
    const [extra] = await h.service.db.select().from(signingKeys).where(eq(signingKeys.workspaceId, ws)).limit(1);
    await h.service.db.insert(signingKeys).values({ ...extra, kid: `${extra.kid}-copy`, publicJwk: { ...(extra.publicJwk as object), kid: `${extra.kid}-copy` }, status: "published", activatedAt: null });
    expect(await kids()).toEqual(before);
    const start = Date.now();
    const now = vi.spyOn(Date, "now").mockReturnValue(start + DOCUMENT_TTL_MS + 1);
    expect(await kids()).toEqual([...before, `${extra.kid}-copy`].sort());
    await h.service.db.delete(signingKeys).where(eq(signingKeys.kid, `${extra.kid}-copy`));
    expect(await kids()).toEqual([...before, `${extra.kid}-copy`].sort());
    now.mockReturnValue(start + 2 * (DOCUMENT_TTL_MS + 1));
    expect(await kids()).toEqual(before);
  });
});

describe("follows each change at once", () => {
  it("a client's identity scopes", async () => {
    expect(await scopes()).toContain("email");
    expect((await run("updateApplication", { client_id: SPA.client_id, name: "Single-page app", redirect_uris: SPA.redirect_uri, allowed_origins: "https://app.example.test", identity_scopes: ["openid", "profile"] })).ok).toBe(true);
    expect(await scopes()).toEqual(["openid", "profile", "read:things", "write:things"]);
    expect((await run("updateApplication", { client_id: SPA.client_id, name: "Single-page app", redirect_uris: SPA.redirect_uri, allowed_origins: "https://app.example.test", identity_scopes: ["openid", "email", "profile"] })).ok).toBe(true);
    expect(await scopes()).toEqual(["email", "openid", "profile", "read:things", "write:things"]);
  });

  it("an API grant added, changed and removed", async () => {
    expect(await scopes("?client_id=minimal")).toEqual(["openid"]);
    expect((await run("setClientApiGrant", { client_id: "minimal", audience: API, granted: "on", permissions: ["read:things"] })).ok).toBe(true);
    expect(await scopes("?client_id=minimal")).toEqual(["openid", "read:things"]);
    expect((await run("setClientApiGrant", { client_id: "minimal", audience: API, granted: "on", permissions: ["read:things", "admin:things"] })).ok).toBe(true);
    expect(await scopes("?client_id=minimal")).toEqual(["admin:things", "openid", "read:things"]);
    expect((await run("setClientApiGrant", { client_id: "minimal", audience: API })).ok).toBe(true);
    expect(await scopes("?client_id=minimal")).toEqual(["openid"]);
  });

  it("an API deactivated and activated, and its permissions changed", async () => {
    const api = await apiRow(API);
    expect(await scopes()).toContain("read:things");
    expect((await run("setApiActive", { api_id: api.id, active: "false", confirm: API })).ok).toBe(true);
    expect(await scopes()).toEqual(["email", "openid", "profile"]);
    expect((await run("setApiActive", { api_id: api.id, active: "true" })).ok).toBe(true);
    expect(await scopes()).toEqual(["email", "openid", "profile", "read:things", "write:things"]);
    expect((await run("updateApi", { api_id: api.id, name: api.name, permissions: "read:things admin:things" })).ok).toBe(true);
    expect(await scopes()).toEqual(["email", "openid", "profile", "read:things"]);
    expect((await run("updateApi", { api_id: api.id, name: api.name, permissions: api.permissions.join(" ") })).ok).toBe(true);
    expect((await run("setClientApiGrant", { client_id: SPA.client_id, audience: API, granted: "on", permissions: ["read:things", "write:things"] })).ok).toBe(true);
    expect(await scopes()).toEqual(["email", "openid", "profile", "read:things", "write:things"]);
  });

  it("a client deactivated, activated, created and deleted; the document without client_id follows the latest change", async () => {
    expect((await discovery("?client_id=minimal")).status).toBe(200);
    expect((await run("setApplicationActive", { client_id: "minimal", active: "false" })).ok).toBe(true);
    expect((await discovery("?client_id=minimal")).status).toBe(404);
    expect((await run("setApplicationActive", { client_id: "minimal", active: "true" })).ok).toBe(true);
    expect((await discovery("?client_id=minimal")).status).toBe(200);
    // Without client_id: the most recently changed active interactive client's scopes (minimal's, just activated).
    expect(await scopes("")).toEqual(["openid"]);
    h.clock.advance(1_000);
    expect((await run("updateApplication", { client_id: SPA.client_id, name: "Single-page app", redirect_uris: SPA.redirect_uri, allowed_origins: "https://app.example.test", identity_scopes: ["openid", "email", "profile"] })).ok).toBe(true);
    expect(await scopes("")).toEqual(["email", "openid", "profile", "read:things", "write:things"]);
    expect((await discovery("?client_id=docs-new")).status).toBe(404);
    h.clock.advance(1_000);
    expect((await run("createApplication", { client_id: "docs-new", name: "New", kind: "public_web", redirect_uris: "https://new.example.test/cb" })).ok).toBe(true);
    expect((await discovery("?client_id=docs-new")).status).toBe(200);
    expect(await scopes("")).toEqual(["openid"]);
    expect((await run("deleteApplication", { client_id: "docs-new", confirm: "docs-new" })).ok).toBe(true);
    expect((await discovery("?client_id=docs-new")).status).toBe(404);
  });

  it("a signing key published, then activated (the old one retired stays), and the retired key gone at its time", async () => {
    const [first] = await kids();
    expect(await kids()).toEqual([first]);
    const published = await run("publishKey", {});
    expect(published.ok).toBe(true);
    const next = (published as { result: { kid: string } }).result.kid;
    expect(await kids()).toEqual([first, next].sort());
    h.clock.advance(301_000);
    expect((await run("activateKey", {})).ok).toBe(true);
    expect(await kids()).toEqual([first, next].sort());
    // No write removes the retired key: its unpublishAt passes.
    h.clock.advance(RETIRED_KEY_PUBLISHED_MS - 1_000);
    expect(await kids()).toEqual([first, next].sort());
    h.clock.advance(2_000);
    expect(await kids()).toEqual([next]);
  });
});

describe("ETag and If-None-Match", () => {
  it("sends a strong ETag, and 304 with it and the caching headers, no body, for a matching If-None-Match", async () => {
    for (const [get, cacheControl] of [
      [(headers: Record<string, string>) => discovery("?client_id=spa", headers), "public, max-age=60"],
      [(headers: Record<string, string>) => discovery("", headers), "public, max-age=60"],
      [(headers: Record<string, string>) => call(h, `/.well-known/oauth-authorization-server/t/${ws}`, { headers }), "public, max-age=60"],
      [jwks, "public, max-age=300, must-revalidate"],
    ] as const) {
      const full = await get({});
      expect(full.status).toBe(200);
      const etag = full.headers.get("etag")!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(etag.length).toBeGreaterThan(20);
      expect((await get({})).headers.get("etag")).toBe(etag);
      for (const field of [etag, `W/${etag}`, `"nope", ${etag}`, `"a,b", W/"x",${etag} , "y"`, "*", ` * `]) {
        const notModified = await get({ "if-none-match": field });
        expect(notModified.status, field).toBe(304);
        expect(notModified.headers.get("etag")).toBe(etag);
        expect(notModified.headers.get("cache-control")).toBe(cacheControl);
        expect(notModified.headers.get("access-control-allow-origin")).toBe("*");
        expect(notModified.headers.get("content-type")).toBeNull();
        expect(await notModified.text()).toBe("");
      }
      for (const field of ['"nope"', `W/"nope", "other"`, etag.slice(0, -2) + '"', etag.slice(1, -1), ""]) {
        const res = await get({ "if-none-match": field });
        expect(res.status, field).toBe(200);
        expect(res.headers.get("etag")).toBe(etag);
        expect(await res.text()).toBe(await full.clone().text());
      }
    }
  });

  it("answers HEAD with 304 too", async () => {
    const etag = (await jwks()).headers.get("etag")!;
    const head = await call(h, `/t/${ws}/.well-known/jwks.json`, { method: "HEAD", headers: { "if-none-match": etag } });
    expect(head.status).toBe(304);
    expect(head.headers.get("etag")).toBe(etag);
  });

  it("changes the ETag when the document changes, so the old one no longer answers 304", async () => {
    const before = await discovery("?client_id=spa");
    const etag = before.headers.get("etag")!;
    expect((await run("updateApplication", { client_id: SPA.client_id, name: "Single-page app", redirect_uris: SPA.redirect_uri, allowed_origins: "https://app.example.test", identity_scopes: ["openid", "email"] })).ok).toBe(true);
    const after = await discovery("?client_id=spa", { "if-none-match": etag });
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).not.toBe(etag);
    expect(((await after.json()) as { scopes_supported: string[] }).scopes_supported).toEqual(["email", "openid", "read:things", "write:things"]);
    expect((await discovery("?client_id=spa", { "if-none-match": after.headers.get("etag")! })).status).toBe(304);
    expect((await run("updateApplication", { client_id: SPA.client_id, name: "Single-page app", redirect_uris: SPA.redirect_uri, allowed_origins: "https://app.example.test", identity_scopes: ["openid", "email", "profile"] })).ok).toBe(true);
    expect((await discovery("?client_id=spa", { "if-none-match": etag })).status).toBe(304);
  });

  it("leaves errors as they were: no ETag, no 304", async () => {
    for (const query of ["?client_id=nope", "?foo=1", "?client_id=spa&client_id=web"]) {
      const res = await discovery(query, { "if-none-match": "*" });
      expect(res.status, query).toBeGreaterThanOrEqual(400);
      expect(res.headers.get("etag")).toBeNull();
    }
    const unknownWorkspace = await call(h, "/t/no-such-workspace/.well-known/jwks.json", { headers: { "if-none-match": "*" } });
    expect(unknownWorkspace.status).toBe(404);
  });

  it("compares as RFC 9110 says for If-None-Match (weak comparison, lists, *)", () => {
    const etag = '"abc"';
    expect(noneMatchHolds(null, etag)).toBe(false);
    expect(noneMatchHolds("*", etag)).toBe(true);
    expect(noneMatchHolds('W/"abc"', etag)).toBe(true);
    expect(noneMatchHolds('"x", "abc"', etag)).toBe(true);
    expect(noneMatchHolds('"x,\\"abc", "y"', etag)).toBe(false);
    expect(noneMatchHolds('"abcd"', etag)).toBe(false);
    expect(noneMatchHolds("abc", etag)).toBe(false);
    expect(noneMatchHolds('"ABC"', etag)).toBe(false);
  });
});

describe("bounds", () => {
  it("keeps nothing for client_ids that name no active client, however many", async () => {
    const key = workspaceCacheKey("discovery", ws);
    await discovery("?client_id=spa");
    const shelf = h.service.cache.get(key) as DocumentShelf;
    const before = shelf.size;
    for (let i = 0; i < 50; i++) expect((await discovery(`?client_id=bogus-${i}-${"x".repeat(200)}`)).status).toBe(404);
    expect((h.service.cache.get(key) as DocumentShelf).size).toBe(before);
  });

  it(`keeps at most ${DISCOVERY_DOCUMENTS_PER_WORKSPACE} documents per workspace, the least recently asked for out first`, async () => {
    const many = uniqueWorkspaceId("docs-many");
    const count = DISCOVERY_DOCUMENTS_PER_WORKSPACE + 20;
    await seed(h, {
      ...standardWorkspace(many),
      applications: Array.from({ length: count }, (_, i) => ({ client_id: `app-${i}`, name: `App ${i}`, type: "PUBLIC", redirect_uris: [`https://app${i}.example.test/cb`], identity_scopes: ["openid"] })),
      api_grants: [],
      roles: [],
      users: [],
    });
    for (let i = 0; i < count; i++) expect((await discovery(`?client_id=app-${i}`, {}, many)).status).toBe(200);
    const shelf = h.service.cache.get(workspaceCacheKey("discovery", many)) as DocumentShelf;
    expect(shelf.size).toBe(DISCOVERY_DOCUMENTS_PER_WORKSPACE);
  }, 60_000);

  it("a shelf drops the least recently used entry past its limit", () => {
    const shelf = new DocumentShelf(2);
    const document = buildDocument({ a: 1 }, "public, max-age=60");
    shelf.set("a", document);
    shelf.set("b", document);
    expect(shelf.get("a", h.service)).toBe(document);
    shelf.set("c", document);
    expect(shelf.size).toBe(2);
    expect(shelf.get("b", h.service)).toBeUndefined();
    expect(shelf.get("a", h.service)).toBe(document);
    expect(shelf.get("c", h.service)).toBe(document);
  });
});

describe("never another workspace's or issuer's document", () => {
  it("answers the same client_id in two workspaces with each one's document", async () => {
    expect(await scopes("?client_id=spa", ws)).toEqual(["email", "openid", "profile", "read:things", "write:things"]);
    expect(await scopes("?client_id=spa", other)).toEqual(["openid"]);
    const a = await discovery("?client_id=spa");
    const b = await discovery("?client_id=spa", {}, other);
    expect(((await b.json()) as { issuer: string }).issuer).toBe(`${PUBLIC_URL}/t/${other}`);
    expect(a.headers.get("etag")).not.toBe(b.headers.get("etag"));
    expect((await discovery("?client_id=spa", { "if-none-match": a.headers.get("etag")! }, other)).status).toBe(200);
  });

  it("gives each hostname of a workspace its own issuer in the document, with and without client_id", async () => {
    // Of one length, so that only the hostname tells their issuers apart.
    const hostnames = [`login.${ws}.test`, `logon.${ws}.test`];
    for (const hostname of hostnames) {
      const claim = await addHostname(h.service.db, { workspaceId: ws, hostname, publicUrl: PUBLIC_URL, now: h.clock.now() });
      const result = await applyHostnameVerification(h.service.db, { workspaceId: ws, id: claim.id, now: h.clock.now(), lookup: { ok: true, records: [hostnameTxtRecord(claim).value] } });
      expect(result.verified).toBe(true);
    }
    forgetHostnames(h.service);
    const origin = (host: string) => `${new URL(PUBLIC_URL).protocol}//${host}${new URL(PUBLIC_URL).port ? `:${new URL(PUBLIC_URL).port}` : ""}`;
    for (const query of ["", "?client_id=spa"]) {
      const atDefault = await discovery(query);
      const seen = new Set<string>([atDefault.headers.get("etag")!]);
      expect(((await atDefault.json()) as { issuer: string }).issuer).toBe(`${PUBLIC_URL}/t/${ws}`);
      for (const host of hostnames) {
        for (let i = 0; i < 2; i++) {
          const res = await discovery(query, { host });
          expect(res.status).toBe(200);
          const doc = (await res.json()) as { issuer: string; token_endpoint: string; jwks_uri: string };
          expect(doc.issuer, host).toBe(`${origin(host)}/t/${ws}`);
          expect(doc.token_endpoint).toBe(`${origin(host)}/t/${ws}/oauth2/token`);
          expect(doc.jwks_uri).toBe(`${origin(host)}/t/${ws}/.well-known/jwks.json`);
          if (i === 0) seen.add(res.headers.get("etag")!);
        }
      }
      expect(seen.size).toBe(3);
      expect(((await (await discovery(query)).json()) as { issuer: string }).issuer).toBe(`${PUBLIC_URL}/t/${ws}`);
    }
  });
});
