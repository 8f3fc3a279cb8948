/**
 * Operator invitations in the browser: no operator chooses another operator's credential. A
 * tenant (owner of workspace B only) who creates an account for someone else's email through B's
 * invitation cannot use it to reach workspace A, whose owner invites that email too; the tenant
 * cannot create workspaces; a signed-in operator with another email is refused; a used link is
 * refused.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { CONSOLE_BASE as BASE, inviteAndAccept, signInToConsole } from "./console-operator";

const RUN = Date.now().toString(36);
const A = `inv-a-${RUN}`;
const B = `inv-b-${RUN}`;
const MALLORY = { email: `mallory-${RUN}@tenant.example`, password: "mallory's own passphrase" };
const ALICE_EMAIL = `alice-${RUN}@victim.example`;
const M_CHOSEN = "a password mallory chose";

/** No serious or critical WCAG 2.1 A/AA violation on the page as it is now (soft: every page is reported). */
async function expectAccessible(page: Page, what: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const found = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical").flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")}`));
  expect.soft(found, what).toEqual([]);
}

async function createWorkspace(page: Page, id: string, name: string) {
  await page.goto(`${BASE}/console`);
  const form = page.getByRole("form", { name: "Create a workspace" });
  await form.getByLabel("Id").fill(id);
  await form.getByLabel("Name").fill(name);
  await form.getByRole("button", { name: "Create workspace" }).click();
  await expect(page).toHaveURL(`${BASE}/console/w/${id}`);
}

async function invite(page: Page, workspace: string, email: string, role: string): Promise<string> {
  await page.goto(`${BASE}/console/w/${workspace}/operators`);
  const form = page.getByRole("form", { name: "Invite an operator" });
  // Inviting sets no credential: there is no password to type.
  await expect(form.getByLabel(/password/i)).toHaveCount(0);
  await form.getByLabel("Email", { exact: true }).fill(email);
  await form.getByLabel("Role").selectOption(role);
  await form.getByRole("button", { name: "Send invitation" }).click();
  return (await form.getByTestId("invitation-link").textContent())!.trim();
}

/** A fresh browser signed in to the console as `email`, at `path`. */
async function consoleAs(browser: Browser, email: string, password: string, path = "/console"): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${BASE}${path}`);
  await expect(page).toHaveURL((url) => url.pathname === "/t/system/sign-in");
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  return page;
}

test("a tenant cannot take over another workspace's operators through invitations", async ({ page, browser }) => {
  test.setTimeout(180_000);
  await signInToConsole(page);
  await createWorkspace(page, A, "Victim A");
  await createWorkspace(page, B, "Tenant B");

  // M owns B only: a tenant, who sees no way to create workspaces.
  const mallory = await inviteAndAccept(page, browser, B, MALLORY, "owner");
  await mallory.goto(`${BASE}/console`);
  await expect(mallory.getByRole("form", { name: "Create a workspace" })).toHaveCount(0);
  await expect(mallory.getByText("The installation's operators create workspaces.")).toBeVisible();

  // M invites alice to B and, with the link shown to M, creates "alice" with a password M chose.
  const toB = await invite(mallory, B, ALICE_EMAIL, "viewer");
  const squatter = await (await browser.newContext()).newPage();
  await squatter.goto(toB);
  await expectAccessible(squatter, "create your operator account");
  await squatter.getByLabel("Name").fill("Alice");
  await squatter.getByLabel("Password", { exact: true }).fill(M_CHOSEN);
  await squatter.getByLabel("Repeat the password").fill(M_CHOSEN);
  await squatter.getByRole("button", { name: "Create account and accept" }).click();
  await expect(squatter).toHaveURL(`${BASE}/console/w/${B}`);
  await squatter.context().close();

  // A's owner invites alice to A: the link goes to alice (and to A's owner), never to M.
  const toA = await invite(page, A, ALICE_EMAIL, "admin");
  await expect(page.getByRole("table", { name: "Pending invitations" }).getByText(ALICE_EMAIL, { exact: true })).toBeVisible();
  await expectAccessible(page, "operators page with the one-time link and pending invitations");

  // M signs in as "alice": A does not exist for that account, and B's used link is refused.
  const asAlice = await consoleAs(browser, ALICE_EMAIL, M_CHOSEN);
  await expect(asAlice).toHaveURL(`${BASE}/console`);
  await expect(asAlice.getByRole("link", { name: "Victim A" })).toHaveCount(0);
  expect((await asAlice.goto(`${BASE}/console/w/${A}/roles`))?.status()).toBe(404);
  await asAlice.goto(toB);
  await expect(asAlice.getByRole("heading", { name: "This invitation cannot be used", level: 1 })).toBeVisible();
  await expect(asAlice.getByText("This invitation has already been accepted.")).toBeVisible();
  await expectAccessible(asAlice, "a used invitation");

  // Another operator holding A's link (here M, signed in as M) is refused: it is alice's.
  await mallory.goto(toA);
  await expect(mallory.getByRole("heading", { name: "Signed in as another operator", level: 1 })).toBeVisible();
  await expect(mallory.getByRole("button", { name: /Accept/ })).toHaveCount(0);
  await expectAccessible(mallory, "signed in as another operator");
  expect((await mallory.goto(`${BASE}/console/w/${A}`))?.status()).toBe(404);

  await asAlice.context().close();
  await mallory.context().close();
});

test("an invited operator with an account signs in and accepts; the page names only the invited workspace", async ({ page, browser }) => {
  test.setTimeout(120_000);
  await signInToConsole(page);
  const C = `inv-c-${RUN}`;
  const D = `inv-d-${RUN}`;
  await createWorkspace(page, C, "Workspace C");
  await createWorkspace(page, D, "Workspace D");
  const carol = { email: `carol-${RUN}@fresh.example`, password: "carol's own passphrase" };
  await (await inviteAndAccept(page, browser, C, carol, "admin")).context().close();

  const toD = await invite(page, D, carol.email, "viewer");
  const invitee = await (await browser.newContext()).newPage();
  await invitee.goto(toD);
  await expect(invitee.getByRole("heading", { name: "Sign in to accept", level: 1 })).toBeVisible();
  await expect(invitee.getByText("Workspace D")).toBeVisible();
  await expect(invitee.getByText("Workspace C")).toHaveCount(0);
  await expectAccessible(invitee, "sign in to accept");
  await invitee.getByRole("button", { name: `Sign in as ${carol.email}` }).click();
  await expect(invitee).toHaveURL((url) => url.pathname === "/t/system/sign-in");
  await invitee.getByLabel("Email", { exact: true }).fill(carol.email);
  await invitee.getByLabel("Password", { exact: true }).fill(carol.password);
  await invitee.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(invitee.getByRole("heading", { name: "Accept the invitation", level: 1 })).toBeVisible();
  await expectAccessible(invitee, "accept the invitation");
  await invitee.getByRole("button", { name: "Accept and open the workspace" }).click();
  await expect(invitee).toHaveURL(`${BASE}/console/w/${D}`);
  await invitee.context().close();
});
