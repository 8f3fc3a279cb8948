/**
 * The console's Hostnames page, tested on lib/console as the server actions run it (runOperation):
 * a hostname added, verified through the DNS proof's resolver seam (lib/federation/dns-proof.ts
 * `proofDns`, replaced here), served at once when verified, never verifiable by a second workspace, made primary only
 * once verified, removed (ending what it served); WebAuthn related origins switched; each change one
 * audit event as the catalogue declares it; administrators only.
 */
import { and, eq } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, grants, hostedSessions } from "../../db/schema";
import { summarizeAuditEvent } from "../../lib/audit/summary";
import { workspaceIssuers } from "../../lib/hostnames/console";
import { runOperation } from "../../lib/console/operation";
import { operations } from "../../lib/console/registry";
import { ensureSystemWorkspace } from "../../lib/console/system";
import { workspaceOverview } from "../../lib/console/workspaces";
import { proofDns } from "../../lib/federation/dns-proof";
import { systemResolveTxt } from "../../lib/federation/domains";
import { hostnameTxtRecord, listHostnames, relatedOriginsOn } from "../../lib/hostnames/hostnames";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { signInView } from "../../lib/sign-in/view";
import { auditCatalogueMismatches } from "../helpers/audit";
import { ADA, standardWorkspace, WEB } from "../helpers/fixtures";
import { authorizeQuery, basic, call, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { consoleSignIn, createConsoleHarness, createOperator } from "./console-helpers";

let h: Harness;
const W = uniqueWorkspaceId("chost");
const OTHER = uniqueWorkspaceId("chost-other");
const LOGIN = `login.${W}.test`;
const SECOND = `id.${W}.test`;
let admin: string;
let viewer: string;
let otherAdmin: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, standardWorkspace(W));
  await seed(h, standardWorkspace(OTHER));
  await ensureSystemWorkspace(h.service);
  await createOperator(h, "host-admin@operators.test", { [W]: "admin" });
  await createOperator(h, "host-viewer@operators.test", { [W]: "viewer" });
  await createOperator(h, "host-other@operators.test", { [OTHER]: "admin" });
  admin = (await consoleSignIn(h, "host-admin@operators.test")).token;
  viewer = (await consoleSignIn(h, "host-viewer@operators.test")).token;
  otherAdmin = (await consoleSignIn(h, "host-other@operators.test")).token;
});

afterEach(() => {
  proofDns.resolveTxt = systemResolveTxt;
});

type Name = keyof typeof operations;
const run = (token: string, name: Name, input: Record<string, unknown>, workspaceId = W) =>
  runOperation(h.service, token, workspaceId, operations[name] as (typeof operations)["addHostname"], input, { ip: "192.0.2.9" });

const audits = (type: string, workspaceId = W) =>
  h.service.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.workspaceId, workspaceId), eq(auditEvents.type, type)))
    .orderBy(auditEvents.createdAt);

/** The one event of `type` written since the last call, checked against the catalogue. */
async function onlyEvent(type: string, workspaceId = W) {
  const events = await audits(type, workspaceId);
  expect(events).toHaveLength(1);
  expect(auditCatalogueMismatches(events[0])).toEqual([]);
  return events[0];
}

const hostnameRow = async (hostname: string, workspaceId = W) => (await listHostnames(h.service.db, workspaceId)).find((r) => r.hostname === hostname);
const discoveryAt = (host: string, workspaceId = W) => call(h, `/t/${workspaceId}/.well-known/openid-configuration`, { headers: { host } });
const recordFound = (hostname: { hostname: string; verificationToken: string }) => {
  proofDns.resolveTxt = async (name) => (name === hostnameTxtRecord(hostname).name ? [[hostnameTxtRecord(hostname).value]] : []);
};

/** authorize → hosted password sign-in → code → tokens, every request to `host`: a hosted session and a grant there. */
async function signInAt(host: string) {
  const jar = new Jar();
  const origin = `https://${host}`;
  const { query, verifier } = authorizeQuery(WEB);
  const authorize = await call(h, `/t/${W}/oauth2/authorize?${query}`, { headers: { host } });
  expect(authorize.status).toBe(303);
  jar.take(authorize);
  const tx = new URL(authorize.headers.get("location")!, origin).searchParams.get("tx")!;
  const view = await signInView(contextFor(h.service, (await resolveWorkspace(h.service, W))!, host), tx, jar.header());
  if (view.kind !== "step") throw new Error(`the sign-in is ${view.kind}`);
  const post = await call(h, `/t/${W}/sign-in/password`, {
    form: { tx, csrf: view.csrf, email: ADA.email, password: ADA.password },
    cookie: jar.header(),
    headers: { host, origin },
  });
  expect(post.status).toBe(303);
  jar.take(post);
  const code = new URL(post.headers.get("location")!).searchParams.get("code")!;
  const token = await call(h, `/t/${W}/oauth2/token`, {
    form: { grant_type: "authorization_code", code, redirect_uri: WEB.redirect_uri, code_verifier: verifier },
    headers: { host, authorization: basic(WEB.client_id, WEB.secret) },
  });
  expect(token.status).toBe(200);
  return { jar, tokens: (await token.json()) as { access_token: string; refresh_token: string } };
}

describe("adding a hostname", () => {
  it("claims it unverified, audited once; what is not a hostname, or the default host, is refused beside the field", async () => {
    const out = await run(admin, "addHostname", { hostname: ` ${LOGIN.toUpperCase()}. ` });
    expect(out).toMatchObject({ ok: true, result: { hostname: LOGIN } });
    const row = await hostnameRow(LOGIN);
    expect(row).toMatchObject({ verifiedAt: null, primary: false });
    const event = await onlyEvent("console.workspace.hostname_added");
    expect(event).toMatchObject({ actor: expect.any(String), subject: LOGIN, ip: "192.0.2.9", data: { hostname: LOGIN, hostname_id: row!.id, operator: "host-admin@operators.test", role: "admin" } });
    expect(summarizeAuditEvent({ ...event, actorEmail: "host-admin@operators.test" })).toContain(`added hostname ${LOGIN}`);

    for (const [hostname, says] of [
      [`https://${SECOND}/`, "not a hostname"],
      [`${SECOND}:8443`, "not a hostname"],
      ["auth.example.test", "installation's own host"],
      [LOGIN, "already a hostname of this workspace"],
      ["", "Enter a hostname"],
    ]) {
      expect(await run(admin, "addHostname", { hostname })).toMatchObject({ ok: false, fieldErrors: { hostname: expect.stringContaining(says) } });
    }
    expect(await audits("console.workspace.hostname_added")).toHaveLength(1);
    // Not served while pending.
    expect((await discoveryAt(LOGIN)).status).toBe(404);
  });
});

describe("verifying a hostname by DNS", () => {
  it("record missing: the reason is shown, nothing changes, nothing is served, nothing is audited", async () => {
    const row = (await hostnameRow(LOGIN))!;
    const asked: string[] = [];
    proofDns.resolveTxt = async (name) => {
      asked.push(name);
      throw Object.assign(new Error("nxdomain"), { code: "ENOTFOUND" });
    };
    const missing = await run(admin, "verifyHostname", { hostname_id: row.id, hostname: LOGIN });
    expect(missing).toMatchObject({ ok: false, formError: expect.stringContaining(`Not found yet: no TXT record at _latchkey.${LOGIN}`) });
    expect(asked).toEqual([`_latchkey.${LOGIN}`]);
    proofDns.resolveTxt = async () => [["latchkey-hostname-verification=someone-elses-token"]];
    expect(await run(admin, "verifyHostname", { hostname_id: row.id, hostname: LOGIN })).toMatchObject({
      ok: false,
      formError: expect.stringContaining(`do not include ${hostnameTxtRecord(row).value}`),
    });
    expect((await hostnameRow(LOGIN))!.verifiedAt).toBeNull();
    expect((await discoveryAt(LOGIN)).status).toBe(404);
    expect(await audits("console.workspace.hostname_verified")).toHaveLength(0);
  });

  it("a form naming another hostname than the claim's verifies nothing", async () => {
    const row = (await hostnameRow(LOGIN))!;
    proofDns.resolveTxt = async () => [[hostnameTxtRecord(row).value]];
    expect(await run(admin, "verifyHostname", { hostname_id: row.id, hostname: `attacker.${W}.test` })).toMatchObject({ ok: false, formError: expect.stringContaining("reload") });
    expect((await hostnameRow(LOGIN))!.verifiedAt).toBeNull();
  });

  it("record present: verified by DNS, audited once, and served at once at the hostname with its own issuer", async () => {
    // The directory of this process was just read (404 above): the change must reach it without waiting.
    expect((await discoveryAt(LOGIN)).status).toBe(404);
    const row = (await hostnameRow(LOGIN))!;
    recordFound(row);
    expect(await run(admin, "verifyHostname", { hostname_id: row.id, hostname: LOGIN })).toEqual({ ok: true, result: { verified: true } });
    expect(await hostnameRow(LOGIN)).toMatchObject({ verificationMethod: "dns", verifiedAt: h.clock.now() });
    const event = await onlyEvent("console.workspace.hostname_verified");
    expect(event).toMatchObject({ subject: LOGIN, data: { hostname: LOGIN, hostname_id: row.id, method: "dns" } });
    const served = await discoveryAt(LOGIN);
    expect(served.status).toBe(200);
    expect(((await served.json()) as { issuer: string }).issuer).toBe(`https://${LOGIN}/t/${W}`);
    // Checking again changes nothing and records nothing.
    expect(await run(admin, "verifyHostname", { hostname_id: row.id, hostname: LOGIN })).toMatchObject({ ok: true });
    expect(await audits("console.workspace.hostname_verified")).toHaveLength(1);
  });

  it("another workspace can neither add nor verify a hostname verified here", async () => {
    expect(await run(otherAdmin, "addHostname", { hostname: LOGIN }, OTHER)).toMatchObject({ ok: false, fieldErrors: { hostname: expect.stringContaining("verified for another workspace") } });
    // Claimed there while still pending here, then verified here first: the other's verification is refused, even with its own record published.
    expect(await run(otherAdmin, "addHostname", { hostname: SECOND }, OTHER)).toMatchObject({ ok: true });
    expect(await run(admin, "addHostname", { hostname: SECOND })).toMatchObject({ ok: true });
    const ours = (await hostnameRow(SECOND))!;
    recordFound(ours);
    expect(await run(admin, "verifyHostname", { hostname_id: ours.id, hostname: SECOND })).toMatchObject({ ok: true });
    const theirs = (await hostnameRow(SECOND, OTHER))!;
    recordFound(theirs);
    expect(await run(otherAdmin, "verifyHostname", { hostname_id: theirs.id, hostname: SECOND }, OTHER)).toMatchObject({ ok: false, formError: expect.stringContaining("verified for another workspace") });
    expect((await hostnameRow(SECOND, OTHER))!.verifiedAt).toBeNull();
    expect(await audits("console.workspace.hostname_verified", OTHER)).toHaveLength(0);
    // Nor reach this workspace's hostname by its id.
    expect(await run(otherAdmin, "verifyHostname", { hostname_id: ours.id, hostname: SECOND }, OTHER)).toMatchObject({ ok: false, formError: expect.stringContaining("no longer claimed") });
    expect(await run(otherAdmin, "removeHostname", { hostname_id: ours.id, confirm: SECOND }, OTHER)).toMatchObject({ ok: false, formError: expect.stringContaining("no longer claimed") });
    expect((await discoveryAt(SECOND, OTHER)).status).toBe(404);
  });
});

describe("the primary hostname", () => {
  it("is refused while unverified", async () => {
    expect(await run(admin, "addHostname", { hostname: `pending.${W}.test` })).toMatchObject({ ok: true });
    const pending = (await hostnameRow(`pending.${W}.test`))!;
    expect(await run(admin, "makePrimaryHostname", { hostname_id: pending.id })).toMatchObject({ ok: false, formError: expect.stringContaining("not verified yet") });
    expect((await hostnameRow(`pending.${W}.test`))!.primary).toBe(false);
    expect(await audits("console.workspace.primary_hostname_set")).toHaveLength(0);
  });

  it("a verified one becomes the issuer the console shows, the others mentioned; the default host can be primary again; each change audited once", async () => {
    const login = (await hostnameRow(LOGIN))!;
    expect(await run(admin, "makePrimaryHostname", { hostname_id: login.id })).toEqual({ ok: true, result: { hostname: LOGIN } });
    let event = await onlyEvent("console.workspace.primary_hostname_set");
    expect(event).toMatchObject({ subject: LOGIN, data: { hostname: LOGIN, hostname_id: login.id, previous: null } });
    expect(await workspaceIssuers(h.service, W)).toEqual({ primary: `https://${LOGIN}/t/${W}`, others: [`${PUBLIC_URL}/t/${W}`, `https://${SECOND}/t/${W}`] });
    const access = { operator: {} as never, workspace: { id: W, name: W }, role: "admin" as const };
    expect(await workspaceOverview(h.service, access)).toMatchObject({ issuer: `https://${LOGIN}/t/${W}`, discovery: `https://${LOGIN}/t/${W}/.well-known/openid-configuration` });
    // Again: no change, no event.
    expect(await run(admin, "makePrimaryHostname", { hostname_id: login.id })).toMatchObject({ ok: true });
    expect(await audits("console.workspace.primary_hostname_set")).toHaveLength(1);

    await h.service.db.delete(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, "console.workspace.primary_hostname_set")));
    expect(await run(admin, "makePrimaryHostname", { hostname_id: "" })).toEqual({ ok: true, result: { hostname: null } });
    event = await onlyEvent("console.workspace.primary_hostname_set");
    expect(event).toMatchObject({ subject: null, data: { hostname: null, hostname_id: null, previous: LOGIN } });
    expect(summarizeAuditEvent({ ...event, actorEmail: null })).toContain("made the default host the workspace's primary address");
    expect((await workspaceIssuers(h.service, W)).primary).toBe(`${PUBLIC_URL}/t/${W}`);
  });
});

describe("removing a hostname", () => {
  it("needs the hostname typed; then ends the sessions there and revokes the grants made under its issuer, says how many, and stops serving it at once", async () => {
    const login = (await hostnameRow(LOGIN))!;
    await run(admin, "makePrimaryHostname", { hostname_id: login.id });
    const { jar, tokens } = await signInAt(LOGIN);
    // The session is the hostname's: at the default host the same browser has none.
    const elsewhere = await call(h, `/t/${W}/oauth2/authorize?${authorizeQuery(WEB).query}`, { cookie: jar.header() });
    expect(new URL(elsewhere.headers.get("location")!, PUBLIC_URL).pathname).toBe(`/t/${W}/sign-in`);

    expect(await run(admin, "removeHostname", { hostname_id: login.id })).toMatchObject({ ok: false, fieldErrors: { confirm: expect.stringContaining("Type the hostname") } });
    expect(await run(admin, "removeHostname", { hostname_id: login.id, confirm: SECOND })).toMatchObject({ ok: false, fieldErrors: { confirm: expect.any(String) } });
    expect(await hostnameRow(LOGIN)).toBeDefined();
    expect((await discoveryAt(LOGIN)).status).toBe(200);

    expect(await run(admin, "removeHostname", { hostname_id: login.id, confirm: LOGIN })).toEqual({ ok: true, result: { hostname: LOGIN, sessionsEnded: 1, grantsRevoked: 1 } });
    expect(await hostnameRow(LOGIN)).toBeUndefined();
    const event = await onlyEvent("console.workspace.hostname_removed");
    expect(event).toMatchObject({ subject: LOGIN, data: { hostname: LOGIN, hostname_id: login.id, was_verified: "dns", was_primary: true, sessions_ended: 1, grants_ended: 1 } });
    expect(summarizeAuditEvent({ ...event, actorEmail: null })).toContain("ended 1 session, 1 grant");

    expect((await discoveryAt(LOGIN)).status).toBe(404);
    const sessions = await h.service.db.select().from(hostedSessions).where(and(eq(hostedSessions.workspaceId, W), eq(hostedSessions.hostname, LOGIN)));
    expect(sessions.map((s) => s.endReason)).toEqual(["hostname_removed"]);
    const grantRows = await h.service.db.select().from(grants).where(and(eq(grants.workspaceId, W), eq(grants.hostname, LOGIN)));
    expect(grantRows.map((g) => g.revokeReason)).toEqual(["hostname_removed"]);
    // The primary went with it: the default host is the workspace's address again.
    expect((await workspaceIssuers(h.service, W)).primary).toBe(`${PUBLIC_URL}/t/${W}`);
    // Its tokens are dead even if the name comes back.
    expect(await run(admin, "addHostname", { hostname: LOGIN })).toMatchObject({ ok: true });
    const back = (await hostnameRow(LOGIN))!;
    recordFound(back);
    expect(await run(admin, "verifyHostname", { hostname_id: back.id, hostname: LOGIN })).toMatchObject({ ok: true });
    expect((await call(h, `/t/${W}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}`, host: LOGIN } })).status).toBe(401);
  });

  it("an unverified hostname is removed the same way, ending nothing", async () => {
    const pending = (await hostnameRow(`pending.${W}.test`))!;
    expect(await run(admin, "removeHostname", { hostname_id: pending.id, confirm: pending.hostname })).toEqual({ ok: true, result: { hostname: pending.hostname, sessionsEnded: 0, grantsRevoked: 0 } });
    const events = (await audits("console.workspace.hostname_removed")).filter((e) => e.subject === pending.hostname);
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ was_verified: null, was_primary: false, sessions_ended: 0, grants_ended: 0 });
  });
});

describe("WebAuthn related origins", () => {
  it("turns on and off, each change audited once; saving it unchanged records nothing", async () => {
    expect(await relatedOriginsOn(h.service.db, W)).toBe(false);
    expect(await run(admin, "setRelatedOrigins", { related_origins: "on" })).toEqual({ ok: true, result: { on: true } });
    expect(await relatedOriginsOn(h.service.db, W)).toBe(true);
    const on = await onlyEvent("console.workspace.related_origins_set");
    expect(on).toMatchObject({ subject: W, data: { related_origins: true } });
    expect(await run(admin, "setRelatedOrigins", { related_origins: "on" })).toMatchObject({ ok: true });
    expect(await audits("console.workspace.related_origins_set")).toHaveLength(1);
    expect(await run(admin, "setRelatedOrigins", {})).toEqual({ ok: true, result: { on: false } });
    expect(await relatedOriginsOn(h.service.db, W)).toBe(false);
    const events = await audits("console.workspace.related_origins_set");
    expect(events.map((e) => e.data.related_origins)).toEqual([true, false]);
    // Another workspace's setting is its own.
    expect(await relatedOriginsOn(h.service.db, OTHER)).toBe(false);
  });
});

describe("roles", () => {
  it("a viewer can change none of it", async () => {
    const second = (await hostnameRow(SECOND))!;
    const attempts: [Name, Record<string, unknown>][] = [
      ["addHostname", { hostname: `viewer.${W}.test` }],
      ["verifyHostname", { hostname_id: second.id, hostname: SECOND }],
      ["makePrimaryHostname", { hostname_id: second.id }],
      ["removeHostname", { hostname_id: second.id, confirm: SECOND }],
      ["setRelatedOrigins", { related_origins: "on" }],
    ];
    for (const [name, input] of attempts) await expect(run(viewer, name, input), name).rejects.toMatchObject({ code: "forbidden" });
    expect(await hostnameRow(`viewer.${W}.test`)).toBeUndefined();
    expect(await hostnameRow(SECOND)).toMatchObject({ primary: false });
    expect(await relatedOriginsOn(h.service.db, W)).toBe(false);
  });

  it("each operation needs an administrator of the workspace", () => {
    for (const name of ["addHostname", "verifyHostname", "makePrimaryHostname", "removeHostname", "setRelatedOrigins"] as const) expect([name, operations[name].role]).toEqual([name, "admin"]);
  });
});
