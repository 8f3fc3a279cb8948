/**
 * Bot protection end to end (lib/authn/bot-challenge): the e2e workspace set to `adaptive` with the
 * command line; below the thresholds the sign-in page asks nothing; past the client address's (ten
 * failed passwords from this browser's network) the page shows the proof of work, the browser
 * solves it by itself and the sign-in goes through. Turned off again afterwards, so the other
 * specs, from the same address, are not asked.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { APP, ISSUER } from "./env";
import { importWorkspacePart } from "./workspace-import";

const ADA = { email: "ada@example.com", password: "correct horse battery staple" };

test.afterAll(async () => {
  await importWorkspacePart({});
});

test("past the threshold, the sign-in page asks a proof of work that the browser solves by itself", async ({ page }) => {
  test.setTimeout(120_000);
  // The workspace's settings only: a file that lists no application leaves them as they are.
  await importWorkspacePart({ bot_challenge: "adaptive" });
  await page.goto(`${APP}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
  await expect(page.getByRole("status")).toHaveCount(0);

  // Ten failed passwords from this network (the threshold per client address).
  for (let i = 0; i < 10; i++) {
    await page.getByLabel("Email", { exact: true }).fill(`nobody-${i}@example.com`);
    await page.getByLabel("Password", { exact: true }).fill("not a password of anyone");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page.getByText("The email or password is incorrect.")).toBeVisible();
  }

  // A new sign-in from the same network: the page works on the proof as it loads, and says so in a live region.
  await page.goto(`${APP}/start`);
  await expect(page.getByRole("status")).toHaveText(/Done: you can continue|Checking that you are a person/);
  const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)).toEqual([]);
  await expect(page.getByRole("status")).toHaveText("Done: you can continue.");
  await page.getByLabel("Email", { exact: true }).fill(ADA.email);
  await page.getByLabel("Password", { exact: true }).fill(ADA.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`${APP}/profile`);
});
