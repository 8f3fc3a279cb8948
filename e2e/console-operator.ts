/**
 * The console's first operator in the e2e suite, shared by the specs that only need to be in the
 * console: the setup token e2e/serve.mjs configures, and a sign-in that does the first-run setup
 * when no operator exists yet (the spec order decides which spec meets a fresh server).
 */
import { expect, type Browser, type Page } from "@playwright/test";
import { LATCHKEY_PORT, shiftServerClock } from "./env";
import type { ReceivedMail, SmtpInbox } from "./smtp-inbox";

export const CONSOLE_BASE = process.env.LATCHKEY_URL ?? `http://localhost:${LATCHKEY_PORT}`;
export const SETUP_TOKEN = process.env.CONSOLE_SETUP_TOKEN ?? "e2e-console-setup-token-0123456789abcdef";
export const FIRST_OPERATOR = { email: "owner@operators.example", name: "First Operator", password: "first operator passphrase" };

/** Signs the first operator in to the console (doing the first-run setup when no operator exists yet). */
export async function signInToConsole(page: Page): Promise<void> {
  await page.goto(`${CONSOLE_BASE}/console/setup?token=${SETUP_TOKEN}`);
  const heading = page.getByRole("heading", { level: 1 });
  if ((await heading.textContent()) === "Create the first operator") {
    await page.getByLabel("Email").fill(FIRST_OPERATOR.email);
    await page.getByLabel("Name").fill(FIRST_OPERATOR.name);
    await page.getByLabel("Password", { exact: true }).fill(FIRST_OPERATOR.password);
    await page.getByLabel("Repeat the password").fill(FIRST_OPERATOR.password);
    await page.getByRole("button", { name: "Create operator" }).click();
  } else {
    await page.goto(`${CONSOLE_BASE}/console`);
  }
  // Straight to the console, or through the system workspace's sign-in (which may pass on by itself).
  const consoleHeading = page.getByRole("heading", { name: "Workspaces", level: 1 });
  const email = page.getByLabel("Email", { exact: true });
  for (let attempt = 0; attempt < 3 && !(await consoleHeading.isVisible()); attempt++) {
    await expect(consoleHeading.or(email)).toBeVisible();
    if (await consoleHeading.isVisible()) break;
    try {
      if ((await email.inputValue({ timeout: 2_000 })) === "") await email.fill(FIRST_OPERATOR.email, { timeout: 2_000 });
      await page.getByLabel("Password", { exact: true }).fill(FIRST_OPERATOR.password, { timeout: 2_000 });
      await page.getByRole("button", { name: "Sign in", exact: true }).click({ timeout: 2_000 });
    } catch {
      // The page moved on by itself (a session from the setup): look again.
    }
    await page.waitForLoadState();
  }
  await expect(page).toHaveURL(`${CONSOLE_BASE}/console`);
}

/** The one-time code of an invitation's code message ("Your code is 123456."). */
export function invitationCodeOf(mail: ReceivedMail): string {
  const match = /Your code is (\d{6})/.exec(mail.text);
  if (!match) throw new Error(`no invitation code in "${mail.subject}"`);
  return match[1];
}

/** How far proveInvitation has moved the server's clock past resend cooldowns. */
let clockShift = 0;

/** Puts the server's clock back where the specs share it (after a spec that proved invitations). */
export async function resetServerClock(): Promise<void> {
  if (clockShift === 0) return;
  clockShift = 0;
  await shiftServerClock(0);
}

/**
 * On an invitation page not yet proven: asks for a code, reads it from the invited address's
 * mail, enters it. Returns the code message.
 */
export async function proveInvitation(invitee: Page, email: string, inbox: SmtpInbox): Promise<ReceivedMail> {
  await expect(invitee.getByRole("heading", { name: "Confirm your email address", level: 1 })).toBeVisible();
  let since = inbox.messages.length;
  await invitee.getByRole("button", { name: "Email me a code" }).click();
  const sent = invitee.getByText("A code is on its way to the invited address.");
  const wait = invitee.getByText("A code was just sent to this address.");
  await expect(sent.or(wait)).toBeVisible();
  if (await wait.isVisible()) {
    // The address had a code less than half a minute ago (the email-code factor's resend cooldown):
    // the server's clock moves past it (the spec puts it back: resetServerClock).
    clockShift += 31_000;
    await shiftServerClock(clockShift);
    since = inbox.messages.length;
    await invitee.getByRole("button", { name: "Email me a code" }).click();
    await expect(sent).toBeVisible();
  }
  const mail = await inbox.waitFor(email, { since, match: (m) => m.subject.startsWith("Your code to accept") });
  await invitee.getByLabel("Code", { exact: true }).fill(invitationCodeOf(mail));
  await invitee.getByRole("button", { name: "Confirm", exact: true }).click();
  return mail;
}

/**
 * Invites `who` to `workspace` from the operators page (as the operator signed in on `page`), reads
 * the link shown once to the inviter, and accepts it in a browser of its own as the invitee would:
 * the code sent to the address (read from `inbox`), then a new operator account with the invitee's
 * own name and password. Returns the invitee's page, signed in to the console.
 */
export async function inviteAndAccept(
  page: Page,
  browser: Browser,
  workspace: string,
  who: { email: string; password: string; name?: string },
  role: "viewer" | "admin" | "owner",
  inbox: SmtpInbox,
): Promise<Page> {
  await page.goto(`${CONSOLE_BASE}/console/w/${workspace}/operators`);
  const invite = page.getByRole("form", { name: "Invite an operator" });
  await invite.getByLabel("Email", { exact: true }).fill(who.email);
  await invite.getByLabel("Role").selectOption(role);
  await invite.getByRole("button", { name: "Send invitation" }).click();
  const link = (await invite.getByTestId("invitation-link").textContent())!.trim();
  await expect(page.getByRole("table", { name: "Pending invitations" }).getByText(who.email, { exact: true })).toBeVisible();
  const invitee = await (await browser.newContext()).newPage();
  await invitee.goto(link);
  await proveInvitation(invitee, who.email, inbox);
  await expect(invitee.getByRole("heading", { name: "Create your operator account", level: 1 })).toBeVisible();
  await invitee.getByLabel("Name").fill(who.name ?? who.email.split("@")[0]);
  await invitee.getByLabel(/^Password/).fill(who.password);
  await invitee.getByLabel("Repeat the password").fill(who.password);
  await invitee.getByRole("button", { name: "Create account and accept" }).click();
  await expect(invitee).toHaveURL(`${CONSOLE_BASE}/console/w/${workspace}`);
  return invitee;
}
