/**
 * The console's forms through the real server (the compiled server and the production build, as
 * `npm start` runs them), posted as a browser without JavaScript posts them: the page's form with
 * its hidden `$ACTION_*` fields, multipart, no `Next-Action`. Every such post, and the same with
 * `Next-Action`, from a foreign, sibling, other-port or other-scheme Origin, with `Origin: null`
 * alone or with neither Origin nor Sec-Fetch-Site, answers 403 and writes nothing (the setup
 * stays open, no workspace, no role); the same form from the console's own page runs, also with
 * the `Origin: null` and `Sec-Fetch-Site: same-origin` a browser sends under
 * `Referrer-Policy: no-referrer` (Next alone answers that with a 500). Needs the production build
 * like the other tests that start the real server.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDatabase, dropDatabase, freshDatabaseName } from "../setup/database";
import { freePort, listening, runRealServer, startRealServer, type RealServer } from "../helpers/real-server";
import { hiddenFields } from "../helpers/instances";
import { Jar } from "../helpers/harness";

const databaseUrl = inject("databaseUrl");
const SETUP_TOKEN = "console-forms-setup-token-0123456789abcdef";
const OPERATOR = { email: "owner@forms.example", name: "Forms Owner", password: "forms owner passphrase" };

describe.runIf(runRealServer)("console forms without JavaScript, through the real server", () => {
  const dbName = freshDatabaseName("latchkey_console_forms");
  let ownDatabase: string | undefined;
  let dataDir: string | undefined;
  let server: RealServer;
  let site = "";
  const jar = new Jar();

  beforeAll(async () => {
    const port = await freePort();
    site = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = { PORT: String(port), PUBLIC_URL: site, CONSOLE_SETUP_TOKEN: SETUP_TOKEN, RATE_LIMIT_PER_MINUTE: "100000" };
    if (databaseUrl) Object.assign(env, { DATABASE_URL: (ownDatabase = await createDatabase(databaseUrl, dbName)), MASTER_KEY: randomBytes(32).toString("hex") });
    else env.DATA_DIR = dataDir = mkdtempSync(path.join(tmpdir(), "latchkey-console-forms-"));
    server = startRealServer(env);
    await listening(server);
  }, 180_000);

  afterAll(async () => {
    if (server?.child.exitCode === null) {
      server.child.kill("SIGTERM");
      await server.exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (ownDatabase) await dropDatabase(databaseUrl!, dbName);
  });

  /** A GET as the browser makes it (with the jar's cookies), following redirects; the last answer. */
  async function browse(target: string): Promise<Response> {
    let url = new URL(target, site);
    for (let hop = 0; hop < 10; hop++) {
      const response = await fetch(url, { redirect: "manual", headers: { cookie: jar.header() } });
      jar.take(response);
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || !location) return response;
      await response.body?.cancel();
      url = new URL(location, url);
    }
    throw new Error(`too many redirects from ${target}`);
  }

  /** The hidden fields of the form labelled `label` on the console page at `pagePath`. */
  async function formOn(pagePath: string, label: string): Promise<Record<string, string>> {
    const page = await browse(pagePath);
    expect([pagePath, page.status]).toEqual([pagePath, 200]);
    return hiddenFields(await page.text(), label);
  }

  /** The server action a form's hidden fields name (`$ACTION_ID_<id>`, or the id in a bound action's `$ACTION_<n>:0`). */
  function actionId(fields: Record<string, string>): string {
    for (const [name, value] of Object.entries(fields)) {
      if (name.startsWith("$ACTION_ID_")) return name.slice("$ACTION_ID_".length);
      if (/^\$ACTION_\d+:0$/.test(name)) return (JSON.parse(value) as { id: string }).id;
    }
    throw new Error(`no server action among ${Object.keys(fields).join(", ")}`);
  }

  /** Posts a form to `pagePath` as multipart, with `headers` saying where it came from; `nextAction` adds the header Next's client sends. */
  async function post(pagePath: string, fields: Record<string, string>, headers: Record<string, string>, nextAction = false): Promise<Response> {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    const response = await fetch(new URL(pagePath, site), {
      method: "POST",
      redirect: "manual",
      body: form,
      headers: { cookie: jar.header(), ...(nextAction ? { "next-action": actionId(fields) } : {}), ...headers },
    });
    jar.take(response);
    return response;
  }

  /** Every way a post that is not from the console's own page can say where it came from. */
  const foreign = (): Record<string, string>[] => {
    const { hostname, port } = new URL(site);
    return [
      { origin: "https://evil.example" },
      { origin: "https://evil.example", "sec-fetch-site": "same-origin" },
      { origin: `http://sibling.${hostname}.nip.io:${port}`, "sec-fetch-site": "same-site" },
      { origin: `http://${hostname}:${Number(port) + 1}`, "sec-fetch-site": "same-site" },
      { origin: `https://${hostname}:${port}` },
      { origin: "null" },
      { origin: "null", "sec-fetch-site": "cross-site" },
      {},
      { "sec-fetch-site": "cross-site" },
      { origin: "not a url" },
    ];
  };

  /** Posts the form every foreign way, in both encodings: each answers 403 before Next. */
  async function refusedEveryWay(pagePath: string, fields: Record<string, string>): Promise<void> {
    for (const headers of foreign()) {
      for (const nextAction of [false, true]) {
        const response = await post(pagePath, fields, headers, nextAction);
        expect([pagePath, headers, nextAction, response.status]).toEqual([pagePath, headers, nextAction, 403]);
        expect(await response.text()).toContain("Forbidden");
      }
    }
  }

  it("the setup, a workspace and a role: refused from anywhere else, written from the console's own pages", async () => {
    // The console's pages name our own origin to our own forms; hosted pages keep no-referrer.
    const setupPage = `/console/setup?token=${SETUP_TOKEN}`;
    expect((await browse(setupPage)).headers.get("referrer-policy")).toBe("same-origin");
    expect((await browse("/t/system/.well-known/openid-configuration")).headers.get("referrer-policy")).toBe("no-referrer");

    const setup = { ...(await formOn(setupPage, "Create the first operator")), email: OPERATOR.email, name: OPERATOR.name, password: OPERATOR.password, password_confirm: OPERATOR.password };
    expect(Object.keys(setup).some((name) => name.startsWith("$ACTION_"))).toBe(true);
    await refusedEveryWay(setupPage, setup);
    // Nothing was written: the setup is still open.
    expect(await formOn(setupPage, "Create the first operator")).toBeTruthy();

    // What Chromium sends for the form under no-referrer: Origin null, Sec-Fetch-Site same-origin. The setup runs.
    const created = await post(setupPage, setup, { origin: "null", "sec-fetch-site": "same-origin" });
    expect(created.status).toBe(303);
    expect(new URL(created.headers.get("location")!, site).pathname).toBe("/console/setup/continue");
    // Without JavaScript the next page is a link on to the console's sign-in, which finds the setup's hosted session.
    const next = await (await browse(created.headers.get("location")!)).text();
    const link = /<a href="([^"]+)"[^>]*>Continue to the console<\/a>/.exec(next)?.[1];
    expect(link).toBeTruthy();
    const home = await browse(link!.replaceAll("&amp;", "&"));
    expect([home.status, new URL(home.url).pathname]).toEqual([200, "/console"]);
    expect(jar.get("lk_console")).toBeTruthy();

    const ws = `forms-${randomBytes(3).toString("hex")}`;
    const workspace = { ...(await formOn("/console", "Create a workspace")), id: ws, name: "Forms" };
    await refusedEveryWay("/console", workspace);
    expect((await browse(`/console/w/${ws}`)).status).toBe(404);

    // What Chromium sends under the console's same-origin policy: its own Origin.
    const made = await post("/console", workspace, { origin: site, "sec-fetch-site": "same-origin" });
    expect([made.status, new URL(made.headers.get("location") ?? "", site).pathname]).toEqual([303, `/console/w/${ws}`]);

    const rolesPage = `/console/w/${ws}/roles`;
    const role = { ...(await formOn(rolesPage, "New role")), name: "forms-reader", description: "" };
    await refusedEveryWay(rolesPage, role);
    const roles = await (await browse(rolesPage)).text();
    expect([roles.includes("No roles yet"), roles.includes("forms-reader")]).toEqual([true, false]);

    const added = await post(rolesPage, role, { origin: "null", "sec-fetch-site": "same-origin" });
    expect(added.status).toBe(303);
    expect(new URL(added.headers.get("location")!, site).pathname).toMatch(new RegExp(`^/console/w/${ws}/roles/.+`));
    expect((await (await browse(rolesPage)).text()).includes("forms-reader")).toBe(true);
    expect(server.output()).not.toContain("Invalid Server Actions request");
  }, 120_000);
});
