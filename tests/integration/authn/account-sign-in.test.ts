/**
 * A pending sign-in for the account-security portal (purpose `account`): the same steps and policy,
 * but completing it only establishes the hosted session and returns to a path under the issuer; no
 * authorization code, no grant.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { authorizationCodes, clients, grants } from "../../../db/schema";
import { openAccountSignIn } from "../../../lib/oauth/pending-sign-in";
import { createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, WEB, standardWorkspace } from "../../helpers/fixtures";
import { postPassword, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";

let h: Harness;
const ws = uniqueWorkspaceId("account-signin");

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

describe("a sign-in for the account-security portal", () => {
  it("returns to its path with the session cookie, and issues no code and creates no grant", async () => {
    const ctx = await workspaceContext(h, ws);
    const [client] = await h.service.db.select({ id: clients.id }).from(clients).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id)));
    const returnTo = `/t/${ws}/auth/account?client_id=${WEB.client_id}`;
    const res = await openAccountSignIn(ctx, { clientPk: client.id, returnTo });
    expect(res.status).toBe(303);
    const jar = new Jar().take(res);
    const tx = new URL(res.headers.get("location")!, PUBLIC_URL).searchParams.get("tx")!;
    const s: PendingSignIn = { workspaceId: ws, tx, jar, verifier: "", state: "", nonce: "", client: { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri } };

    const done = await postPassword(h, s, ADA.email, ADA.password);
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(returnTo);
    expect(done.headers.getSetCookie().some((c) => c.startsWith("lk_session="))).toBe(true);
    expect(await h.service.db.select().from(grants).where(eq(grants.workspaceId, ws))).toEqual([]);
    expect(await h.service.db.select().from(authorizationCodes).where(eq(authorizationCodes.workspaceId, ws))).toEqual([]);
  });

  it("takes only a path under the issuer as its destination", async () => {
    const ctx = await workspaceContext(h, ws);
    await expect(openAccountSignIn(ctx, { clientPk: "x", returnTo: "https://evil.example/" })).rejects.toThrow();
    await expect(openAccountSignIn(ctx, { clientPk: "x", returnTo: "//evil.example/" })).rejects.toThrow();
  });
});
