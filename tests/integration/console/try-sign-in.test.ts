/**
 * Trying an application's sign-in from the console (lib/getting-started): an admin opens the
 * application's hosted sign-in; completing it issues nothing to the application and ends on the
 * console page, which shows the ID token's claims only to the browser that started it, only for that
 * application, only while the transaction lives. And the overview's checklist ticks each step from
 * what the workspace holds.
 */
import { and, count, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { authorizationCodes, authorizationTransactions, clients, grants } from "../../../db/schema";
import { ensureSystemWorkspace } from "../../../lib/console/system";
import { gettingStarted } from "../../../lib/getting-started/checklist";
import { triedSignIn, TRY_COOKIE_PREFIX } from "../../../lib/getting-started/try-sign-in";
import { TRANSACTION_TTL_MS } from "../../../lib/oauth/pending-sign-in";
import { signInView } from "../../../lib/sign-in/view";
import { contextFor, resolveWorkspace } from "../../../lib/server/router";
import { ADA, M2M, standardWorkspace, WEB } from "../../helpers/fixtures";
import { call, exchangeCode, Jar, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { auditRows } from "../../helpers/lifecycle";
import { adminAndViewer, createConsoleHarness, runRegistered } from "../console-helpers";

let h: Harness;
const ws = uniqueWorkspaceId("try-sign-in");
let admin: string;
let viewer: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, standardWorkspace(ws));
  await ensureSystemWorkspace(h.service);
  ({ admin, viewer } = await adminAndViewer(h, ws, "try.test"));
});

interface Started {
  location: URL;
  txId: string;
  binding: string;
  jar: Jar;
}

async function start(token: string, clientId: string): Promise<Started> {
  const out = await runRegistered(h, token, ws, "trySignIn", { client_id: clientId });
  if (!out.ok) throw new Error(`trySignIn refused: ${out.formError ?? JSON.stringify(out.fieldErrors)}`);
  const result = out.result as { location: string; cookies: { name: string; value: string; path: string }[] };
  const location = new URL(result.location);
  const txId = location.searchParams.get("tx")!;
  const hosted = result.cookies.find((c) => c.path === `/t/${ws}`)!;
  const own = result.cookies.find((c) => c.path === "/console")!;
  expect(own.name).toBe(`${TRY_COOKIE_PREFIX}${txId}`);
  expect(own.value).toBe(hosted.value);
  const jar = new Jar();
  jar.take(new Response(null, { headers: [["set-cookie", `${hosted.name}=${hosted.value}; Path=${hosted.path}`]] }));
  return { location, txId, binding: own.value, jar };
}

/** The hosted password step, as the browser posts it; returns where it sends the browser. */
async function signInWithPassword(started: Started, password = ADA.password): Promise<Response> {
  const workspace = (await resolveWorkspace(h.service, ws))!;
  const view = await signInView(contextFor(h.service, workspace), started.txId, started.jar.header());
  if (view.kind !== "step") throw new Error(`sign-in view: ${view.kind}`);
  const post = await call(h, `/t/${ws}/sign-in/password`, {
    form: { tx: started.txId, csrf: view.csrf, email: ADA.email, password },
    cookie: started.jar.header(),
    headers: { origin: PUBLIC_URL },
  });
  started.jar.take(post);
  return post;
}

const workspace = () => ({ id: ws, name: `Workspace ${ws}` });
const codesOf = async (clientId: string) => {
  const [client] = await h.service.db.select({ id: clients.id }).from(clients).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, clientId)));
  const [row] = await h.service.db.select({ n: count() }).from(authorizationCodes).where(eq(authorizationCodes.clientPk, client.id));
  return Number(row.n);
};

describe("trying an application's sign-in from the console", () => {
  it("opens the application's hosted sign-in and ends on the console page, issuing nothing to the application", async () => {
    const started = await start(admin, WEB.client_id);
    expect(started.location.pathname).toBe(`/t/${ws}/sign-in`);
    // Before the user signs in, there is nothing to show.
    expect(await triedSignIn(h.service, workspace(), WEB.client_id, started.txId, started.binding)).toBeNull();

    const post = await signInWithPassword(started);
    expect(post.status).toBe(303);
    expect(post.headers.get("location")).toBe(`${PUBLIC_URL}/console/w/${ws}/applications/${WEB.client_id}/try?tx=${started.txId}`);
    expect(await codesOf(WEB.client_id)).toBe(0);

    const outcome = await triedSignIn(h.service, workspace(), WEB.client_id, started.txId, started.binding);
    expect(outcome).not.toBeNull();
    expect(outcome!.email).toBe(ADA.email);
    expect(outcome!.claims).toMatchObject({ iss: `${PUBLIC_URL}/t/${ws}`, aud: WEB.client_id, email: ADA.email, email_verified: true, name: ADA.name, amr: ["pwd"] });
    expect(typeof outcome!.claims.sub).toBe("string");

    // The same claims as the application's own sign-in would give (the same subject for the same client).
    const real = await signIn(h, ws, { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri, email: ADA.email, password: ADA.password, scope: "openid email profile" });
    const exchanged = await exchangeCode(h, ws, { code: real.callback.searchParams.get("code")!, redirect_uri: WEB.redirect_uri, verifier: real.verifier, authorization: `Basic ${btoa(`${WEB.client_id}:${WEB.secret}`)}` });
    const { id_token } = (await exchanged.json()) as { id_token: string };
    const payload = JSON.parse(Buffer.from(id_token.split(".")[1], "base64url").toString());
    expect(outcome!.claims.sub).toBe(payload.sub);

    const tried = (await auditRows(h, ws, "sign_in.succeeded")).filter((e) => (e.data as { tried?: boolean }).tried === true);
    expect(tried).toHaveLength(1);
    expect(await auditRows(h, ws, "console.application.sign_in_tried")).not.toHaveLength(0);
  });

  it("shows the outcome only to the browser that started it, for that application, while the transaction lives", async () => {
    const started = await start(admin, WEB.client_id);
    expect((await signInWithPassword(started)).status).toBe(303);
    expect(await triedSignIn(h.service, workspace(), WEB.client_id, started.txId, "another-browsers-binding")).toBeNull();
    expect(await triedSignIn(h.service, workspace(), WEB.client_id, started.txId, undefined)).toBeNull();
    expect(await triedSignIn(h.service, workspace(), "spa", started.txId, started.binding)).toBeNull();
    expect(await triedSignIn(h.service, { id: "another-workspace", name: "x" }, WEB.client_id, started.txId, started.binding)).toBeNull();
    expect(await triedSignIn(h.service, workspace(), WEB.client_id, started.txId, started.binding)).not.toBeNull();
    h.clock.advance(TRANSACTION_TTL_MS + 1000);
    try {
      expect(await triedSignIn(h.service, workspace(), WEB.client_id, started.txId, started.binding)).toBeNull();
    } finally {
      h.clock.advance(-(TRANSACTION_TTL_MS + 1000));
    }
  });

  it("an application's own sign-in transaction is never read as a tried one", async () => {
    const real = await signIn(h, ws, { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri, email: ADA.email, password: ADA.password });
    expect(real.callback.searchParams.get("code")).toBeTruthy();
    // The application's own (completed) sign-in, with the binding its browser holds.
    const own = await h.service.db.select().from(authorizationTransactions).where(and(eq(authorizationTransactions.workspaceId, ws), eq(authorizationTransactions.purpose, "authorize")));
    expect(own.length).toBeGreaterThan(0);
    const cookies = real.jar.header() ?? "";
    for (const tx of own) {
      const binding = new RegExp(`lk_tx_${tx.id}=([^;]+)`).exec(cookies)?.[1] ?? "any";
      expect(await triedSignIn(h.service, workspace(), WEB.client_id, tx.id, binding)).toBeNull();
    }
  });

  it("is refused to viewers, for machine-to-machine and disabled applications", async () => {
    const asViewer = await runRegistered(h, viewer, ws, "trySignIn", { client_id: WEB.client_id }).catch((error: Error) => error);
    expect(asViewer instanceof Error || (asViewer as { ok: boolean }).ok === false).toBe(true);
    const m2m = await runRegistered(h, admin, ws, "trySignIn", { client_id: M2M.client_id });
    expect(m2m).toMatchObject({ ok: false, formError: expect.stringMatching(/machine-to-machine/) });
    await runRegistered(h, admin, ws, "setApplicationActive", { client_id: "minimal", active: "false" });
    const disabled = await runRegistered(h, admin, ws, "trySignIn", { client_id: "minimal" });
    expect(disabled).toMatchObject({ ok: false, formError: expect.stringMatching(/disabled/) });
    const missing = await runRegistered(h, admin, ws, "trySignIn", { client_id: "no-such-app" });
    expect(missing).toMatchObject({ ok: false });
  });
});

describe("the overview's getting-started checklist", () => {
  it("ticks each step from what the workspace holds", async () => {
    const fresh = uniqueWorkspaceId("try-empty");
    await seed(h, { id: fresh, name: "Empty", applications: [], users: [] } as never);
    const empty = await gettingStarted(h.service, fresh);
    expect(empty).toMatchObject({ steps: { application: false, connected: false, signed_in: false, audited: false }, application: null, done: false });

    // The seeded workspace: applications, and the sign-ins and code exchanges of the tests above.
    const used = await gettingStarted(h.service, ws);
    expect(used.steps).toEqual({ application: true, connected: true, signed_in: true, audited: true });
    expect(used.done).toBe(true);
    // It points at an application that signs users in, not at the machine-to-machine one.
    expect(used.application?.signsUsersIn).toBe(true);
    const [grant] = await h.service.db.select({ n: count() }).from(grants).where(eq(grants.workspaceId, ws));
    expect(Number(grant.n)).toBeGreaterThan(0);
  });
});
