/**
 * Organization invitations in the browser: an operator invites an address to an organization from
 * the console; the message reaches a real SMTP server (e2e/smtp-inbox.ts); the invitee opens the
 * link, chooses a password and accepts, then signs in to an application of the e2e workspace. A
 * withdrawn invitation's link shows the hosted error page.
 */
import { expect, test, type Page } from "@playwright/test";
import { CONSOLE_BASE as BASE, signInToConsole } from "./console-operator";
import { APP, SMTP_PORT } from "./env";
import { SmtpInbox, type ReceivedMail } from "./smtp-inbox";

const RUN = Date.now().toString(36);
const ORG = { slug: `invited-${RUN}`, name: `Invited ${RUN}` };
const INVITEE = { email: `invitee-${RUN}@example.com`, password: "the invitee's own passphrase" };
const WITHDRAWN = `withdrawn-${RUN}@example.com`;

const inbox = new SmtpInbox();
test.beforeAll(() => inbox.listen(SMTP_PORT));
test.afterAll(() => inbox.close());

function linkOf(mail: ReceivedMail): string {
  const match = /http\S+\/invitation\?token=\S+/.exec(mail.text);
  if (!match) throw new Error(`no invitation link in "${mail.subject}"`);
  return match[0];
}

async function invite(page: Page, email: string, application?: string): Promise<string> {
  const since = inbox.messages.length;
  const form = page.getByRole("form", { name: "Invite" });
  await form.getByLabel("Invite by email").fill(email);
  if (application) await form.getByLabel("Application to continue to").selectOption({ label: application });
  await form.getByRole("button", { name: "Send invitation" }).click();
  await expect(form.getByText("Invitation sent.")).toBeVisible();
  await expect(page.getByRole("table", { name: "Pending invitations" }).getByText(email, { exact: true })).toBeVisible();
  // The link is mailed to the address only: the console never shows it.
  await expect(page.getByText("/invitation?token=")).toHaveCount(0);
  const mail = await inbox.waitFor(email, { since, match: (m) => m.subject.startsWith("Invitation to join") });
  expect(mail.subject).toBe(`Invitation to join ${ORG.name} in E2E`);
  return linkOf(mail);
}

test("an operator invites from the console; the invitee accepts with their own password and signs in; a withdrawn link is refused", async ({ page, browser }) => {
  test.setTimeout(180_000);
  await signInToConsole(page);
  await page.goto(`${BASE}/console/w/e2e/organizations`);
  const create = page.getByRole("form", { name: "New organization" });
  await create.getByLabel("Slug").fill(ORG.slug);
  await create.getByLabel("Name").fill(ORG.name);
  await create.getByRole("button", { name: "Create organization" }).click();
  await expect(page.getByRole("heading", { name: new RegExp(`^${ORG.name}`), level: 1 })).toBeVisible();
  const orgPage = page.url();

  const link = await invite(page, INVITEE.email, "E2E web");

  await test.step("the invitee opens the link, chooses a password and accepts", async () => {
    const invitee = await (await browser.newContext()).newPage();
    const response = await invitee.goto(link);
    expect(response?.headers()["referrer-policy"]).toBe("no-referrer");
    await expect(invitee.getByRole("heading", { name: `Join ${ORG.name}` })).toBeVisible();
    await expect(invitee.getByText(`This invitation is for ${INVITEE.email}.`)).toBeVisible();
    await invitee.getByLabel("Password", { exact: true }).fill(INVITEE.password);
    await invitee.getByRole("button", { name: "Accept invitation" }).click();
    await expect(invitee.getByRole("heading", { name: `Welcome to ${ORG.name}` })).toBeVisible();
    await expect(invitee.getByTestId("invitation-accepted")).toHaveText(`You accepted the invitation: ${INVITEE.email} is now a member of ${ORG.name}.`);
    await expect(invitee.getByRole("link", { name: "Continue to E2E web" })).toHaveAttribute("href", `${APP}/`);

    // The link was used: opening it again shows the error page.
    await invitee.goto(link);
    await expect(invitee.getByTestId("invitation-unavailable")).toBeVisible();

    // The new account signs in to the application with the password its owner chose.
    await invitee.goto(`${APP}/start`);
    await invitee.getByLabel("Email", { exact: true }).fill(INVITEE.email);
    await invitee.getByLabel("Password", { exact: true }).fill(INVITEE.password);
    await invitee.getByRole("button", { name: "Sign in", exact: true }).click();
    await invitee.waitForURL(`${APP}/profile`);
    const claims = (JSON.parse((await invitee.getByTestId("result").textContent()) ?? "null") as { id_token: { claims: Record<string, unknown> } }).id_token.claims;
    expect(claims.email).toBe(INVITEE.email);
    await invitee.context().close();
  });

  await test.step("the console lists the member; a withdrawn invitation's link shows the error page", async () => {
    await page.goto(orgPage);
    await expect(page.getByRole("table", { name: "Members" }).getByText(INVITEE.email, { exact: true })).toBeVisible();
    const withdrawnLink = await invite(page, WITHDRAWN);
    const row = page.getByRole("table", { name: "Pending invitations" }).getByRole("row").filter({ hasText: WITHDRAWN });
    await row.getByRole("button", { name: "Withdraw" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Withdraw" }).click();
    await expect(page.getByRole("table", { name: "Pending invitations" })).toHaveCount(0);

    const stranger = await (await browser.newContext()).newPage();
    await stranger.goto(withdrawnLink);
    await expect(stranger.getByRole("heading", { name: "This invitation cannot be used" })).toBeVisible();
    await expect(stranger.getByRole("button", { name: "Accept invitation" })).toHaveCount(0);
    await stranger.context().close();
  });
});
