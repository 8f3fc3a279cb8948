/**
 * Signing-key rotation as the console drives it (lib/oauth/keys.ts): the next key is in JWKS
 * before it signs anything, and the old key stays in JWKS until the tokens it signed have expired.
 */
import { decodeProtectedHeader } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import {
  activatePublishedKey,
  getActiveSigningKey,
  JWKS_MAX_AGE_MS,
  listSigningKeys,
  publishNextSigningKey,
  RETIRED_KEY_PUBLISHED_MS,
  signJwt,
} from "../../lib/oauth/keys";
import { call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { standardWorkspace } from "../helpers/fixtures";

let h: Harness;
const W = uniqueWorkspaceId("keys");

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(W));
});

async function jwksKids(): Promise<string[]> {
  const response = await call(h, `/t/${W}/.well-known/jwks.json`);
  expect(response.headers.get("cache-control")).toContain(`max-age=${JWKS_MAX_AGE_MS / 1000}`);
  return ((await response.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
}

const signedKid = async () => decodeProtectedHeader(await signJwt(h.service, W, { sub: "x" })).kid;

describe("signing-key rotation", () => {
  it("publishes the next key in JWKS before it signs, and retires the old one only after its tokens expire", async () => {
    const first = (await getActiveSigningKey(h.service, W)).kid;
    expect(await jwksKids()).toEqual([first]);

    const next = await publishNextSigningKey(h.service, W);
    expect((await jwksKids()).sort()).toEqual([first, next.kid].sort());
    expect(await signedKid()).toBe(first);
    await expect(publishNextSigningKey(h.service, W)).rejects.toMatchObject({ code: "already_published" });

    // Verifiers may hold a JWKS from just before the publication for max-age: not yet.
    await expect(activatePublishedKey(h.service, W)).rejects.toMatchObject({ code: "not_ready" });
    h.clock.advance(JWKS_MAX_AGE_MS - 1000);
    await expect(activatePublishedKey(h.service, W)).rejects.toMatchObject({ code: "not_ready" });
    h.clock.advance(1000);

    const activated = await activatePublishedKey(h.service, W);
    expect(activated).toMatchObject({ kid: next.kid, retired: first });
    expect(await signedKid()).toBe(next.kid);
    // The old key verifies the tokens it signed until they have expired.
    expect((await jwksKids()).sort()).toEqual([first, next.kid].sort());
    const keys = await listSigningKeys(h.service, W);
    expect(keys.find((k) => k.kid === first)).toMatchObject({ status: "retired", inJwks: true });

    h.clock.advance(RETIRED_KEY_PUBLISHED_MS - 1000);
    expect(await jwksKids()).toContain(first);
    h.clock.advance(2000);
    expect(await jwksKids()).toEqual([next.kid]);
    expect((await listSigningKeys(h.service, W)).find((k) => k.kid === first)).toMatchObject({ inJwks: false });
  });

  it("the retirement window covers ID-token lifetime, the per-process key cache and clock skew", () => {
    expect(RETIRED_KEY_PUBLISHED_MS).toBeGreaterThanOrEqual(5 * 60_000 + 30_000);
  });

  it("activation without a published key is refused", async () => {
    await expect(activatePublishedKey(h.service, W)).rejects.toMatchObject({ code: "no_published_key" });
  });
});
