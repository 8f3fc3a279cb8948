/**
 * Everyday console administration, end to end: creating a confidential application lands on its
 * page with the client id, the once-shown secret and a snippet for its kind; the new-application
 * form adapts to the kind; an application is disabled, renamed and deleted behind a typed
 * confirmation; a role is deleted; the workspace is renamed on its Settings page.
 *
 * It signs in as the first operator (doing the first-run setup when no operator exists yet, like
 * e2e/console.spec.ts), and works in a workspace of its own.
 */
import { expect, test, type Page } from "@playwright/test";
import { LATCHKEY_PORT } from "./env";

const BASE = process.env.LATCHKEY_URL ?? `http://localhost:${LATCHKEY_PORT}`;
const SETUP_TOKEN = process.env.CONSOLE_SETUP_TOKEN ?? "e2e-console-setup-token-0123456789abcdef";
const FIRST = { email: "owner@operators.example", name: "First Operator", password: "first operator passphrase" };
const RUN = Date.now().toString(36);
const WS = `admin-${RUN}`;

async function signInAsFirstOperator(page: Page): Promise<void> {
  await page.goto(`${BASE}/console/setup?token=${SETUP_TOKEN}`);
  const heading = page.getByRole("heading", { level: 1 });
  if ((await heading.textContent()) === "Create the first operator") {
    await page.getByLabel("Email").fill(FIRST.email);
    await page.getByLabel("Name").fill(FIRST.name);
    await page.getByLabel("Password", { exact: true }).fill(FIRST.password);
    await page.getByLabel("Repeat the password").fill(FIRST.password);
    await page.getByRole("button", { name: "Create operator" }).click();
    // Setup signs the operator in: straight to the console, no second email and password.
    await expect(page).toHaveURL(`${BASE}/console`);
    return;
  }
  await page.goto(`${BASE}/console`);
  await expect(page).toHaveURL((url) => url.pathname === "/t/system/sign-in");
  await page.getByLabel("Email", { exact: true }).fill(FIRST.email);
  await page.getByLabel("Password", { exact: true }).fill(FIRST.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page).toHaveURL(`${BASE}/console`);
}

/** Does HTTP Basic with this secret authenticate the client? (Introspection answers 401 when not.) */
async function introspectStatus(clientId: string, secret: string): Promise<number> {
  const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64");
  const response = await fetch(`${BASE}/t/${WS}/oauth2/introspect`, {
    method: "POST",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
    body: "token=not-a-token",
  });
  return response.status;
}

test("console administration: create → application page, kind-adaptive form, disable, rename, delete, roles, workspace settings", async ({ page }) => {
  test.setTimeout(180_000);
  await signInAsFirstOperator(page);

  await test.step("a workspace of this run", async () => {
    const form = page.getByRole("form", { name: "Create a workspace" });
    await form.getByLabel("Id").fill(WS);
    await form.getByLabel("Name").fill("Admin run");
    await form.getByRole("button", { name: "Create workspace" }).click();
    await expect(page).toHaveURL(`${BASE}/console/w/${WS}`);
  });

  let secret = "";
  await test.step("the new-application form adapts to the kind", async () => {
    await page.goto(`${BASE}/console/w/${WS}/applications/new`);
    const form = page.getByRole("form", { name: "New application" });
    await form.getByLabel("Kind").selectOption("spa");
    await expect(form.getByLabel("Secret lifetime (days)")).toBeHidden();
    await expect(form.getByLabel(/^Redirect URIs/)).toBeVisible();
    await expect(form.getByLabel(/^Allowed browser origins/)).toBeVisible();
    await form.getByLabel("Kind").selectOption("m2m");
    await expect(form.getByLabel(/^Redirect URIs/)).toBeHidden();
    await expect(form.getByText("Identity scopes")).toBeHidden();
    await expect(form.getByLabel("Secret lifetime (days)")).toBeVisible();
    await form.getByLabel("Kind").selectOption("web_confidential");
    await expect(form.getByLabel(/^Redirect URIs/)).toBeVisible();
    await expect(form.getByLabel(/^Allowed browser origins/)).toBeHidden();
    await expect(form.getByLabel("Secret lifetime (days)")).toBeVisible();

    // Redirect URIs are required for an interactive kind: the server says so beside the field.
    await form.getByLabel("Name").fill("Billing portal");
    await form.getByLabel("Client id").fill("billing-web");
    await form.getByRole("button", { name: "Create application" }).click();
    await expect(form.getByText("Enter at least one redirect URI")).toBeVisible();
    // The kind chosen is kept with the error, and the form still shows its fields.
    await expect(form.getByLabel("Kind")).toHaveValue("web_confidential");
    await expect(form.getByLabel(/^Redirect URIs/)).toBeVisible();
  });

  await test.step("creating lands on the application's page: client id and secret side by side, issuer, discovery and a snippet", async () => {
    const form = page.getByRole("form", { name: "New application" });
    await form.getByLabel(/^Redirect URIs/).fill("https://billing.example.com/callback");
    await form.getByRole("button", { name: "Create application" }).click();
    await expect(page).toHaveURL(`${BASE}/console/w/${WS}/applications/billing-web`);
    const connect = page.locator("#connect");
    await expect(connect.getByTestId("client-id")).toHaveText("billing-web");
    secret = (await connect.getByTestId("new-secret").textContent())!.trim();
    expect(secret).toMatch(/^lks_/);
    expect(await introspectStatus("billing-web", secret)).toBe(200);
    await expect(connect.getByText(`${BASE}/t/${WS}`, { exact: true })).toBeVisible();
    await expect(connect.getByText(`${BASE}/t/${WS}/.well-known/openid-configuration`, { exact: true })).toBeVisible();
    const snippet = connect.getByTestId("connect-snippet");
    await expect(snippet).toContainText('import * as client from "openid-client"');
    await expect(snippet).toContainText('"billing-web"');
    await expect(snippet).toContainText("client.allowInsecureRequests");
    // Shown once: a reload does not show it again.
    await page.reload();
    await expect(page.getByText(secret)).toHaveCount(0);
    await expect(page.locator("#connect").getByTestId("client-id")).toHaveText("billing-web");

    // The list names the kind.
    await page.goto(`${BASE}/console/w/${WS}/applications`);
    const row = page.getByRole("row", { name: /Billing portal/ });
    await expect(row).toContainText("Web app (confidential)");
  });

  await test.step("a machine-to-machine application's page shows the client-credentials curl", async () => {
    await page.goto(`${BASE}/console/w/${WS}/applications/new`);
    const form = page.getByRole("form", { name: "New application" });
    await form.getByLabel("Kind").selectOption("m2m");
    await form.getByLabel("Name").fill("Nightly job");
    await form.getByLabel("Client id").fill("nightly-job");
    await form.getByRole("button", { name: "Create application" }).click();
    await expect(page).toHaveURL(`${BASE}/console/w/${WS}/applications/nightly-job`);
    await expect(page.getByTestId("connect-snippet")).toContainText("grant_type=client_credentials");
    await expect(page.getByTestId("new-secret")).toBeVisible();
    await page.goto(`${BASE}/console/w/${WS}/applications`);
    await expect(page.getByRole("row", { name: /Nightly job/ })).toContainText("Machine to machine");
  });

  await test.step("rename and disable an application", async () => {
    await page.goto(`${BASE}/console/w/${WS}/applications/billing-web?tab=settings`);
    const settings = page.getByRole("form", { name: "Application settings" });
    // The settings say what the new-application form said: redirect URIs are required (at least one), not "(optional)".
    await expect(settings.getByLabel("Redirect URIs", { exact: true })).toBeVisible();
    await expect(settings.getByText("At least one. One per line")).toBeVisible();
    await expect(settings.getByLabel(/^Post-logout redirect URIs\s*\(optional\)/)).toBeVisible();
    await settings.getByLabel("Name").fill("Billing");
    await settings.getByRole("button", { name: "Save settings" }).click();
    await expect(settings.getByText("Saved.")).toBeVisible();
    await expect(page.getByRole("heading", { level: 1 })).toContainText("Billing");

    await page.getByRole("navigation", { name: "Application sections" }).getByRole("link", { name: "Danger zone" }).click();
    await expect(page).toHaveURL(`${BASE}/console/w/${WS}/applications/billing-web?tab=danger-zone`);
    await page.getByRole("button", { name: "Disable application" }).click();
    const dialog = page.getByRole("dialog");
    await expect(dialog).toContainText("Nothing is deleted");
    await dialog.getByRole("button", { name: "Disable" }).click();
    await expect(page.getByText("This application is disabled")).toBeVisible();
    await page.getByRole("button", { name: "Enable application" }).click();
    await expect(page.getByText("This application is disabled")).toHaveCount(0);
  });

  await test.step("delete an application behind its typed confirmation", async () => {
    await page.getByText("Delete application…").click();
    const confirm = page.getByRole("form", { name: "Delete Billing for good?" });
    await expect(confirm).toContainText("refresh fails");
    await confirm.getByLabel("Type the client id to confirm").fill("billing");
    await confirm.getByRole("button", { name: "Delete application" }).click();
    await expect(confirm.getByText("Type the client id exactly to confirm")).toBeVisible();
    expect(await introspectStatus("billing-web", secret)).toBe(200);

    await confirm.getByLabel("Type the client id to confirm").fill("billing-web");
    await confirm.getByRole("button", { name: "Delete application" }).click();
    await expect(page).toHaveURL(`${BASE}/console/w/${WS}/applications`);
    await expect(page.getByRole("row", { name: /Billing/ })).toHaveCount(0);
    expect(await introspectStatus("billing-web", secret)).toBe(401);
  });

  await test.step("rename and delete a role", async () => {
    await page.goto(`${BASE}/console/w/${WS}/roles`);
    const create = page.getByRole("form", { name: "New role" });
    await create.getByLabel("Name").fill("auditor");
    await create.getByRole("button", { name: /Create role/ }).click();
    await expect(page.getByRole("heading", { name: "auditor", level: 1 })).toBeVisible();
    const settings = page.getByRole("form", { name: "Role name and description" });
    await settings.getByLabel("Name").fill("reviewer");
    await settings.getByRole("button", { name: "Save" }).click();
    await expect(settings.getByText("Saved.")).toBeVisible();
    await expect(page.getByRole("heading", { name: "reviewer", level: 1 })).toBeVisible();

    await page.getByText("Delete role…").click();
    const confirm = page.getByRole("form", { name: "Delete the role reviewer?" });
    await expect(confirm).toContainText("permission check denies");
    await confirm.getByLabel("Type the role's name to confirm").fill("reviewer");
    await confirm.getByRole("button", { name: "Delete role" }).click();
    await expect(page).toHaveURL(`${BASE}/console/w/${WS}/roles`);
    await expect(page.getByRole("link", { name: "reviewer" })).toHaveCount(0);
  });

  await test.step("rename the workspace on its Settings page; deleting it needs the typed id", async () => {
    await page.goto(`${BASE}/console/w/${WS}/settings`);
    const name = page.getByRole("form", { name: "Workspace name" });
    await name.getByLabel("Name").fill("Admin run (renamed)");
    await name.getByRole("button", { name: "Save name" }).click();
    await expect(name.getByText("Saved.")).toBeVisible();
    await page.goto(`${BASE}/console`);
    await expect(page.getByText("Admin run (renamed)")).toBeVisible();

    await page.goto(`${BASE}/console/w/${WS}/settings`);
    await page.getByText("Delete workspace…").click();
    const confirm = page.getByRole("form", { name: /^Delete Admin run \(renamed\) and everything in it\?/ });
    await expect(confirm).toContainText("stops answering");
    await confirm.getByLabel("Type the workspace id to confirm").fill("admin");
    await confirm.getByRole("button", { name: "Delete workspace" }).click();
    await expect(confirm.getByText("Type the workspace id exactly to confirm")).toBeVisible();
    await confirm.getByLabel("Type the workspace id to confirm").fill(WS);
    await confirm.getByRole("button", { name: "Delete workspace" }).click();
    await expect(page).toHaveURL(`${BASE}/console`);
    await expect(page.getByText("Admin run (renamed)")).toHaveCount(0);
    // Its issuer stops answering (within the server's few-second workspace cache).
    await expect.poll(async () => (await fetch(`${BASE}/t/${WS}/.well-known/openid-configuration`)).status, { timeout: 15_000 }).toBe(404);
  });
});
