/**
 * SCIM provisioning set up in the console and driven by a directory's client (docs/scim.md): an
 * administrator turns an organization's directory on with its connection and a group mapping,
 * issues a token shown once, and a SCIM client with that token provisions a user, finds them,
 * groups and deactivates them; the card lists those requests, a revoked token is refused at once.
 */
import { expect, test } from "@playwright/test";
import { CONSOLE_BASE as BASE, signInToConsole } from "./console-operator";

const RUN = `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
const EMAIL = `scim-${RUN}@acme.test`;

test("an administrator turns provisioning on and issues a token; a directory's client provisions, groups and deactivates a user", async ({ page }) => {
  await signInToConsole(page);
  await page.goto(`${BASE}/console/w/e2e/organizations`);
  await page.getByRole("link", { name: "Acme Corp" }).click();
  const card = page.locator("#directory");
  await expect(card.getByRole("heading", { name: "Directory provisioning (SCIM)" })).toBeVisible();
  const base = (await card.getByTestId("scim-base-url").textContent())!;
  expect(base).toMatch(/\/t\/e2e\/scim\/v2\/o\/acme$/);

  const settings = card.getByRole("form", { name: "Directory settings" });
  await settings.getByLabel("Users sign in through").selectOption({ label: "Acme SSO" });
  await settings.getByLabel("The connection's subject is").selectOption("userName");
  await settings.getByLabel("Groups to roles").fill(`Engineering ${RUN}: acme-member`);
  await settings.getByRole("button", { name: /Turn provisioning on|Save/ }).click();
  await expect(settings.getByText("Saved.")).toBeVisible();

  const issue = card.getByRole("form", { name: "Issue token" });
  await issue.getByRole("button", { name: "Issue token" }).click();
  const token = (await issue.getByTestId("new-scim-token").textContent())!;
  expect(token).toMatch(/^lks_scim_/);

  // The directory's side: the requests docs/scim.md shows.
  const scim = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/scim+json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: res.status === 204 ? null : await res.json() };
  };
  const created = await scim("POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: EMAIL, name: { givenName: "Scim", familyName: RUN } });
  expect(created.status).toBe(201);
  const found = await scim("GET", `/Users?filter=${encodeURIComponent(`userName eq "${EMAIL}"`)}`);
  expect(found.body.totalResults).toBe(1);
  const group = await scim("POST", "/Groups", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: `Engineering ${RUN}`, members: [{ value: created.body.id }] });
  expect(group.status).toBe(201);
  const off = await scim("PATCH", `/Users/${created.body.id}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "Replace", path: "active", value: "False" }] });
  expect(off.body.active).toBe(false);

  // The card: the requests, and the user among the organization's members no more.
  await page.reload();
  const requests = card.getByRole("table", { name: "The directory's last requests" });
  await expect(requests).toContainText("POST /Users");
  await expect(requests).toContainText("PATCH /Users/");
  await expect(requests).toContainText("201");
  await expect(card.getByRole("table", { name: "SCIM tokens" })).toContainText("works");

  // Revoked: refused at once, and shown so.
  const tokens = card.getByRole("table", { name: "SCIM tokens" });
  await tokens.getByRole("button", { name: "Revoke" }).first().click();
  await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
  await expect(tokens).toContainText("revoked");
  expect((await scim("GET", "/Users")).status).toBe(401);
});
