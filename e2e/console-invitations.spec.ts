/**
 * Operator invitations in the browser: an operator account, and every credential on it, belongs
 * only to whoever proved the mailbox. A tenant (owner of workspace B only) who invites someone
 * else's email and takes the link shown to the inviter cannot make the account: the page asks for
 * a code sent to that address, and says nothing about the account until then. The real invitee,
 * invited later by workspace A, proves her address, chooses her own password, and is the only
 * one who gets into A; she changes her password and ends her other sessions under "Your account".
 * The tenant cannot create workspaces; a signed-in operator with another email is refused; a used
 * link is refused.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { CONSOLE_BASE as BASE, inviteAndAccept, invitationCodeOf, proveInvitation, resetServerClock, signInToConsole } from "./console-operator";
import { SMTP_PORT } from "./env";
import { SmtpInbox } from "./smtp-inbox";

const RUN = Date.now().toString(36);
const A = `inv-a-${RUN}`;
const B = `inv-b-${RUN}`;
const MALLORY = { email: `mallory-${RUN}@tenant.example`, password: "mallory's own passphrase" };
const ALICE_EMAIL = `alice-${RUN}@victim.example`;
const ALICE_PASSWORD = "alice's very own passphrase";
const M_CHOSEN = "a password mallory chose";

const inbox = new SmtpInbox();
test.beforeAll(() => inbox.listen(SMTP_PORT));
test.afterAll(() => inbox.close());
test.afterAll(() => resetServerClock());

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

test("a tenant cannot squat an operator email: only the mailbox makes the account, and only its owner gets into A", async ({ page, browser }) => {
  test.setTimeout(240_000);
  await signInToConsole(page);
  await createWorkspace(page, A, "Victim A");
  await createWorkspace(page, B, "Tenant B");

  // M owns B only: a tenant, who sees no way to create workspaces.
  const mallory = await inviteAndAccept(page, browser, B, MALLORY, "owner", inbox);
  await mallory.goto(`${BASE}/console`);
  await expect(mallory.getByRole("form", { name: "Create a workspace" })).toHaveCount(0);
  await expect(mallory.getByText("The installation's operators create workspaces.")).toBeVisible();

  // M invites alice to B and opens the link the console shows M: no account can be made there.
  const toB = await invite(mallory, B, ALICE_EMAIL, "viewer");
  const squatter = await (await browser.newContext()).newPage();
  await squatter.goto(toB);
  await expect(squatter.getByRole("heading", { name: "Confirm your email address", level: 1 })).toBeVisible();
  await expect(squatter.getByLabel(/password/i)).toHaveCount(0);
  await expectAccessible(squatter, "confirm your email address");
  const unprovenText = await squatter.locator("main, body").first().innerText();
  // The code M asks for goes to alice's mailbox, never to M; a guess is refused.
  const since = inbox.messages.length;
  await squatter.getByRole("button", { name: "Email me a code" }).click();
  await expect(squatter.getByText("A code is on its way to the invited address.")).toBeVisible();
  const toAlice = await inbox.waitFor(ALICE_EMAIL, { since, match: (m) => m.subject.startsWith("Your code to accept") });
  expect(inbox.messages.slice(since).some((m) => m.to.includes(MALLORY.email.toLowerCase()))).toBe(false);
  await squatter.getByLabel("Code", { exact: true }).fill(invitationCodeOf(toAlice) === "000000" ? "000001" : "000000");
  await squatter.getByRole("button", { name: "Confirm", exact: true }).click();
  await expect(squatter.getByText("That code is not right.")).toBeVisible();
  await expect(squatter.getByRole("heading", { name: "Create your operator account", level: 1 })).toHaveCount(0);
  await squatter.context().close();
  // There is no "alice" to sign in as.
  const asM = await consoleSignInPage(browser, ALICE_EMAIL, M_CHOSEN);
  await expect(asM).toHaveURL((url) => url.pathname === "/t/system/sign-in");
  await asM.context().close();

  // A's owner invites alice to A: the link goes to alice's mailbox, never to M.
  const linksSince = inbox.messages.length;
  const toA = await invite(page, A, ALICE_EMAIL, "admin");
  await expect(page.getByRole("table", { name: "Pending invitations" }).getByText(ALICE_EMAIL, { exact: true })).toBeVisible();
  await expectAccessible(page, "operators page with the one-time link and pending invitations");
  const invitation = await inbox.waitFor(ALICE_EMAIL, { since: linksSince, match: (m) => m.subject.startsWith("Invitation to administer Victim A") });
  expect(invitation.text).toContain(toA);

  // Alice opens her link: the same page as M saw (nothing says whether an account exists), then her code.
  const alice = await (await browser.newContext()).newPage();
  await alice.goto(toA);
  const alike = (text: string, workspace: string) => text.replaceAll(workspace, "W").replace(/ as (admin|viewer)\./, " as R.").replace(/valid until [^.]+\./, "");
  expect(alike(await alice.locator("main, body").first().innerText(), "Victim A")).toBe(alike(unprovenText, "Tenant B"));
  await proveInvitation(alice, ALICE_EMAIL, inbox);
  await expect(alice.getByRole("heading", { name: "Create your operator account", level: 1 })).toBeVisible();
  await expectAccessible(alice, "create your operator account");
  await alice.getByLabel("Name").fill("Alice");
  await alice.getByLabel(/^Password/).fill(ALICE_PASSWORD);
  await alice.getByLabel("Repeat the password").fill(ALICE_PASSWORD);
  await alice.getByRole("button", { name: "Create account and accept" }).click();
  await expect(alice).toHaveURL(`${BASE}/console/w/${A}`);

  // M's password is not alice's: M gets nothing of A.
  const again = await consoleSignInPage(browser, ALICE_EMAIL, M_CHOSEN);
  await expect(again).toHaveURL((url) => url.pathname === "/t/system/sign-in");
  expect((await again.goto(`${BASE}/console/w/${A}`))?.url()).not.toBe(`${BASE}/console/w/${A}`);
  await again.context().close();
  // B's link, held by M, now shows only that it is for alice (the proof is per invitation and browser).
  await mallory.goto(toB);
  await expect(mallory.getByRole("heading", { name: "Signed in as another operator", level: 1 })).toBeVisible();

  // Alice, in a second browser, signs in with her password; from the first she changes it, which ends the second.
  const second = await consoleSignInPage(browser, ALICE_EMAIL, ALICE_PASSWORD);
  await expect(second).toHaveURL(`${BASE}/console`);
  await alice.goto(`${BASE}/console/account`);
  await expect(alice.getByRole("heading", { name: "Your account", level: 1 })).toBeVisible();
  await expect(alice.getByRole("table", { name: "Your console sessions" }).getByRole("row")).toHaveCount(3);
  await expectAccessible(alice, "your account");
  const passwordForm = alice.getByRole("form", { name: "Change your password" });
  const changedSince = inbox.messages.length;
  await passwordForm.getByLabel("Current password").fill(ALICE_PASSWORD);
  await passwordForm.getByLabel("New password", { exact: true }).fill(`${ALICE_PASSWORD} 2`);
  await passwordForm.getByLabel("Repeat the new password").fill(`${ALICE_PASSWORD} 2`);
  await passwordForm.getByRole("button", { name: "Change password" }).click();
  await expect(alice.getByText("Password saved. Every other session of your account was ended.")).toBeVisible();
  expect((await inbox.waitFor(ALICE_EMAIL, { since: changedSince, match: (m) => /password was changed/.test(m.subject) })).subject).toBe("Your Latchkey operator password was changed");
  await second.goto(`${BASE}/console/w/${A}`);
  await expect(second).toHaveURL((url) => url.pathname === "/t/system/sign-in" || url.pathname === "/console/sign-in");
  await second.context().close();
  await alice.reload();
  await expect(alice.getByRole("table", { name: "Your console sessions" }).getByRole("row")).toHaveCount(2);

  // Another operator holding A's used link is refused.
  await mallory.goto(toA);
  await expect(mallory.getByRole("heading", { name: "This invitation cannot be used", level: 1 })).toBeVisible();
  await expect(mallory.getByText("This invitation has already been accepted.")).toBeVisible();
  expect((await mallory.goto(`${BASE}/console/w/${A}`))?.status()).toBe(404);

  await alice.context().close();
  await mallory.context().close();
});

test("an invited operator with an account proves the address and accepts; the page names only the invited workspace", async ({ page, browser }) => {
  test.setTimeout(120_000);
  await signInToConsole(page);
  const C = `inv-c-${RUN}`;
  const D = `inv-d-${RUN}`;
  await createWorkspace(page, C, "Workspace C");
  await createWorkspace(page, D, "Workspace D");
  const carol = { email: `carol-${RUN}@fresh.example`, password: "carol's own passphrase" };
  await (await inviteAndAccept(page, browser, C, carol, "admin", inbox)).context().close();

  const toD = await invite(page, D, carol.email, "viewer");
  const invitee = await (await browser.newContext()).newPage();
  await invitee.goto(toD);
  await expect(invitee.getByText("Workspace D")).toBeVisible();
  await expect(invitee.getByText("Workspace C")).toHaveCount(0);
  await proveInvitation(invitee, carol.email, inbox);
  await expect(invitee.getByRole("heading", { name: "Accept the invitation", level: 1 })).toBeVisible();
  await expect(invitee.getByText("Workspace C")).toHaveCount(0);
  await expectAccessible(invitee, "accept the invitation");
  await invitee.getByRole("button", { name: "Accept and open the workspace" }).click();
  await expect(invitee).toHaveURL(`${BASE}/console/w/${D}`);
  await invitee.context().close();
});

/** A fresh browser that tries to sign in to the console as `email` with `password`. */
async function consoleSignInPage(browser: Browser, email: string, password: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${BASE}/console`);
  await expect(page).toHaveURL((url) => url.pathname === "/t/system/sign-in");
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForLoadState();
  return page;
}
