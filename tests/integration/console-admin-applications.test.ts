/**
 * Console administration of applications: the kind decides the form's rules (redirect URIs for
 * interactive kinds, no secret lifetime for public ones), and delete is real: confirmed on the
 * server by the typed client id, audited once, rows gone, and every token and grant of the client
 * stops working.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { accessTokens, apiGrants, clients, clientSecrets, grants, refreshTokens } from "../../db/schema";
import { ensureSystemWorkspace } from "../../lib/console/system";
import { sha256Hex } from "../../lib/crypto";
import { ADA, API, M2M, MINIMAL, SPA, standardWorkspace, WEB } from "../helpers/fixtures";
import { basic, call, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { auditRows, humanTokens, insertWorkloadToken } from "../helpers/lifecycle";
import { adminAndViewer, createConsoleHarness, runRegistered } from "./console-helpers";

let h: Harness;
const ws = uniqueWorkspaceId("cadm-app");
let admin: string;
let viewer: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, standardWorkspace(ws));
  await ensureSystemWorkspace(h.service);
  ({ admin, viewer } = await adminAndViewer(h, ws, "apps.test"));
});

const run = (token: string, name: Parameters<typeof runRegistered>[3], input: Record<string, unknown>) => runRegistered(h, token, ws, name, input);

async function clientRow(clientId: string) {
  const [row] = await h.service.db.select().from(clients).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, clientId)));
  return row ?? null;
}

const userinfo = (token: string) => call(h, `/t/${ws}/oidc/userinfo`, { headers: { authorization: `Bearer ${token}` } });
const introspect = (token: string, as: { client_id: string; secret: string }) =>
  call(h, `/t/${ws}/oauth2/introspect`, { form: { token }, headers: { authorization: basic(as.client_id, as.secret) } });
/** The permission check's answer for a token: allowed, denied, or the HTTP status of a refusal. */
async function permission(token: string, permission = "read:things"): Promise<boolean | number> {
  const res = await call(h, `/t/${ws}/authorization/check`, {
    method: "POST",
    body: JSON.stringify({ resource: API, permission, organization_id: null }),
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
  });
  return res.status === 200 ? ((await res.json()) as { allowed: boolean }).allowed : res.status;
}
const refresh = (refreshToken: string, client: { client_id: string; secret?: string }) =>
  call(h, `/t/${ws}/oauth2/token`, {
    form: { grant_type: "refresh_token", refresh_token: refreshToken, ...(client.secret ? {} : { client_id: client.client_id }) },
    headers: client.secret ? { authorization: basic(client.client_id, client.secret) } : {},
  });

describe("the new-application form's rules, by kind", () => {
  it("requires a redirect URI for interactive kinds, server-side", async () => {
    for (const kind of ["spa", "web_confidential", "native"]) {
      const out = await run(admin, "createApplication", { client_id: `no-redirect-${kind}`, name: "No redirect", kind });
      expect(out.ok).toBe(false);
      if (!out.ok) expect(out.fieldErrors.redirect_uris).toMatch(/at least one redirect URI/);
      expect(await clientRow(`no-redirect-${kind}`)).toBeNull();
    }
  });

  it("refuses redirect URIs for machine-to-machine and creates it without them", async () => {
    const refused = await run(admin, "createApplication", { client_id: "m2m-with-redirect", name: "Worker", kind: "m2m", redirect_uris: "https://x.example.test/cb" });
    expect(refused.ok).toBe(false);
    const created = await run(admin, "createApplication", { client_id: "m2m-plain", name: "Worker", kind: "m2m", lifetime_days: "30" });
    expect(created.ok).toBe(true);
    expect((await clientRow("m2m-plain"))?.secretLifetimeDays).toBe(30);
  });

  it("ignores a secret lifetime posted for a public application (no secret, default kept)", async () => {
    const out = await run(admin, "createApplication", { client_id: "spa-lifetime", name: "SPA", kind: "spa", lifetime_days: "7", redirect_uris: "https://spa.example.test/cb" });
    expect(out.ok).toBe(true);
    if (out.ok) expect((out.result as { secret: unknown }).secret).toBeNull();
    const row = await clientRow("spa-lifetime");
    expect(row?.secretLifetimeDays).not.toBe(7);
    expect(await h.service.db.select().from(clientSecrets).where(eq(clientSecrets.clientPk, row!.id))).toHaveLength(0);
  });

  it("returns the confidential application's secret once, with its client id", async () => {
    const out = await run(admin, "createApplication", { client_id: "web-new", name: "Web", kind: "web_confidential", redirect_uris: "https://web-new.example.test/cb" });
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    const result = out.result as { clientId: string; type: string; secret: { secret: string } };
    expect(result.clientId).toBe("web-new");
    expect(result.type).toBe("WEB_CONFIDENTIAL");
    expect(result.secret.secret.length).toBeGreaterThan(30);
  });
});

describe("renaming an application", () => {
  it("changes the name shown, audited once", async () => {
    const out = await run(admin, "updateApplication", { client_id: "minimal", name: "Renamed app", redirect_uris: "https://min.example.test/cb", identity_scopes: "openid" });
    expect(out.ok).toBe(true);
    expect((await clientRow("minimal"))?.name).toBe("Renamed app");
    expect(await auditRows(h, ws, "console.application.updated")).toHaveLength(1);
  });
});

describe("an application's home page", () => {
  it("is set and cleared in the console, on the origin of the first redirect URI only (the workspace file's rule)", async () => {
    const base = { client_id: "minimal", name: "Renamed app", redirect_uris: "https://min.example.test/cb", identity_scopes: "openid" };
    expect((await run(admin, "updateApplication", { ...base, home_uri: "https://min.example.test/home" })).ok).toBe(true);
    expect((await clientRow("minimal"))?.homeUri).toBe("https://min.example.test/home");
    expect(await run(admin, "updateApplication", { ...base, home_uri: "https://elsewhere.example.test/" })).toMatchObject({
      ok: false,
      fieldErrors: { home_uri: "https://elsewhere.example.test/ must be on the origin of the application's first redirect URI" },
    });
    expect(await run(admin, "updateApplication", { ...base, home_uri: "http://min.example.test/" })).toMatchObject({ ok: false, fieldErrors: { home_uri: expect.stringMatching(/must use https/) } });
    expect((await clientRow("minimal"))?.homeUri).toBe("https://min.example.test/home");
    expect((await run(admin, "updateApplication", { ...base, home_uri: "" })).ok).toBe(true);
    expect((await clientRow("minimal"))?.homeUri).toBeNull();
  });
});

describe("deleting an application", () => {
  it("is refused to a viewer", async () => {
    await expect(run(viewer, "deleteApplication", { client_id: WEB.client_id, confirm: WEB.client_id })).rejects.toMatchObject({ code: "forbidden" });
    expect(await clientRow(WEB.client_id)).not.toBeNull();
  });

  it("requires the typed client id, on the server", async () => {
    for (const confirm of [undefined, "", "WEB", "spa"]) {
      const out = await run(admin, "deleteApplication", { client_id: WEB.client_id, ...(confirm === undefined ? {} : { confirm }) });
      expect(out.ok).toBe(false);
      if (!out.ok) expect(out.fieldErrors.confirm).toMatch(/Type the client id/);
    }
    expect(await clientRow(WEB.client_id)).not.toBeNull();
    expect(await auditRows(h, ws, "console.application.deleted")).toHaveLength(0);
  });

  it("removes the client and ends its users' tokens and grants (userinfo 401, refresh refused, introspection inactive)", async () => {
    const tokens = await humanTokens(h, ws, WEB, ADA, { scope: "openid email" });
    expect((await userinfo(tokens.access_token)).status).toBe(200);
    // The client's own introspection sees it live before.
    expect(await (await introspect(tokens.access_token, WEB)).json()).toMatchObject({ active: true });
    const before = await clientRow(WEB.client_id);

    const out = await run(admin, "deleteApplication", { client_id: WEB.client_id, confirm: WEB.client_id });
    expect(out).toEqual({ ok: true, result: { deleted: WEB.client_id } });

    expect(await clientRow(WEB.client_id)).toBeNull();
    const db = h.service.db;
    expect(await db.select().from(grants).where(eq(grants.clientPk, before.id))).toHaveLength(0);
    expect(await db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, sha256Hex(tokens.refresh_token)))).toHaveLength(0);
    expect(await db.select().from(accessTokens).where(eq(accessTokens.clientPk, before.id))).toHaveLength(0);
    expect(await db.select().from(clientSecrets).where(eq(clientSecrets.clientPk, before.id))).toHaveLength(0);

    expect((await userinfo(tokens.access_token)).status).toBe(401);
    // The deleted client cannot authenticate to introspect, and no other client sees the token.
    expect((await introspect(tokens.access_token, WEB)).status).toBe(401);
    expect(await (await introspect(tokens.access_token, M2M)).json()).toEqual({ active: false });
    const refused = await refresh(tokens.refresh_token, WEB);
    expect(refused.status).toBe(401);
    expect((await refused.json()).error).toBe("invalid_client");

    const events = await auditRows(h, ws, "console.application.deleted");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ subject: WEB.client_id, clientId: WEB.client_id });
    expect(events[0].data).toMatchObject({ grants_ended: 1, access_tokens_ended: 1 });
  });

  it("ends a public client's refresh tokens too: its grants are gone (invalid_grant once re-created)", async () => {
    const tokens = await humanTokens(h, ws, SPA, ADA, { scope: "openid" });
    const out = await run(admin, "deleteApplication", { client_id: SPA.client_id, confirm: SPA.client_id });
    expect(out.ok).toBe(true);
    // A new application under the same client id does not inherit anything of the deleted one.
    const again = await run(admin, "createApplication", { client_id: SPA.client_id, name: "SPA again", kind: "spa", redirect_uris: SPA.redirect_uri });
    expect(again.ok).toBe(true);
    const refused = await refresh(tokens.refresh_token, SPA);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toBe("invalid_grant");
    expect((await userinfo(tokens.access_token)).status).toBe(401);
  });

  it("ends a machine-to-machine client's tokens and API access", async () => {
    const { token } = await insertWorkloadToken(h, ws, M2M.client_id, { audience: API });
    expect(await permission(token)).toBe(true);
    const m2m = await clientRow(M2M.client_id);
    expect(await h.service.db.select().from(apiGrants).where(eq(apiGrants.clientPk, m2m.id))).toHaveLength(1);

    expect((await run(admin, "deleteApplication", { client_id: M2M.client_id, confirm: M2M.client_id })).ok).toBe(true);
    expect(await permission(token)).toBe(401);
    expect(await h.service.db.select().from(apiGrants).where(eq(apiGrants.clientPk, m2m.id))).toHaveLength(0);
    const cc = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "client_credentials" }, headers: { authorization: basic(M2M.client_id, M2M.secret) } });
    expect(cc.status).toBe(401);
  });
});

describe("disabling an application", () => {
  it("is audited once and stops its tokens until enabled again", async () => {
    const grant = await run(admin, "setClientApiGrant", { client_id: "m2m-plain", audience: API, granted: "on", permissions: "read:things" });
    expect(grant.ok).toBe(true);
    const { token } = await insertWorkloadToken(h, ws, "m2m-plain", { audience: API });
    expect(await permission(token)).toBe(true);
    expect((await run(admin, "setApplicationActive", { client_id: "m2m-plain", active: "false" })).ok).toBe(true);
    expect(await permission(token)).toBe(401);
    expect((await run(admin, "setApplicationActive", { client_id: "m2m-plain", active: "true" })).ok).toBe(true);
    expect(await permission(token)).toBe(true);
    expect(await auditRows(h, ws, "console.application.status_changed")).toHaveLength(2);
  });
});

describe("an application's protocol options (the Protocol card)", () => {
  it("switches the options the features declare for its type, audited with what changed; a viewer cannot", async () => {
    await expect(run(viewer, "setApplicationOptions", { client_id: SPA.client_id, options: ["require_pushed_authorization_requests"] })).rejects.toMatchObject({ code: "forbidden" });
    expect((await clientRow(SPA.client_id))!.options).toEqual({});

    const on = await run(admin, "setApplicationOptions", { client_id: SPA.client_id, options: ["require_pushed_authorization_requests"] });
    expect(on.ok).toBe(true);
    expect((await clientRow(SPA.client_id))!.options).toEqual({ require_pushed_authorization_requests: true });
    // The change reaches the authorization endpoint at once: a front-channel request is refused at the callback.
    const query = new URLSearchParams({ client_id: SPA.client_id, redirect_uri: SPA.redirect_uri, response_type: "code", scope: "openid", state: "s".repeat(43), nonce: "n".repeat(43), code_challenge: "c".repeat(43), code_challenge_method: "S256" });
    const refusedAtCallback = await call(h, `/t/${ws}/oauth2/authorize?${query}`);
    expect(new URL(refusedAtCallback.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");

    const off = await run(admin, "setApplicationOptions", { client_id: SPA.client_id });
    expect(off.ok).toBe(true);
    expect((await clientRow(SPA.client_id))!.options).toEqual({});
    const events = await auditRows(h, ws, "console.application.options_changed");
    expect(events).toHaveLength(2);
    expect(events[0].data).toMatchObject({ changed: ["require_pushed_authorization_requests"], on: ["require_pushed_authorization_requests"] });
    expect(events[1].data).toMatchObject({ changed: ["require_pushed_authorization_requests"], on: [] });
  });

  it("refuses an option the application's type cannot have, or that no feature declares", async () => {
    for (const [clientId, option] of [["m2m-plain", "require_pushed_authorization_requests"], [SPA.client_id, "teleportation"]]) {
      const out = await run(admin, "setApplicationOptions", { client_id: clientId, options: [option] });
      expect(out.ok, JSON.stringify(out)).toBe(false);
      if (!out.ok) expect(JSON.stringify(out.fieldErrors), JSON.stringify(out)).toContain(option);
    }
  });

  it("travels in the workspace file: exported as a key of the application's entry, imported back", async () => {
    const { exportWorkspace } = await import("../../lib/workspaces/export");
    const web0 = await run(admin, "setApplicationOptions", { client_id: MINIMAL.client_id, options: ["require_pushed_authorization_requests"] });
    expect(web0.ok, JSON.stringify(web0)).toBe(true);
    const doc = (await exportWorkspace(h.service.db, ws))!;
    const web = doc.applications.find((a) => a.client_id === MINIMAL.client_id) as Record<string, unknown>;
    expect(web.require_pushed_authorization_requests).toBe(true);
    const spa = doc.applications.find((a) => a.client_id === SPA.client_id) as Record<string, unknown>;
    expect(spa).not.toHaveProperty("require_pushed_authorization_requests");
    web.require_pushed_authorization_requests = false;
    await seed(h, doc);
    expect((await clientRow(MINIMAL.client_id))!.options).toEqual({});
  });
});
