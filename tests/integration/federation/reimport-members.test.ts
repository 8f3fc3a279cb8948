/**
 * An administrator keeps the workspace in a file and re-imports it with `latchkey workspace import`.
 * A user who joined the organization by their first sign-in through its connection is not in the
 * file: the import keeps the membership and says so, the user's session still stands and their
 * next sign-in works. Only `--prune-members` removes it (after `--dry-run` shows what it would
 * remove): then the session ends and the connection refuses the user, as for any removal.
 */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizationMembers } from "../../../db/schema";
import { runCommand } from "../../../lib/cli/commands";
import { ACME, API, authzWorkspace, WEB } from "../../helpers/fixtures";
import { basic, call, createHarness, exchangeCode, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { outcome, postPassword, startSignIn } from "../../helpers/factors/sign-in";
import { startOidcProviderUpstream, type OidcProviderUpstream } from "../../helpers/federation/oidc-provider-upstream";
import { callbackUrlOf, deliverCallback, expectHostedError, organizationIdOf, seedWithSecrets, upstreamLocation, userByEmail } from "../../helpers/federation/setup";

let h: Harness;
const ws = uniqueWorkspaceId("fedreimp");
let upstream: OidcProviderUpstream;
let acme: string;
let file: ReturnType<typeof authzWorkspace>;
let env: Record<string, string>;

const JIT = { sub: "jit-upstream", email: "jit@acme.test" };

beforeAll(async () => {
  h = await createHarness();
  upstream = await startOidcProviderUpstream({ redirectUris: [callbackUrlOf(ws)], now: () => h.clock.now(), accounts: [{ ...JIT, email_verified: true }] });
  file = authzWorkspace(ws);
  file.organizations[0] = {
    ...file.organizations[0],
    domains: [{ domain: "acme.test", verified: true }],
    connections: [{ name: "Acme Workspace", issuer: upstream.issuer, client_id: upstream.clientId, client_secret: { env: "ACME_UPSTREAM_SECRET" }, default_roles: ["reader"] }],
  };
  env = { ACME_UPSTREAM_SECRET: upstream.clientSecret };
  await seedWithSecrets(h, file, env);
  acme = await organizationIdOf(h, ws, ACME);
});

afterAll(async () => {
  await upstream?.close();
});

async function signInThroughConnection(): Promise<Response> {
  const s = await startSignIn(h, ws, { ...WEB, scope: "openid email", resource: API });
  const url = upstreamLocation(await postPassword(h, s, JIT.email, "not checked here"), ws);
  const res = await deliverCallback(h, s, (await upstream.authorize(url, { account: JIT.sub })).url);
  // A refusal is the hosted error page itself.
  if (res.status !== 303) return res;
  const o = outcome(res);
  if (o.to !== "callback") return res;
  const exchanged = await exchangeCode(h, ws, { code: o.code, redirect_uri: WEB.redirect_uri, verifier: s.verifier, authorization: basic(WEB.client_id, WEB.secret) });
  expect(exchanged.status).toBe(200);
  return exchanged;
}

async function importFile(...flags: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await runCommand(h.service.db, h.service.config, h.clock, { argv: ["workspace", "import", `${ws}.json`, ...flags], stdin: JSON.stringify(file), env }, {
    out: (t) => (out += t),
    err: (t) => (err += t),
  });
  return { code, out, err };
}

const sessionCheck = async (accessToken: string) => (await call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${accessToken}` } })).status;

async function jitMembership() {
  const user = (await userByEmail(h, ws, JIT.email))!;
  return h.service.db.select().from(organizationMembers).where(and(eq(organizationMembers.workspaceId, ws), eq(organizationMembers.organizationId, acme), eq(organizationMembers.userId, user.id)));
}

describe("re-importing the workspace file with a member who joined by signing in", () => {
  let accessToken: string;

  it("keeps the membership and says so; the session check still answers 200 and the next sign-in works", async () => {
    const first = await signInThroughConnection();
    accessToken = (await first.json()).access_token;
    expect(await sessionCheck(accessToken)).toBe(200);
    expect((await jitMembership()).map((m) => m.origin)).toEqual(["sign_in"]);

    const imported = await importFile();
    expect(imported).toEqual({
      code: 0,
      out: `Workspace "${ws}" already up to date.\nKept 1 member the file does not list (not added by an import; --prune-members removes them):\n  acme: ${JIT.email} (joined by signing in)\n`,
      err: "",
    });
    expect(await jitMembership()).toHaveLength(1);
    expect(await sessionCheck(accessToken)).toBe(200);
    const next = await signInThroughConnection();
    expect(next.status).toBe(200);
  });

  it("--dry-run --prune-members says what it would remove and removes nothing", async () => {
    const dry = await importFile("--dry-run", "--prune-members");
    expect(dry.code).toBe(0);
    expect(dry.out).toBe(`Dry run, nothing was written: workspace "${ws}" would be updated (1 row).\nWould remove 1 member the file does not list:\n  acme: ${JIT.email} (joined by signing in)\n`);
    expect(await jitMembership()).toHaveLength(1);
    expect(await sessionCheck(accessToken)).toBe(200);
  });

  it("--prune-members removes it and says so: the session ends and the connection then refuses the user", async () => {
    const pruned = await importFile("--prune-members");
    expect(pruned.code).toBe(0);
    expect(pruned.out).toBe(`Workspace "${ws}" updated (1 row changed).\nRemoved 1 member the file does not list:\n  acme: ${JIT.email} (joined by signing in)\n`);
    expect(await jitMembership()).toEqual([]);
    expect(await sessionCheck(accessToken)).toBe(401);
    await expectHostedError(await signInThroughConnection(), "federation_not_member");
  });

  it("refuses a value for a switch, and the switches on another command", async () => {
    expect((await importFile("--prune-members=yes")).code).toBe(2);
    let err = "";
    const code = await runCommand(h.service.db, h.service.config, h.clock, { argv: ["workspace", "export", ws, "--dry-run"] }, { out: () => {}, err: (t) => (err += t) });
    expect({ code, err }).toEqual({ code: 2, err: "--dry-run does not apply to this command\n" });
  });
});
