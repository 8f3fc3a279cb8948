import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { accessTokens } from "../../db/schema";
import { sha256Hex } from "../../lib/crypto";
import { MINUTE } from "../../lib/clock";
import { PURGE_GRACE_MS, purgeExpiredAccessTokens } from "../../lib/oauth/token-purge";
import { basic, call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { M2M, standardWorkspace } from "../helpers/fixtures";
import { insertWorkloadToken } from "../helpers/lifecycle";

let h: Harness;
const ws = uniqueWorkspaceId("purge");

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

const stored = async (token: string) => (await h.service.db.select({ hash: accessTokens.tokenHash }).from(accessTokens).where(eq(accessTokens.tokenHash, sha256Hex(token)))).length === 1;

const introspect = async (token: string) =>
  (await call(h, `/t/${ws}/oauth2/introspect`, { method: "POST", headers: { authorization: basic(M2M.client_id, M2M.secret) }, form: { token } })).json();

describe("expired access token purge", () => {
  it("deletes tokens expired longer than the grace period and keeps the rest, answering the same before and after", async () => {
    // Expires in 5 minutes; then the clock moves past expiry + grace for it but not for the others.
    const old = await insertWorkloadToken(h, ws, M2M.client_id);
    h.clock.advance(5 * MINUTE + PURGE_GRACE_MS + 1);
    const recentlyExpired = await insertWorkloadToken(h, ws, M2M.client_id, { ttlMs: -MINUTE });
    const live = await insertWorkloadToken(h, ws, M2M.client_id);

    expect(await introspect(old.token)).toEqual({ active: false });
    expect(await purgeExpiredAccessTokens(h.service, { workspaceId: ws })).toBe(1);

    expect(await stored(old.token)).toBe(false);
    expect(await stored(recentlyExpired.token)).toBe(true);
    expect(await stored(live.token)).toBe(true);
    // An expired token and a purged one answer alike; a live one is untouched.
    expect(await introspect(old.token)).toEqual({ active: false });
    expect(await introspect(recentlyExpired.token)).toEqual({ active: false });
    expect((await introspect(live.token)).active).toBe(true);
  });

  it("deletes nothing when nothing has expired past the grace period", async () => {
    await insertWorkloadToken(h, ws, M2M.client_id);
    expect(await purgeExpiredAccessTokens(h.service, { workspaceId: ws })).toBe(0);
  });
});
