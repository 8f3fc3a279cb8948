/**
 * The domain signals (lib/signals) as their producers emit them, for any observer: a token
 * response signals its grant, workspace and client; a refresh token's reuse signals what a
 * security alert needs (the workspace, the client, the family ended, the user, where the reused
 * token came from); and an observer that throws never breaks the answer.
 */
import { and, eq } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { refreshTokens } from "../../db/schema";
import { sha256Hex } from "../../lib/crypto";
import { CLIENT_ADDRESS_HEADER } from "../../lib/http/client-address";
import { observe, type Signals } from "../../lib/signals";
import { ADA, SPA, standardWorkspace } from "../helpers/fixtures";
import { call, createHarness, exchangeCode, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { userIdOf } from "../helpers/factors/sign-in";

let h: Harness;
const ws = uniqueWorkspaceId("signals");
const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** What `name` signals for this file's workspace from now on. */
function watch<N extends "token_issued" | "refresh_reuse_detected">(name: N): Signals[N][] {
  const seen: Signals[N][] = [];
  stops.push(observe(name, ((payload: Signals[N]) => payload.workspaceId === ws && seen.push(payload)) as never));
  return seen;
}

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

async function codeTokens() {
  const r = await signIn(h, ws, { ...SPA, ...ADA });
  const res = await exchangeCode(h, ws, { code: r.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: r.verifier, client_id: SPA.client_id });
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; refresh_token: string };
}
const refresh = (rt: string, address = "10.7.0.1") =>
  call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: rt, client_id: SPA.client_id }, headers: { [CLIENT_ADDRESS_HEADER]: address } });

describe("domain signals from their producers", () => {
  it("token_issued: once per token response, with its grant type, workspace and client; nothing for a refusal", async () => {
    const issued = watch("token_issued");
    const tokens = await codeTokens();
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
    expect((await refresh("lkr_unknown")).status).toBe(400);
    expect(issued).toEqual([
      { grantType: "authorization_code", workspaceId: ws, clientId: SPA.client_id },
      { grantType: "refresh_token", workspaceId: ws, clientId: SPA.client_id },
    ]);
  });

  it("refresh_reuse_detected: once per family ended, with the family, the user and where the reused token came from", async () => {
    const tokens = await codeTokens();
    const [row] = await h.service.db
      .select({ grantId: refreshTokens.grantId })
      .from(refreshTokens)
      .where(and(eq(refreshTokens.workspaceId, ws), eq(refreshTokens.tokenHash, sha256Hex(tokens.refresh_token))));
    expect(row).toBeDefined();
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
    const reuse = watch("refresh_reuse_detected");
    expect((await refresh(tokens.refresh_token, "10.7.0.9")).status).toBe(400);
    expect((await refresh(tokens.refresh_token, "10.7.0.9")).status).toBe(400);
    expect(reuse).toEqual([{ workspaceId: ws, clientId: SPA.client_id, grantId: row.grantId, userId: await userIdOf(h, ws, ADA.email), address: "10.7.0.9" }]);
  });

  it("an observer that throws breaks nothing: the token is answered, the other observers still called, the error reported once", async () => {
    const report = vi.spyOn(console, "error").mockImplementation(() => {});
    stops.push(
      observe("token_issued", () => {
        throw new Error("a broken observer");
      }),
    );
    const issued = watch("token_issued");
    await codeTokens();
    await codeTokens();
    expect(issued).toHaveLength(2);
    expect(report.mock.calls.filter(([line]) => String(line).includes("a broken observer"))).toHaveLength(1);
    report.mockRestore();
  });
});
