/**
 * Workspace branding end to end on lib/: the console's operations as the server actions run them
 * (runOperation: role, validation, one audit event), the logo's address under the issuer, and the
 * workspace file (validation with the same rule, import, export, round trip).
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, workspaceLogos, workspaces } from "../../../db/schema";
import { loadBranding, logoResponse } from "../../../lib/branding/store";
import { removeLogo, setBranding, setLogo } from "../../../lib/console/branding";
import { runOperation } from "../../../lib/console/operation";
import { ensureSystemWorkspace } from "../../../lib/console/system";
import { inlineLogoFile } from "../../../lib/workspaces/document/branding";
import { exportWorkspace, importWorkspace, validateWorkspaceDocument, WorkspaceFileError } from "../../../lib/workspaces/file";
import { seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { consoleSignIn, createConsoleHarness, createOperator } from "../console-helpers";

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");
const GIF = Buffer.from("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==", "base64");
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>');

let h: Harness;
const W = uniqueWorkspaceId("brand");
const OTHER = uniqueWorkspaceId("brand-other");
let admin: string;
let viewer: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, { id: W, name: "Acme" });
  await seed(h, { id: OTHER, name: "Other" });
  await ensureSystemWorkspace(h.service);
  await createOperator(h, "admin@brand.test", { [W]: "admin" });
  await createOperator(h, "viewer@brand.test", { [W]: "viewer" });
  admin = (await consoleSignIn(h, "admin@brand.test")).token;
  viewer = (await consoleSignIn(h, "viewer@brand.test")).token;
});

const audits = () =>
  h.service.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, "console.workspace.branding_changed")));

const save = (token: string, input: Record<string, unknown>) => runOperation(h.service, token, W, setBranding, input);

describe("console: display name, primary colour, theme", () => {
  it("saves, reads back on the hosted pages, audits once per change and not at all for no change", async () => {
    const before = (await audits()).length;
    const outcome = await save(admin, { display_name: "Acme Sign-in", primary_color: "#1D4ED8", theme: "dark" });
    expect(outcome).toEqual({ ok: true, result: { changed: ["displayName", "primaryColor", "theme"] } });
    const b = await loadBranding(h.service.db, W);
    expect(b).toMatchObject({ displayName: "Acme Sign-in", primaryColor: "#1d4ed8", theme: "dark", logoUrl: null });
    expect(await audits()).toHaveLength(before + 1);
    const [event] = (await audits()).slice(-1);
    expect(event.data).toMatchObject({ changed: ["displayName", "primaryColor", "theme"], after: { displayName: "Acme Sign-in", primaryColor: "#1d4ed8", theme: "dark" } });

    expect(await save(admin, { display_name: "Acme Sign-in", primary_color: "#1d4ed8", theme: "dark" })).toEqual({ ok: true, result: { changed: [] } });
    expect(await audits()).toHaveLength(before + 1);
  });

  it("refuses a colour buttons cannot carry text on, beside the field with the ratio; nothing saved", async () => {
    const outcome = await save(admin, { display_name: "", primary_color: "#777777", theme: "light" });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.fieldErrors.primary_color).toMatch(/4\.47:1.*4\.5:1/);
    expect((await loadBranding(h.service.db, W))?.primaryColor).toBe("#1d4ed8");
  });

  it("refuses bad input field by field", async () => {
    const outcome = await save(admin, { display_name: "x".repeat(61), primary_color: "blue", theme: "neon" });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(Object.keys(outcome.fieldErrors).sort()).toEqual(["display_name", "primary_color", "theme"]);
  });

  it("an empty display name (or the workspace's own) means the workspace's name", async () => {
    await save(admin, { display_name: "", primary_color: "#1d4ed8", theme: "auto" });
    const stored = (await h.service.db.select({ branding: workspaces.branding }).from(workspaces).where(eq(workspaces.id, W)))[0].branding;
    expect(stored).toEqual({ primaryColor: "#1d4ed8" });
    expect(await loadBranding(h.service.db, W)).toMatchObject({ displayName: "Acme", theme: "auto" });
  });

  it("viewers may not change it", async () => {
    await expect(save(viewer, { display_name: "Nope", primary_color: "#1d4ed8", theme: "auto" })).rejects.toMatchObject({ code: "forbidden" });
  });
});

describe("console: logo", () => {
  it("refuses SVG, anything not an image, and more than 200 KB, beside the field", async () => {
    for (const [bytes, message] of [
      [SVG, /PNG, JPEG, WebP or GIF/],
      [Buffer.from("%PDF-1.4"), /PNG, JPEG, WebP or GIF/],
      [Buffer.concat([PNG, Buffer.alloc(200 * 1024)]), /200 KB/],
    ] as const) {
      const outcome = await runOperation(h.service, admin, W, setLogo, { logo: bytes });
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.fieldErrors.logo).toMatch(message);
    }
    expect((await loadBranding(h.service.db, W))?.logoUrl).toBeNull();
  });

  it("is served from the workspace's issuer at its digest: immutable, nosniff, no active content; 404 once stale or removed", async () => {
    const before = (await audits()).length;
    const first = await runOperation(h.service, admin, W, setLogo, { logo: PNG });
    expect(first.ok).toBe(true);
    const url = (await loadBranding(h.service.db, W))!.logoUrl!;
    expect(url).toMatch(new RegExp(`^/t/${W}/branding/logo/[0-9a-f]{64}$`));
    const digest = url.split("/").pop()!;

    const response = await logoResponse(h.service.db, W, digest);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("content-security-policy")).toMatch(/^default-src 'none'/);
    expect(response.headers.get("cache-control")).toContain("immutable");
    expect(Buffer.from(await response.arrayBuffer())).toEqual(PNG);

    // Another workspace's issuer does not serve it; nor a made-up digest.
    expect((await logoResponse(h.service.db, OTHER, digest)).status).toBe(404);
    expect((await logoResponse(h.service.db, W, "0".repeat(64))).status).toBe(404);
    expect((await logoResponse(h.service.db, W, "../../etc")).status).toBe(404);

    // A new logo is a new address; the old one is gone.
    expect((await runOperation(h.service, admin, W, setLogo, { logo: GIF })).ok).toBe(true);
    expect((await logoResponse(h.service.db, W, digest)).status).toBe(404);
    const gifUrl = (await loadBranding(h.service.db, W))!.logoUrl!;
    expect((await logoResponse(h.service.db, W, gifUrl.split("/").pop()!)).headers.get("content-type")).toBe("image/gif");

    expect(await runOperation(h.service, admin, W, removeLogo, {})).toEqual({ ok: true, result: { removed: true } });
    expect((await loadBranding(h.service.db, W))?.logoUrl).toBeNull();
    expect((await logoResponse(h.service.db, W, gifUrl.split("/").pop()!)).status).toBe(404);
    // Upload, replace, remove: one event each; removing nothing records nothing.
    expect(await runOperation(h.service, admin, W, removeLogo, {})).toEqual({ ok: true, result: { removed: false } });
    expect(await audits()).toHaveLength(before + 3);
  });
});

describe("workspace file", () => {
  const dataUrl = (bytes: Buffer, type = "image/png") => `data:${type};base64,${bytes.toString("base64")}`;

  it("validates branding with the same rule: bad colour, contrast, theme, SVG logo, unread file, each at its path", () => {
    let error: unknown;
    try {
      validateWorkspaceDocument({
        id: "brand-file",
        name: "File",
        branding: { display_name: "x".repeat(61), primary_color: "#777777", theme: "neon", logo: { data: dataUrl(SVG, "image/svg+xml") } },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WorkspaceFileError);
    const issues = (error as WorkspaceFileError).issues;
    expect(issues.map((i) => i.path)).toEqual(["$.branding.display_name", "$.branding.logo.data", "$.branding.primary_color", "$.branding.theme"]);
    expect(issues.find((i) => i.path === "$.branding.primary_color")?.message).toMatch(/4\.47:1/);
    expect(() => validateWorkspaceDocument({ id: "brand-file", name: "F", branding: { logo: { file: "logo.png" } } })).toThrow(/\$\.branding\.logo\.file: is read by the latchkey command line/);
    expect(() => validateWorkspaceDocument({ id: "brand-file", name: "F", branding: { primary_color: "red" } })).toThrow(/\$\.branding\.primary_color/);
    expect(() => validateWorkspaceDocument({ id: "brand-file", name: "F", branding: { logo: "https://cdn.example/logo.png" } })).toThrow(/\$\.branding\.logo/);
  });

  it("imports, exports and imports again to the same state; no branding in the file means the defaults", async () => {
    const id = uniqueWorkspaceId("brand-file");
    const opts = { clock: h.clock, masterKey: h.service.config.masterKey };
    const doc = { id, name: "File Co", branding: { display_name: "File Co Accounts", primary_color: "#FACC15", theme: "light", logo: { data: dataUrl(PNG, "image/jpeg") } } };
    await importWorkspace(h.service.db, doc, opts);
    const b = await loadBranding(h.service.db, id);
    expect(b).toMatchObject({ displayName: "File Co Accounts", primaryColor: "#facc15", theme: "light", palette: { onPrimary: "#111827" } });
    // The bytes decide the type, not the data URL's label.
    expect((await h.service.db.select().from(workspaceLogos).where(eq(workspaceLogos.workspaceId, id)))[0].contentType).toBe("image/png");

    const exported = await exportWorkspace(h.service.db, id);
    expect(exported?.branding).toEqual({ display_name: "File Co Accounts", primary_color: "#facc15", theme: "light", logo: { data: dataUrl(PNG) } });
    expect((await importWorkspace(h.service.db, exported, opts)).changes).toBe(0);

    const { branding: _dropped, ...plain } = exported!;
    void _dropped;
    expect((await importWorkspace(h.service.db, plain, opts)).changes).toBe(2);
    expect(await loadBranding(h.service.db, id)).toMatchObject({ displayName: "File Co", primaryColor: "#4f46e5", theme: "auto", logoUrl: null });
    expect((await exportWorkspace(h.service.db, id))?.branding).toBeUndefined();
  });

  it("the command line reads a logo file relative to the workspace file and sends it as data", () => {
    const read = (file: string) => {
      expect(file).toBe("/home/ada/acme/assets/logo.png");
      return PNG;
    };
    const text = inlineLogoFile(JSON.stringify({ id: "inline-logo", name: "X", branding: { logo: { file: "assets/logo.png" } } }), "/home/ada/acme/workspace.json", read);
    const doc = JSON.parse(text);
    expect(doc.branding.logo.data).toMatch(/^data:[^;]+;base64,/);
    expect(validateWorkspaceDocument(doc).branding?.logo?.data).toBe(doc.branding.logo.data);
    expect(inlineLogoFile('{"id":"x"}', "/w.json", read)).toBe('{"id":"x"}');
  });
});
