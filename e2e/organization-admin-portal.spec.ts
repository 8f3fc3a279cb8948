/**
 * An organization's admin portal in the browser (docs/organizations.md "The admin portal"): an
 * operator makes a setup link in the console for the customer's IT; in another browser the link
 * alone opens nothing, a code sent to its address (a real SMTP server, e2e/smtp-inbox.ts) opens the
 * portal; there the person claims a domain, turns provisioning on and issues a token; the console's
 * audit log shows those changes under their address; the used link never opens the portal again,
 * and revoking it closes the portal at once.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { CONSOLE_BASE as BASE, signInToConsole } from "./console-operator";
import { SMTP_PORT } from "./env";
import { SmtpInbox } from "./smtp-inbox";

const RUN = `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
const ORG = { slug: `portal-${RUN}`, name: `Portal ${RUN}` };
const IT = `it-${RUN}@customer.example`;
const DOMAIN = `customer-${RUN}.example`;

/** No serious or critical WCAG 2.1 A/AA violation on the page as it is now (as e2e/accessibility.spec.ts asks of the other pages). */
async function expectAccessible(page: Page, what: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const found = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical").flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")}`));
  expect.soft(found, what).toEqual([]);
}

const inbox = new SmtpInbox();
test.beforeAll(() => inbox.listen(SMTP_PORT));
test.afterAll(() => inbox.close());

test("the customer's IT opens the admin portal with a setup link and a code, sets up its organization, and loses it when the link is revoked", async ({ page, browser }) => {
  test.setTimeout(180_000);
  await signInToConsole(page);
  await page.goto(`${BASE}/console/w/e2e/organizations`);
  const create = page.getByRole("form", { name: "New organization" });
  await create.getByLabel("Slug").fill(ORG.slug);
  await create.getByLabel("Name").fill(ORG.name);
  await create.getByRole("button", { name: "Create organization" }).click();
  await expect(page.getByRole("heading", { name: new RegExp(`^${ORG.name}`), level: 1 })).toBeVisible();
  const orgPage = page.url();

  const make = page.getByRole("form", { name: "Make a setup link" });
  await make.getByLabel("For the address").fill(IT);
  await make.getByLabel("Also email the link to the address").uncheck();
  await make.getByRole("button", { name: "Make setup link" }).click();
  const link = (await make.getByTestId("new-setup-link").textContent())!;
  expect(link).toMatch(/\/t\/e2e\/organization-admin\?link=/);
  await expect(page.getByRole("table", { name: "Setup links" }).getByText(IT, { exact: true })).toBeVisible();

  const it = await (await browser.newContext()).newPage();
  await test.step("the link shows the organization and asks for a code sent to its address", async () => {
    const response = await it.goto(link);
    expect(response?.headers()["referrer-policy"]).toBe("no-referrer");
    await expect(it.getByRole("heading", { name: `Set up ${ORG.name}` })).toBeVisible();
    await expect(it.getByText(`i•••@customer.example`)).toBeVisible();
    await expect(it.getByText(IT)).toHaveCount(0);
    await expectAccessible(it, "the setup link's page");
    const since = inbox.messages.length;
    await it.getByRole("button", { name: "Send me a code" }).click();
    const mail = await inbox.waitFor(IT, { since });
    const code = /Your code is (\d{6})/.exec(mail.text)![1];
    await it.getByLabel("Code from the email").fill(code);
    await it.getByRole("button", { name: "Open the portal" }).click();
    await expect(it.getByTestId("portal-title")).toHaveText(`${ORG.name}: admin portal`);
    await expect(it.getByText(`Signed in as ${IT}`)).toBeVisible();
    await expectAccessible(it, "the admin portal");
  });

  await test.step("in the portal: a domain claimed, provisioning turned on, a token issued", async () => {
    const domains = it.getByRole("form", { name: "Add domain" });
    await domains.getByLabel("Add a domain").fill(DOMAIN);
    await domains.getByRole("button", { name: "Add domain" }).click();
    await expect(it.getByText(DOMAIN, { exact: true })).toBeVisible();
    // Only DNS verifies a domain here: an operator's "Mark verified" is not offered.
    await expect(it.getByRole("button", { name: "Check DNS" })).toBeVisible();
    await expect(it.getByRole("button", { name: "Mark verified" })).toHaveCount(0);

    const card = it.locator("#directory");
    const settings = card.getByRole("form", { name: "Directory settings" });
    await settings.getByRole("button", { name: /Turn provisioning on|Save/ }).click();
    await expect(settings.getByText("Saved.")).toBeVisible();
    const issue = card.getByRole("form", { name: "Issue token" });
    await issue.getByRole("button", { name: "Issue token" }).click();
    await expect(issue.getByTestId("new-scim-token")).toHaveText(/^lks_scim_/);
    // The portal never offers what is not the organization's IT's to change.
    await expect(it.getByRole("form", { name: "Organization settings" })).toHaveCount(0);
  });

  await test.step("the console's audit log names the person; the used link opens nothing again", async () => {
    await page.goto(`${BASE}/console/w/e2e/audit?group=organization_portal`);
    await expect(page.getByText(`${IT} claimed domain ${DOMAIN} for ${ORG.slug}`)).toBeVisible();
    await expect(page.getByText(`${IT} issued a SCIM token for ${ORG.slug}`)).toBeVisible();

    const other = await (await browser.newContext()).newPage();
    await other.goto(link);
    await expect(other.getByTestId("setup-link-unavailable")).toBeVisible();
    await other.context().close();
  });

  await test.step("revoking the link closes the portal at once", async () => {
    await page.goto(orgPage);
    const row = page.getByRole("table", { name: "Setup links" }).getByRole("row").filter({ hasText: IT });
    await expect(row.getByText("portal open", { exact: true })).toBeVisible();
    await row.getByRole("button", { name: "Revoke" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
    await expect(row.getByText("revoked", { exact: true })).toBeVisible();
    await it.reload();
    await expect(it.getByTestId("portal-closed")).toBeVisible();
    await it.context().close();
  });
});
