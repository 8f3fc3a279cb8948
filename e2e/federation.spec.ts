/**
 * Enterprise and social sign-in in Chromium, from the customer application (client
 * e2e-federation on its own port, e2e/customer-app.ts) through Latchkey to an upstream and back.
 *
 * - Enterprise: the organization acme of the e2e workspace has an OIDC connection to a second
 *   workspace of the same server, e2e-idp (e2e/fixtures/e2e-idp-workspace.json), and the verified
 *   domain acme.test: an acme.test address typed on the sign-in page goes there.
 * - Social: a GitHub stand-in and Contoso ID (oidc-provider as a generic OpenID Connect provider),
 *   started here on the ports the fixture names (e2e/federation-upstreams.ts).
 *
 * Upstream usernames and addresses carry this run's id, so every run starts from new identities
 * (the server may be reused between runs). The workspace is read and changed with latchkey's
 * workspace commands on the server's data store (e2e/federation-admin.ts).
 */
import { expect, test, type Page } from "@playwright/test";
import { HOSTED_ERRORS, hostedErrorText, type HostedErrorCode } from "../lib/hosted/errors";
import { startCustomerApp, type CustomerAppProcess } from "./customer-app-process";
import { CONTOSO_CLIENT, CONTOSO_ISSUER, CONTOSO_PORT, FEDERATION_APP_PORT, GITHUB_CLIENT, GITHUB_ORIGIN, GITHUB_PORT, IDP_ISSUER, ISSUER } from "./env";
import { exportWorkspace, importWorkspace, type ExportedWorkspace } from "./federation-admin";
import { startContoso, startGithubStandin, type Upstream } from "./federation-upstreams";

const APP = `http://localhost:${FEDERATION_APP_PORT}`;
const CALLBACK = `${ISSUER}/federation/callback`;
const RUN = `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;

/** The enterprise user, at the identity provider (e2e-idp's fixture). */
const BOB = { email: "bob@acme.test", password: "bob signs in at his company", name: "Bob Acme" };
/** A local user of the e2e workspace (fixture) whose address an upstream will assert. */
const LIN = { email: "link@example.com", password: "this account was mine first" };

const CONTOSO_ACCOUNTS = {
  olivia: { sub: `olivia-${RUN}`, email: `olivia-${RUN}@example.net`, email_verified: true, name: "Olivia Contoso" },
  // Claims the local user's address, verified: a takeover if it were linked on the email alone.
  lin: { sub: `lin-${RUN}`, email: LIN.email, email_verified: true, name: "Lin Upstream" },
};
const GITHUB_USERS = {
  grace: { id: 7_000_000 + Math.floor(Math.random() * 1_000_000), login: `grace-${RUN}`, name: "Grace Hopper", emails: [{ email: `grace-${RUN}@example.org`, primary: true, verified: true }] },
  hal: { id: 8_000_000 + Math.floor(Math.random() * 1_000_000), login: `hal-${RUN}`, name: "Hal Standin", emails: [{ email: `hal-${RUN}@example.org`, primary: true, verified: true }] },
};

interface Result {
  id_token: { claims: Record<string, unknown> };
  userinfo: Record<string, unknown>;
  session_check: Record<string, unknown>;
}

let app: CustomerAppProcess | undefined;
let contoso: Upstream | undefined;
let github: Upstream | undefined;

const startGithub = () =>
  startGithubStandin({ port: GITHUB_PORT, clientId: GITHUB_CLIENT.id, clientSecret: GITHUB_CLIENT.secret, redirectUri: CALLBACK, users: Object.values(GITHUB_USERS) });

test.beforeAll(async () => {
  [app, contoso, github] = await Promise.all([
    startCustomerApp({ port: FEDERATION_APP_PORT, clientId: "e2e-federation", clientSecret: "e2e-federation-secret-0123456789abcdef0123456789" }),
    startContoso({ port: CONTOSO_PORT, clientId: CONTOSO_CLIENT.id, clientSecret: CONTOSO_CLIENT.secret, redirectUri: CALLBACK, accounts: Object.values(CONTOSO_ACCOUNTS) }),
    startGithub(),
  ]);
});

test.afterAll(async () => {
  await Promise.all([app?.stop(), contoso?.close(), github?.close()]);
});

/** Main-frame URLs the page visits, including every hop of a redirect chain. */
function recordNavigations(page: Page): string[] {
  const urls: string[] = [];
  page.on("request", (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) urls.push(request.url());
  });
  return urls;
}

/** The statuses of main-frame responses from URLs starting with `prefix`, in order. */
function recordStatuses(page: Page, prefix: string): number[] {
  const statuses: number[] = [];
  page.on("response", (response) => {
    if (response.request().isNavigationRequest() && response.url().startsWith(prefix)) statuses.push(response.status());
  });
  return statuses;
}

async function readResult(page: Page): Promise<Result> {
  await page.waitForURL(`${APP}/profile`);
  return JSON.parse((await page.getByTestId("result").textContent()) ?? "null") as Result;
}

/** The customer app's "sign in": its /start, which lands on the workspace's sign-in page. */
async function openSignIn(page: Page): Promise<void> {
  await page.goto(`${APP}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
}

async function submitPassword(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** On an upstream's own sign-in page (Contoso ID or the GitHub stand-in). */
async function upstreamSignIn(page: Page, origin: string, username: string): Promise<void> {
  await expect(page).toHaveURL((url) => url.origin === origin);
  await page.getByLabel("Username").fill(username);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** The hosted error page of `code`, with the catalogue's title, message and status. */
async function expectHostedError(page: Page, statuses: number[], code: HostedErrorCode): Promise<void> {
  const entry = { status: HOSTED_ERRORS[code].status, ...(hostedErrorText as (c: HostedErrorCode) => { title: string; message: string })(code) };
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(entry.title);
  if (!/\{\w+\}/.test(entry.message)) await expect(page.getByText(entry.message)).toBeVisible();
  expect(page.url().startsWith(CALLBACK), page.url()).toBe(true);
  expect(statuses.at(-1)).toBe(entry.status);
}

/** No hosted session was left behind: the next sign-in asks for a method again. */
async function expectSignedOut(page: Page): Promise<void> {
  await openSignIn(page);
  await expect(page.getByLabel("Password", { exact: true })).toBeVisible();
}

const userEmails = (doc: ExportedWorkspace) => doc.users.map((u) => u.email.toLowerCase());

test("enterprise: a verified-domain address signs in at the organization's identity provider; disabling the connection ends the session", async ({ page }) => {
  // It runs the latchkey command four times (export, three imports): on PostgreSQL each is a process of its own.
  test.setTimeout(180_000);
  await openSignIn(page);
  // Home-realm discovery: the domain decides, the password typed here is never checked.
  await submitPassword(page, BOB.email, "not bob's password at all");
  await expect(page).toHaveURL((url) => url.href.startsWith(`${IDP_ISSUER}/sign-in`));
  await submitPassword(page, BOB.email, BOB.password);

  const result = await readResult(page);
  const { claims } = result.id_token;
  expect(claims.iss).toBe(ISSUER);
  expect(claims.email).toBe(BOB.email);
  expect(claims.name).toBe(BOB.name);
  expect(claims.organization_id).toEqual(expect.any(String));
  expect(claims.connection_id).toEqual(expect.any(String));
  expect(result.userinfo).toMatchObject({ sub: claims.sub, email: BOB.email, organization_id: claims.organization_id, connection_id: claims.connection_id });
  expect(result.session_check).toMatchObject({ active: true, sub: claims.sub, client_id: "e2e-federation" });

  // Just in time: a member of acme with the connection's default role.
  const before = await exportWorkspace("e2e");
  const acme = before.organizations.find((o) => o.slug === "acme")!;
  expect(acme.members).toContain(BOB.email);
  expect(before.users.find((u) => u.email === BOB.email)?.roles).toContainEqual({ role: "acme-member", organization: "acme" });

  // Importing the workspace as it is changes nothing: the session stays active.
  await importWorkspace(before);
  await page.goto(`${APP}/profile`);
  expect((await readResult(page)).session_check).toMatchObject({ active: true, sub: claims.sub });

  // The administrator disables the connection (the same file, only that flag changed): the
  // customer app's online session check now answers inactive.
  const connection = acme.connections.find((c) => c.name === "Acme SSO")!;
  connection.enabled = false;
  await importWorkspace(before);
  try {
    await page.goto(`${APP}/profile`);
    await expect(page.getByRole("heading", { name: "Session ended" })).toBeVisible();
  } finally {
    connection.enabled = true;
    await importWorkspace(before);
  }
});

test("enterprise: 'Sign in with single sign-on' takes the work email alone to the organization's identity provider", async ({ page }) => {
  await openSignIn(page);
  await page.getByText("Sign in with single sign-on (SSO)").click();
  await page.getByLabel("Work email", { exact: true }).fill(BOB.email);
  await page.getByRole("button", { name: "Continue with single sign-on" }).click();
  await expect(page).toHaveURL((url) => url.href.startsWith(`${IDP_ISSUER}/sign-in`));

  // An address in no verified domain stays here, with the form's error.
  await openSignIn(page);
  await page.getByText("Sign in with single sign-on (SSO)").click();
  await page.getByLabel("Work email", { exact: true }).fill("someone@example.com");
  await page.getByRole("button", { name: "Continue with single sign-on" }).click();
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
  await expect(page.getByRole("alert").filter({ hasText: hostedErrorText("sso_not_configured").message })).toBeVisible();
});

test("social: the GitHub stand-in creates the account and signs it in; the buttons follow the workspace's order", async ({ page }) => {
  await openSignIn(page);
  await expect(page.getByRole("button", { name: /^Continue with / })).toHaveText(["Continue with GitHub", "Continue with Contoso ID"]);
  await page.getByRole("button", { name: "Continue with GitHub" }).click();
  await upstreamSignIn(page, GITHUB_ORIGIN, GITHUB_USERS.grace.login);

  const { id_token, userinfo, session_check } = await readResult(page);
  const email = GITHUB_USERS.grace.emails[0]!.email;
  expect(id_token.claims).toMatchObject({ iss: ISSUER, email, email_verified: true, name: "Grace Hopper" });
  expect(id_token.claims.organization_id).toBeUndefined();
  expect(id_token.claims.connection_id).toBeUndefined();
  expect(userinfo).toMatchObject({ sub: id_token.claims.sub, email, email_verified: true });
  expect(session_check).toMatchObject({ active: true, sub: id_token.claims.sub });
});

test("social: Contoso ID, a generic OpenID Connect provider, creates the account and signs it in", async ({ page }) => {
  const account = CONTOSO_ACCOUNTS.olivia;
  await openSignIn(page);
  await page.getByRole("button", { name: "Continue with Contoso ID" }).click();
  await upstreamSignIn(page, CONTOSO_ISSUER, account.sub);

  const { id_token, userinfo, session_check } = await readResult(page);
  expect(id_token.claims).toMatchObject({ iss: ISSUER, email: account.email, email_verified: true, name: account.name });
  expect(userinfo).toMatchObject({ sub: id_token.claims.sub, email: account.email });
  expect(session_check).toMatchObject({ active: true, sub: id_token.claims.sub });
});

test("takeover: an upstream asserting a local user's address gets no session until the account is proved; then the identity is linked", async ({ page, browser }) => {
  const navigations = recordNavigations(page);
  const notice = page.getByRole("status").filter({ hasText: `An account with ${LIN.email} already exists` });
  await openSignIn(page);
  await page.getByRole("button", { name: "Continue with Contoso ID" }).click();
  await upstreamSignIn(page, CONTOSO_ISSUER, CONTOSO_ACCOUNTS.lin.sub);

  // Back on the sign-in page with the link notice: no code, no session for the application.
  await expect(notice).toBeVisible();
  expect(page.url().startsWith(`${ISSUER}/sign-in`), page.url()).toBe(true);
  expect(navigations.filter((u) => u.startsWith(`${APP}/callback`))).toEqual([]);

  await notice.getByRole("button", { name: "Cancel and sign in another way" }).click();
  await expect(notice).toHaveCount(0);
  await expect(page.getByLabel("Password", { exact: true })).toBeVisible();
  expect(navigations.filter((u) => u.startsWith(`${APP}/callback`))).toEqual([]);

  // Again through the upstream (its session is still there), and this time prove the account.
  await page.getByRole("button", { name: "Continue with Contoso ID" }).click();
  await expect(notice).toBeVisible();
  await expect(page.getByLabel("Email", { exact: true })).toHaveValue(LIN.email);
  await submitPassword(page, LIN.email, LIN.password);
  const proved = await readResult(page);
  expect(proved.id_token.claims).toMatchObject({ email: LIN.email, name: "Lin Kim" });
  expect(proved.session_check.active).toBe(true);

  // Another browser: the upstream sign-in alone now goes straight to the same account.
  const other = await browser.newContext();
  try {
    const second = await other.newPage();
    const hops = recordNavigations(second);
    await openSignIn(second);
    await second.getByRole("button", { name: "Continue with Contoso ID" }).click();
    await upstreamSignIn(second, CONTOSO_ISSUER, CONTOSO_ACCOUNTS.lin.sub);
    const linked = await readResult(second);
    expect(linked.id_token.claims.sub).toBe(proved.id_token.claims.sub);
    expect(linked.session_check.active).toBe(true);
    // No sign-in page after the upstream: the callback went on to the application.
    expect(hops.filter((u) => new URL(u).pathname === new URL(`${ISSUER}/sign-in`).pathname)).toHaveLength(1);
  } finally {
    await other.close();
  }
});

test("upstream failures end on the hosted error page and create nothing", async ({ page }) => {
  const navigations = recordNavigations(page);
  const statuses = recordStatuses(page, CALLBACK);

  // The user cancels at Contoso ID: it answers access_denied.
  await openSignIn(page);
  await page.getByRole("button", { name: "Continue with Contoso ID" }).click();
  await expect(page).toHaveURL((url) => url.origin === CONTOSO_ISSUER);
  await page.getByRole("button", { name: "Cancel" }).click();
  await expectHostedError(page, statuses, "federation_denied");
  await expectSignedOut(page);

  // The GitHub stand-in stops between the user's approval and the token exchange.
  await page.getByRole("button", { name: "Continue with GitHub" }).click();
  await expect(page).toHaveURL((url) => url.origin === GITHUB_ORIGIN);
  await page.route(`${GITHUB_ORIGIN}/login/oauth/authorize`, async (route) => {
    if (route.request().method() !== "POST") return route.continue();
    const approved = await route.fetch({ maxRedirects: 0 });
    await github?.close();
    await route.fulfill({ response: approved });
  });
  try {
    await upstreamSignIn(page, GITHUB_ORIGIN, GITHUB_USERS.hal.login);
    await expectHostedError(page, statuses, "federation_unavailable");
  } finally {
    await page.unroute(`${GITHUB_ORIGIN}/login/oauth/authorize`);
    github = await startGithub();
  }
  await expectSignedOut(page);

  expect(navigations.filter((u) => u.startsWith(`${APP}/callback`))).toEqual([]);
  expect(userEmails(await exportWorkspace("e2e"))).not.toContain(GITHUB_USERS.hal.emails[0]!.email);
});
