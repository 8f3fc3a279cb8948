/**
 * The hosted sign-in page's data for two everyday moments: a wrong password (the form shows the
 * typed address again, kept on the browser's transaction and never in the URL), and coming back
 * to a sign-in already finished (it says so and links to the application, instead of "expired").
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { authorizationTransactions, clients } from "../../../db/schema";
import { openAccountSignIn } from "../../../lib/oauth/pending-sign-in";
import { signInView, type SignInView } from "../../../lib/sign-in/view";
import { createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, BOB, MINIMAL, SPA, standardWorkspace, WEB } from "../../helpers/fixtures";
import { codeAt } from "../../helpers/factors/totp";
import { outcome, postPassword, postStep, startSignIn, viewOf, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";

let h: Harness;
const ws = uniqueWorkspaceId("hosted-pages");
const MINUTE = 60_000;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
  // WEB asks for a second factor, so a right password leaves the sign-in open at the next step.
  await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
  h.service.cache.clear();
});

async function pageData(s: PendingSignIn, cookieHeader: string | null = s.jar.header()): Promise<SignInView> {
  return signInView(await workspaceContext(h, ws), s.tx, cookieHeader);
}

async function storedAddress(tx: string): Promise<string | null> {
  const [row] = await h.service.db.select({ value: authorizationTransactions.enteredAddress }).from(authorizationTransactions).where(eq(authorizationTransactions.id, tx));
  return row.value;
}

describe("a wrong password keeps the typed email", () => {
  it("shows the address as typed, while the redirect carries only the transaction and the error", async () => {
    const s = await startSignIn(h, ws, SPA);
    expect((await viewOf(h, s)).enteredEmail).toBeNull();
    const typed = "Ada@Example.TEST";
    const res = await postPassword(h, s, `  ${typed} `, "not the password");
    expect(res.headers.get("location")).toBe(`/t/${ws}/sign-in?tx=${s.tx}&error=invalid_credentials`);
    expect(res.headers.get("location")!.toLowerCase()).not.toContain("example.test");
    expect((await viewOf(h, s)).enteredEmail).toBe(typed);
  });

  it("keeps an address without an account the same way (the page does not tell them apart)", async () => {
    const s = await startSignIn(h, ws, SPA);
    expect(outcome(await postPassword(h, s, "nobody@example.test", "not the password"))).toEqual({ to: "page", error: "invalid_credentials" });
    expect((await viewOf(h, s)).enteredEmail).toBe("nobody@example.test");
  });

  it("keeps the latest address, and one posted without a password; not one no account could have", async () => {
    const s = await startSignIn(h, ws, SPA);
    await postPassword(h, s, "first@example.test", "wrong");
    await postPassword(h, s, "second@example.test", "");
    expect((await viewOf(h, s)).enteredEmail).toBe("second@example.test");
    await postPassword(h, s, `${"a".repeat(320)}@example.test`, "wrong");
    expect((await viewOf(h, s)).enteredEmail).toBe("second@example.test");
  });

  it("is never shown to another browser: not with the transaction id alone, nor with its own cookie", async () => {
    const s = await startSignIn(h, ws, SPA);
    await postPassword(h, s, ADA.email, "not the password");
    expect((await pageData(s, null)).kind).toBe("expired");
    expect((await pageData(s, `lk_tx_${s.tx}=someone-elses-cookie`)).kind).toBe("expired");
    // Another browser's own sign-in of the same application starts empty.
    const other = await startSignIn(h, ws, SPA);
    expect((await viewOf(h, other)).enteredEmail).toBeNull();
    // The same browser's other transaction neither.
    const sameBrowser = await startSignIn(h, ws, SPA, s.jar);
    expect((await viewOf(h, sameBrowser)).enteredEmail).toBeNull();
  });

  it("is cleared when the password succeeds (the sign-in goes on to a second step)", async () => {
    const s = await startSignIn(h, ws, WEB);
    await postPassword(h, s, ADA.email, "not the password");
    expect(await storedAddress(s.tx)).toBe(ADA.email);
    expect(outcome(await postPassword(h, s, ADA.email, ADA.password))).toEqual({ to: "page", error: null });
    const view = await viewOf(h, s);
    expect(view.step.kind).toBe("enroll_second_factor");
    expect(view.enteredEmail).toBeNull();
    expect(await storedAddress(s.tx)).toBeNull();
  });

  it("is cleared when the sign-in completes, whatever step completes it", async () => {
    const s = await startSignIn(h, ws, WEB);
    expect(outcome(await postPassword(h, s, BOB.email, BOB.password))).toEqual({ to: "page", error: null });
    // As if an address were still kept when the last step (here the authenticator app's enrolment) completes.
    await h.service.db.update(authorizationTransactions).set({ enteredAddress: "left@example.test" }).where(eq(authorizationTransactions.id, s.tx));
    await postStep(h, s, "/sign-in/totp/enroll/start");
    const { secret } = (await viewOf(h, s)).totp.enrollment!;
    await postStep(h, s, "/sign-in/totp/enroll", { code: codeAt(h, secret) });
    expect(await storedAddress(s.tx)).toBe("left@example.test");
    expect(outcome(await postStep(h, s, "/sign-in/recovery-codes/saved")).to).toBe("callback");
    expect(await storedAddress(s.tx)).toBeNull();
  });
});

describe("back after a finished sign-in", () => {
  async function finished(client: typeof SPA | typeof MINIMAL, scope?: string): Promise<PendingSignIn> {
    const s = await startSignIn(h, ws, { ...client, scope });
    const res = await postPassword(h, s, ADA.email, ADA.password);
    expect(outcome(res).to).toBe("callback");
    return s;
  }

  it("says the sign-in was completed and links to the origin of the redirect URI it used", async () => {
    const s = await finished(SPA);
    expect(await pageData(s)).toEqual({ kind: "completed", applicationName: "Single-page app", workspaceName: `Workspace ${ws}`, returnTo: "https://app.example.test/" });
  });

  it("opens nothing: a form of the finished sign-in posted again (Back, then submit) goes to the page that says it is done; another browser's post is refused", async () => {
    const s = await finished(SPA);
    const again = await postStep(h, s, "/sign-in/password", { email: ADA.email, password: ADA.password }, { csrf: "any" });
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe(`/t/${ws}/sign-in?tx=${s.tx}`);
    expect(again.headers.getSetCookie().filter((c) => c.startsWith("lk_session="))).toEqual([]);
    expect((await pageData(s)).kind).toBe("completed");
    const stranger = await postStep(h, { ...s, jar: new Jar() }, "/sign-in/password", { email: ADA.email, password: ADA.password }, { csrf: "any" });
    expect(stranger.status).toBe(400);
    expect(stranger.headers.get("location")).toBeNull();
  });

  it("is 'expired' for another browser and once the transaction has expired", async () => {
    const s = await finished(SPA);
    expect((await pageData(s, null)).kind).toBe("expired");
    expect((await pageData(s, `lk_tx_${s.tx}=another-browser`)).kind).toBe("expired");
    h.clock.advance(10 * MINUTE - 1000);
    expect((await pageData(s)).kind).toBe("completed");
    h.clock.advance(2000);
    expect((await pageData(s)).kind).toBe("expired");
  });

  it("links only to registered addresses: the first one once the used one is removed, none when it is not a web page", async () => {
    const s = await finished(MINIMAL, "openid");
    const minimal = and(eq(clients.workspaceId, ws), eq(clients.clientId, MINIMAL.client_id));
    try {
      await h.service.db.update(clients).set({ redirectUris: ["https://moved.example.test/callback", "https://other.example.test/cb"] }).where(minimal);
      expect(await pageData(s)).toMatchObject({ kind: "completed", returnTo: "https://moved.example.test/" });
      await h.service.db.update(clients).set({ redirectUris: ["com.example.app:/callback"] }).where(minimal);
      expect(await pageData(s)).toMatchObject({ kind: "completed", applicationName: "Minimal", returnTo: null });
    } finally {
      await h.service.db.update(clients).set({ redirectUris: [MINIMAL.redirect_uri] }).where(minimal);
    }
  });

  it("goes back to the account page after a sign-in for the account-security portal", async () => {
    const ctx = await workspaceContext(h, ws);
    const [client] = await h.service.db.select({ id: clients.id }).from(clients).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, SPA.client_id)));
    const returnTo = `/t/${ws}/auth/account?client_id=${SPA.client_id}`;
    const opened = await openAccountSignIn(ctx, { clientPk: client.id, returnTo });
    const jar = new Jar().take(opened);
    const s: PendingSignIn = { workspaceId: ws, tx: new URL(opened.headers.get("location")!, PUBLIC_URL).searchParams.get("tx")!, jar, verifier: "", state: "", nonce: "", client: SPA };
    expect((await postPassword(h, s, ADA.email, ADA.password)).headers.get("location")).toBe(returnTo);
    expect(await pageData(s)).toMatchObject({ kind: "completed", returnTo });
  });

  it("a sign-in still open shows its step, not 'completed'", async () => {
    const s = await startSignIn(h, ws, SPA);
    await postPassword(h, s, ADA.email, "not the password");
    expect((await pageData(s)).kind).toBe("step");
  });
});
