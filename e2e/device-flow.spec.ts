/**
 * The device authorization grant (RFC 8628, docs/device-flow.md) end to end: the device's side with
 * real client libraries, openid-client 6 (initiateDeviceAuthorization, pollDeviceAuthorizationGrant)
 * and oauth4webapi (deviceAuthorizationRequest … processDeviceCodeResponse), and the CLI of
 * docs/recipes/device.md run verbatim from its page; the user's side in Chromium on the hosted device
 * page: the code (filled from verification_uri_complete, or typed), the sign-in, Allow or Deny. The
 * page also passes axe.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import * as oauth from "oauth4webapi";
import * as client from "openid-client";
import { ISSUER, LATCHKEY_PORT } from "./env";
import { programFiles } from "./recipe-program";
import { importWorkspacePart } from "./workspace-import";

const CLIENT_ID = "e2e-device";
const ADA = { email: "ada@example.com", password: "correct horse battery staple" };

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  await importWorkspacePart({
    applications: [{ client_id: CLIENT_ID, name: "E2E device", type: "PUBLIC", identity_scopes: ["openid", "email", "profile"], device_authorization_grant: true }],
  });
});

async function openidClientConfig() {
  return client.discovery(new URL(ISSUER), CLIENT_ID, { id_token_signed_response_alg: "ES256" }, client.None(), {
    execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
  });
}

/** The user, in a fresh browser context: opens the link, confirms the code, signs in, and allows or denies. */
async function userAnswers(page: Page, link: string, userCode: string, decision: "Allow" | "Deny", options: { axe?: boolean; typeCode?: boolean } = {}) {
  if (options.typeCode) {
    await page.goto(link);
    await page.getByLabel("Code", { exact: true }).fill(userCode.toLowerCase().replace("-", " "));
  } else {
    await page.goto(link);
    // verification_uri_complete fills the code in; nothing happens until the user continues.
    await expect(page.getByLabel("Code", { exact: true })).toHaveValue(userCode);
  }
  if (options.axe) {
    const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
    expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)).toEqual([]);
  }
  await page.getByRole("button", { name: "Continue", exact: true }).click();
  await expect(page).toHaveURL((url) => url.pathname.endsWith("/sign-in"));
  await page.getByLabel("Email", { exact: true }).fill(ADA.email);
  await page.getByLabel("Password", { exact: true }).fill(ADA.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Allow this device?" })).toBeVisible();
  await expect(page.getByText("A device asks to use E2E device as you.")).toBeVisible();
  await expect(page.getByTestId("device-scopes")).toContainText("See your email address");
  if (options.axe) {
    const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
    expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)).toEqual([]);
  }
  await page.getByRole("button", { name: decision, exact: true }).click();
  await expect(page.getByTestId("device-outcome")).toContainText("You can return to your device.");
}

test("openid-client: initiateDeviceAuthorization, the user allows in Chromium, pollDeviceAuthorizationGrant gets tokens that work", async ({ browser }) => {
  test.setTimeout(120_000);
  const config = await openidClientConfig();
  const authorization = await client.initiateDeviceAuthorization(config, { scope: "openid email profile" });
  expect(authorization.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
  expect(authorization.verification_uri).toBe(`${ISSUER}/device`);
  expect(authorization.expires_in).toBeLessThanOrEqual(600);
  const polling = client.pollDeviceAuthorizationGrant(config, authorization);
  const context = await browser.newContext();
  await userAnswers(await context.newPage(), authorization.verification_uri_complete!, authorization.user_code, "Allow", { axe: true });
  await context.close();
  const tokens = await polling;
  expect(tokens.token_type.toLowerCase()).toBe("bearer");
  const claims = tokens.claims()!;
  expect(claims.aud).toBe(CLIENT_ID);
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  expect(userinfo.email).toBe(ADA.email);
  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
  expect(refreshed.access_token).not.toBe(tokens.access_token);
});

test("openid-client: the user denies, and polling ends with access_denied", async ({ browser }) => {
  test.setTimeout(120_000);
  const config = await openidClientConfig();
  const authorization = await client.initiateDeviceAuthorization(config, { scope: "openid email" });
  const polling = client.pollDeviceAuthorizationGrant(config, authorization).then(
    () => null,
    (error: unknown) => error,
  );
  const context = await browser.newContext();
  await userAnswers(await context.newPage(), authorization.verification_uri_complete!, authorization.user_code, "Deny");
  await context.close();
  const error = await polling;
  expect(error).toBeInstanceOf(client.ResponseBodyError);
  expect((error as client.ResponseBodyError).error).toBe("access_denied");
});

test("oauth4webapi: deviceAuthorizationRequest and deviceCodeGrantRequest, the user types the code", async ({ browser }) => {
  test.setTimeout(120_000);
  const issuer = new URL(ISSUER);
  const insecure = { [oauth.allowInsecureRequests]: true };
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  const c: oauth.Client = { client_id: CLIENT_ID, id_token_signed_response_alg: "ES256" };
  const auth = oauth.None();
  const response = await oauth.processDeviceAuthorizationResponse(as, c, await oauth.deviceAuthorizationRequest(as, c, auth, new URLSearchParams({ scope: "openid email" }), insecure));
  expect(response.interval).toBe(5);

  const context = await browser.newContext();
  const user = userAnswers(await context.newPage(), response.verification_uri, response.user_code, "Allow", { typeCode: true });

  let interval = response.interval!;
  const answers: string[] = [];
  let result: oauth.TokenEndpointResponse | undefined;
  // The first poll right away (the user cannot have answered yet), then every `interval` seconds.
  for (let polls = 0, deadline = Date.now() + 90_000; !result && Date.now() < deadline; polls++) {
    if (polls > 0) await new Promise((resolve) => setTimeout(resolve, interval * 1000));
    try {
      result = await oauth.processDeviceCodeResponse(as, c, await oauth.deviceCodeGrantRequest(as, c, auth, response.device_code, insecure));
    } catch (error) {
      if (!(error instanceof oauth.ResponseBodyError)) throw error;
      answers.push(error.error);
      if (error.error === "slow_down") interval += 5;
      else if (error.error !== "authorization_pending") throw error;
    }
  }
  await user;
  await context.close();
  expect(answers).toContain("authorization_pending");
  expect(result?.access_token).toBeTruthy();
  const userinfo = await fetch(`${ISSUER}/oidc/userinfo`, { headers: { authorization: `Bearer ${result!.access_token}` } });
  expect(((await userinfo.json()) as { email: string }).email).toBe(ADA.email);
  // The device code works once.
  await expect(oauth.processDeviceCodeResponse(as, c, await oauth.deviceCodeGrantRequest(as, c, auth, response.device_code, insecure))).rejects.toMatchObject({ error: "invalid_grant" });
});

test("the CLI of docs/recipes/device.md, run verbatim from its page, signs in while the user allows in Chromium", async ({ browser }) => {
  test.setTimeout(120_000);
  const page = readFileSync(path.join(process.cwd(), "docs/recipes/device.md"), "utf8");
  const [program] = programFiles(page, "js");
  expect(program.path).toBe("device.mjs");
  // Inside this checkout, so that the program's one import resolves to this repository's openid-client.
  const dir = path.join(process.cwd(), ".test-data", `device-recipe-${LATCHKEY_PORT}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, program.path), program.text);
  const child = spawn(process.execPath, [program.path], { cwd: dir, env: { ...process.env, ISSUER, CLIENT_ID } });
  let output = "";
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const link = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /^Open (\S+)$/m.exec(output);
      if (match) resolve(match[1]);
    });
    child.on("exit", () => reject(new Error(`the CLI exited before printing the link:\n${output}`)));
  });
  const userCode = /enter the code (\S+)$/m.exec(output)?.[1] ?? new URL(link).searchParams.get("user_code")!;
  const context = await browser.newContext();
  await userAnswers(await context.newPage(), link, userCode, "Allow");
  await context.close();
  expect(await exited, output).toBe(0);
  expect(output).toContain(`Signed in as ${ADA.email}`);
});
