/**
 * The console's social providers and the applications that offer them, tested on lib/console as
 * the server actions run them: presets and their required settings, the secret (Apple: the
 * private key) encrypted and never returned, button order, and the application's choice.
 */
import { generateKeyPairSync } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, clientSocialProviders, clients, socialProviders } from "../../../db/schema";
import { applicationSocialProviderIds } from "../../../lib/console/applications";
import { runOperation } from "../../../lib/console/operation";
import { operations } from "../../../lib/console/registry";
import { listSocialProviders } from "../../../lib/console/social-providers";
import { ensureSystemWorkspace } from "../../../lib/console/system";
import { decryptSecret } from "../../../lib/crypto";
import { standardWorkspace } from "../../helpers/fixtures";
import { seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { consoleSignIn, createConsoleHarness, createOperator } from "../console-helpers";

let h: Harness;
const W = uniqueWorkspaceId("csoc");
const OTHER = uniqueWorkspaceId("csoc-other");
let admin: string;
let viewer: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, standardWorkspace(W));
  await seed(h, { id: OTHER, name: "Other", social_providers: [{ key: "elsewhere", preset: "google", name: "Google", client_id: "x" }] });
  await ensureSystemWorkspace(h.service);
  await createOperator(h, "soc-admin@operators.test", { [W]: "admin" });
  await createOperator(h, "soc-viewer@operators.test", { [W]: "viewer" });
  admin = (await consoleSignIn(h, "soc-admin@operators.test")).token;
  viewer = (await consoleSignIn(h, "soc-viewer@operators.test")).token;
});

const run = (token: string, name: keyof typeof operations, input: Record<string, unknown>) =>
  runOperation(h.service, token, W, operations[name] as (typeof operations)["createSocialProvider"], input, { ip: "192.0.2.10" });

const rowByKey = async (key: string) => (await h.service.db.select().from(socialProviders).where(and(eq(socialProviders.workspaceId, W), eq(socialProviders.key, key))))[0];
const keys = async () => (await listSocialProviders(h.service, W)).map((p) => p.key);

describe("social providers", () => {
  it("adds providers from presets; the secret is encrypted under its purpose and never returned", async () => {
    const out = await run(admin, "createSocialProvider", { preset: "google", key: "google", name: "Google", client_id: "g.apps", client_secret: "google-secret", enabled: "on" });
    expect(out.ok).toBe(true);
    expect(JSON.stringify(out)).not.toContain("google-secret");
    const row = await rowByKey("google");
    expect(decryptSecret(h.service.config.masterKey, row.secretEncrypted!, `social-provider:${row.id}`)).toBe("google-secret");
    const listed = await listSocialProviders(h.service, W);
    expect(listed[0]).toMatchObject({ key: "google", hasSecret: true, enabled: true, position: 0 });
    expect(JSON.stringify(listed)).not.toContain(row.secretEncrypted!);
    const [event] = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, "console.social_provider.created")));
    expect(event.data).toMatchObject({ preset: "google", secret_changed: true });
    expect(JSON.stringify(event.data)).not.toContain("google-secret");

    expect((await run(admin, "createSocialProvider", { preset: "github", key: "github", name: "GitHub", client_id: "gh", client_secret: "s", api_base: "https://ghe.example/api/v3", enabled: "on" })).ok).toBe(true);
    expect((await run(admin, "createSocialProvider", { preset: "microsoft", key: "microsoft", name: "Microsoft", client_id: "m", client_secret: "s", tenant: "contoso.onmicrosoft.com" })).ok).toBe(true);
    expect(await keys()).toEqual(["google", "github", "microsoft"]);
    expect((await rowByKey("microsoft")).config).toEqual({ tenant: "contoso.onmicrosoft.com" });
    expect((await rowByKey("microsoft")).enabled).toBe(false);
  });

  it("checks each preset's settings", async () => {
    const dup = await run(admin, "createSocialProvider", { preset: "google", key: "google", name: "Google 2", client_id: "x", client_secret: "s" });
    expect(dup).toMatchObject({ ok: false, fieldErrors: { key: expect.stringContaining("already exists") } });
    const oidc = await run(admin, "createSocialProvider", { preset: "oidc", key: "corp", name: "Corp", client_id: "x", client_secret: "s", issuer: "http://corp.example" });
    expect(oidc).toMatchObject({ ok: false, fieldErrors: { issuer: expect.stringContaining("https") } });
    const oidcMissing = await run(admin, "createSocialProvider", { preset: "oidc", key: "corp", name: "Corp", client_id: "x", client_secret: "s" });
    expect(oidcMissing).toMatchObject({ ok: false, fieldErrors: { issuer: expect.stringContaining("required") } });
    const wrongField = await run(admin, "createSocialProvider", { preset: "google", key: "g2", name: "G", client_id: "x", client_secret: "s", tenant: "common" });
    expect(wrongField).toMatchObject({ ok: false, fieldErrors: { tenant: expect.stringContaining("does not apply to the google preset") } });
    const multiTenant = await run(admin, "createSocialProvider", { preset: "microsoft", key: "ms2", name: "MS", client_id: "x", client_secret: "s", tenant: "common" });
    expect(multiTenant).toMatchObject({ ok: false, fieldErrors: { tenant: expect.stringContaining("must be one tenant") } });
    const noTenant = await run(admin, "createSocialProvider", { preset: "microsoft", key: "ms2", name: "MS", client_id: "x", client_secret: "s" });
    expect(noTenant).toMatchObject({ ok: false, fieldErrors: { tenant: expect.stringContaining("required") } });
    const apple = await run(admin, "createSocialProvider", { preset: "apple", key: "apple", name: "Apple", client_id: "com.example", client_secret: "not a key" });
    expect(apple).toMatchObject({ ok: false, fieldErrors: { client_secret: expect.stringContaining("private key"), team_id: expect.any(String), key_id: expect.any(String) } });
    const noSecret = await run(admin, "createSocialProvider", { preset: "github", key: "gh2", name: "GH", client_id: "x" });
    expect(noSecret).toMatchObject({ ok: false, fieldErrors: { client_secret: expect.any(String) } });
    expect(await keys()).toEqual(["google", "github", "microsoft"]);
  });

  it("stores Apple's private key, team id and key id", async () => {
    const pem = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const out = await run(admin, "createSocialProvider", { preset: "apple", key: "apple", name: "Apple", client_id: "com.example.web", client_secret: pem, team_id: "TEAM123", key_id: "KEY456", enabled: "on" });
    expect(out.ok).toBe(true);
    const row = await rowByKey("apple");
    expect(row.config).toEqual({ team_id: "TEAM123", key_id: "KEY456" });
    expect(decryptSecret(h.service.config.masterKey, row.secretEncrypted!, `social-provider:${row.id}`)).toBe(pem.trim());
  });

  it("updates settings, keeping the secret when left empty", async () => {
    const before = await rowByKey("github");
    const out = await run(admin, "updateSocialProvider", { provider_id: before.id, name: "GitHub Enterprise", client_id: "gh2", client_secret: "", api_base: "", enabled: "on" });
    expect(out.ok).toBe(true);
    const after = await rowByKey("github");
    expect(after).toMatchObject({ name: "GitHub Enterprise", clientId: "gh2", config: {}, secretEncrypted: before.secretEncrypted });
  });

  it("moves buttons up and down; the ends stay put without an audit", async () => {
    const apple = await rowByKey("apple");
    expect((await run(admin, "moveSocialProvider", { provider_id: apple.id, direction: "up" })).ok).toBe(true);
    expect(await keys()).toEqual(["google", "github", "apple", "microsoft"]);
    const google = await rowByKey("google");
    expect((await run(admin, "moveSocialProvider", { provider_id: google.id, direction: "down" })).ok).toBe(true);
    expect(await keys()).toEqual(["github", "google", "apple", "microsoft"]);
    const github = await rowByKey("github");
    expect((await run(admin, "moveSocialProvider", { provider_id: github.id, direction: "up" })).ok).toBe(true);
    expect(await keys()).toEqual(["github", "google", "apple", "microsoft"]);
    expect((await listSocialProviders(h.service, W)).map((p) => p.position)).toEqual([0, 1, 2, 3]);
    const moves = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, "console.social_provider.moved")));
    expect(moves).toHaveLength(2);
  });

  it("is refused to a viewer", async () => {
    await expect(run(viewer, "createSocialProvider", { preset: "google", key: "v", name: "V", client_id: "x", client_secret: "s" })).rejects.toMatchObject({ code: "forbidden" });
  });
});

describe("an application's social sign-in", () => {
  const pk = async (clientId: string) => (await h.service.db.select().from(clients).where(and(eq(clients.workspaceId, W), eq(clients.clientId, clientId))))[0].id;

  it("offers exactly the checked providers of this workspace", async () => {
    const google = await rowByKey("google");
    const apple = await rowByKey("apple");
    expect((await run(admin, "setApplicationSocialProviders", { client_id: "spa", provider_ids: [google.id, apple.id] })).ok).toBe(true);
    expect((await applicationSocialProviderIds(h.service, W, await pk("spa"))).sort()).toEqual([google.id, apple.id].sort());
    expect((await run(admin, "setApplicationSocialProviders", { client_id: "spa", provider_ids: apple.id })).ok).toBe(true);
    expect(await applicationSocialProviderIds(h.service, W, await pk("spa"))).toEqual([apple.id]);
    // Saved unchanged: no audit event.
    expect((await run(admin, "setApplicationSocialProviders", { client_id: "spa", provider_ids: apple.id })).ok).toBe(true);
    const events = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, "console.application.social_providers_set")));
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ clientId: "spa", data: { providers: ["apple"], removed: [google.id] } });
  });

  it("refuses another workspace's provider and an M2M application", async () => {
    const [elsewhere] = await h.service.db.select().from(socialProviders).where(eq(socialProviders.workspaceId, OTHER));
    expect(await run(admin, "setApplicationSocialProviders", { client_id: "web", provider_ids: [elsewhere.id] })).toMatchObject({ ok: false, fieldErrors: { provider_ids: expect.any(String) } });
    const google = await rowByKey("google");
    expect(await run(admin, "setApplicationSocialProviders", { client_id: "m2m", provider_ids: [google.id] })).toMatchObject({ ok: false, formError: expect.stringContaining("machine-to-machine") });
    expect(await applicationSocialProviderIds(h.service, W, await pk("web"))).toEqual([]);
  });

  it("removing a provider removes it from the applications", async () => {
    const apple = await rowByKey("apple");
    expect((await run(admin, "removeSocialProvider", { provider_id: apple.id })).ok).toBe(true);
    expect(await h.service.db.select().from(clientSocialProviders).where(eq(clientSocialProviders.providerId, apple.id))).toEqual([]);
    expect(await keys()).toEqual(["github", "google", "microsoft"]);
  });
});
