/**
 * docs/integration.md's code in a real browser: its `latchkey.ts` (lib/demo/latchkey.ts, the
 * guide's blocks verbatim) runs as the customer's server on http://localhost:<port>, signing in
 * with the demo workspace's `demo-web` (lib/workspaces/demo.ts, the document `npm start` imports,
 * here under an id of its own with its localhost:4000 addresses moved to that port), behind the
 * small relying party the demo application uses (lib/demo/app.ts). Chromium signs in on the real
 * hosted pages, the server exchanges the code, checks the session, refreshes, revokes and signs
 * out through hosted logout.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import { expect, test } from "@playwright/test";
import { createDemoApp } from "../lib/demo/app";
import { connect, registrationFromEnv } from "../lib/demo/latchkey";
import { DEMO_USER, DEMO_WEB_CLIENT_ID, demoWorkspace } from "../lib/workspaces/demo";
import { APP_PORT, LATCHKEY_PORT } from "./env";
import { importWorkspace, type ExportedWorkspace } from "./federation-admin";

/** The guide's application, on a port of its own beside the e2e customer app. */
const GUIDE_APP_PORT = APP_PORT + 4;
const APP_ORIGIN = `http://localhost:${GUIDE_APP_PORT}`;
const user = DEMO_USER;
const workspaceId = `demo-guide-${randomBytes(3).toString("hex")}`;
const secret = `lks_${randomBytes(24).toString("base64url")}`;
let server: http.Server;

test.beforeAll(async () => {
  // The demo workspace as the first start writes it, demo-web's localhost:4000 addresses moved to
  // this application's port; the secret set in the file (the first start prints a generated one:
  // tests/docs/integration-guide.test.ts covers that).
  const moved = JSON.parse(JSON.stringify(demoWorkspace(`http://localhost:${LATCHKEY_PORT}`)).replaceAll("http://localhost:4000", APP_ORIGIN)) as ReturnType<typeof demoWorkspace>;
  Object.assign(moved.applications.find((a) => a.client_id === DEMO_WEB_CLIENT_ID)!, { secret });
  await importWorkspace({ ...moved, id: workspaceId } as unknown as ExportedWorkspace);

  // The guide's code unchanged: only the environment it reads.
  const registration = registrationFromEnv({
    LATCHKEY_ISSUER: `http://localhost:${LATCHKEY_PORT}/t/${workspaceId}`,
    LATCHKEY_CLIENT_ID: DEMO_WEB_CLIENT_ID,
    LATCHKEY_CLIENT_SECRET: secret,
    APP_ORIGIN,
  });
  const app = createDemoApp({ origin: APP_ORIGIN, basePath: "/auth", registrations: { standard: registration }, connect });
  server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
    const body = req.method === "POST" ? Buffer.concat(chunks) : undefined;
    const response = await app(new Request(`${APP_ORIGIN}${req.url}`, { method: req.method, headers, body }));
    const out: Record<string, string | string[]> = {};
    response.headers.forEach((value, name) => {
      if (name !== "set-cookie") out[name] = value;
    });
    const cookies = response.headers.getSetCookie();
    if (cookies.length) out["set-cookie"] = cookies;
    res.writeHead(response.status, out).end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(GUIDE_APP_PORT, resolve));
});

test.afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

test("the guide's module signs in on the hosted pages, checks the session, refreshes, signs out, then revokes", async ({ page }) => {
  await page.goto(`${APP_ORIGIN}/auth`);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/t/${workspaceId}/sign-in`));
  await page.getByLabel("Email", { exact: true }).fill(user.email);
  await page.getByLabel("Password", { exact: true }).fill(user.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  // The demo workspace offers a passkey after the password.
  await page.getByRole("button", { name: "Not now" }).click();

  // Back through /auth/callback (code exchanged, ID token verified, UserInfo fetched) to the app.
  await expect(page).toHaveURL(`${APP_ORIGIN}/auth`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Signed in as Demo User");
  const check = page.locator("section", { has: page.getByRole("heading", { name: "Session check" }) });
  await expect(check).toContainText("HTTP 200, so still valid");
  await expect(page.locator("section", { has: page.getByRole("heading", { name: "ID token claims" }) }).locator("pre")).toContainText(`"aud": "${DEMO_WEB_CLIENT_ID}"`);

  await page.getByRole("button", { name: "Refresh tokens" }).click();
  await expect(page.getByText(/refresh token rotated/)).toBeVisible();
  await expect(check).toContainText("still valid");

  // Hosted logout comes back to the registered /signed-out; the hosted session is gone.
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(`${APP_ORIGIN}/signed-out`);
  await page.goto(`${APP_ORIGIN}/auth`);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByLabel("Password", { exact: true })).toBeVisible();
  await page.getByLabel("Email", { exact: true }).fill(user.email);
  await page.getByLabel("Password", { exact: true }).fill(user.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  // No passkey offer this time: this browser said "Not now" (docs/sign-in.md).
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Signed in as Demo User");

  await page.getByRole("button", { name: "Revoke" }).click();
  await expect(check).toContainText("no longer valid");
});
