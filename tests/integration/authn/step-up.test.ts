/**
 * The policy decides per application whether a live hosted session may be reused
 * (lib/oauth/authorize.ts + lib/authn/policy.ts): a session that does not meet the application's
 * policy is stepped up through the sign-in (only what is missing is asked for), never reused as
 * if it did; and a half-finished sign-in leaves no session behind (lib/sign-in/flow.ts).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { authorizationTransactions, clients, hostedSessions } from "../../../db/schema";
import { contextFor, resolveWorkspace } from "../../../lib/server/router";
import { signInView } from "../../../lib/sign-in/view";
import { authorizeQuery, call, createHarness, Jar, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, SPA, WEB, standardWorkspace } from "../../helpers/fixtures";

let h: Harness;
const ws = uniqueWorkspaceId("stepup");

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
  // The confidential web application requires MFA; the SPA keeps the workspace default (off).
  await h.service.db.update(clients).set({ authPolicy: { mfa: "required" } }).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
  h.service.cache.clear();
});

async function authorize(client: { client_id: string; redirect_uri: string }, jar: Jar) {
  const { query } = authorizeQuery(client);
  const res = await call(h, `/t/${ws}/oauth2/authorize?${query}`, { cookie: jar.header() });
  expect(res.status).toBe(303);
  jar.take(res);
  return new URL(res.headers.get("location")!, "http://localhost");
}

describe("a live session and an application's policy", () => {
  it("reuses a password session for an application without MFA, and steps it up for one that requires MFA", async () => {
    const { jar } = await signIn(h, ws, { ...SPA, ...ADA });
    const sessionsBefore = await h.service.db.select({ id: hostedSessions.id }).from(hostedSessions).where(eq(hostedSessions.workspaceId, ws));

    // Same policy: the session is reused (straight back to the client with a code).
    const again = await authorize(SPA, jar);
    expect(again.origin + again.pathname).toBe(SPA.redirect_uri);
    expect(again.searchParams.get("code")).toBeTruthy();

    // MFA required: no code; the sign-in opens at the step that is missing, for the session's user.
    const stepUp = await authorize(WEB, jar);
    expect(stepUp.pathname).toBe(`/t/${ws}/sign-in`);
    const txId = stepUp.searchParams.get("tx")!;
    const [tx] = await h.service.db.select().from(authorizationTransactions).where(eq(authorizationTransactions.id, txId));
    expect(tx.sessionId).toBe(sessionsBefore[0].id);
    const view = await signInView(contextFor(h.service, (await resolveWorkspace(h.service, ws))!), txId, jar.header());
    expect(view.kind).toBe("step");
    if (view.kind !== "step") return;
    // Ada has no second factor: she must enrol one; the password is not asked again.
    expect(view.step).toEqual({ kind: "enroll_second_factor", options: ["totp", "security_key", "passkey"] });
    expect(view.userEmail).toBe(ADA.email);
  });

  it("creates no session when the first factor is proved but MFA is still missing", async () => {
    const { query } = authorizeQuery(WEB);
    const jar = new Jar();
    const res = await call(h, `/t/${ws}/oauth2/authorize?${query}`, { cookie: jar.header() });
    jar.take(res);
    const txId = new URL(res.headers.get("location")!, "http://localhost").searchParams.get("tx")!;
    const view = await signInView(contextFor(h.service, (await resolveWorkspace(h.service, ws))!), txId, jar.header());
    if (view.kind !== "step") throw new Error("expired");
    const before = (await h.service.db.select({ id: hostedSessions.id }).from(hostedSessions).where(eq(hostedSessions.workspaceId, ws))).length;
    const post = await call(h, `/t/${ws}/sign-in/password`, {
      form: { tx: txId, csrf: view.csrf, email: ADA.email, password: ADA.password },
      cookie: jar.header(),
      headers: { origin: PUBLIC_URL },
    });
    expect(post.status).toBe(303);
    // Back to the sign-in page for the second factor; no session cookie, no session row.
    expect(new URL(post.headers.get("location")!, "http://localhost").pathname).toBe(`/t/${ws}/sign-in`);
    expect(post.headers.getSetCookie().some((c) => c.startsWith("lk_session="))).toBe(false);
    const after = (await h.service.db.select({ id: hostedSessions.id }).from(hostedSessions).where(eq(hostedSessions.workspaceId, ws))).length;
    expect(after).toBe(before);
    const [tx] = await h.service.db.select().from(authorizationTransactions).where(eq(authorizationTransactions.id, txId));
    expect(tx.completedAt).toBeNull();
    expect(tx.evidence.map((e) => e.method)).toEqual(["password"]);
  });
});
