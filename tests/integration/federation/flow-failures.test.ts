/**
 * A federated sign-in that fails ends on the hosted error page with its status and code, and
 * creates nothing (no user, no identity, no session, no code): a wrong or missing state, a replayed
 * callback (a round trip is consumed once), the callback in another browser (no pending sign-in
 * cookie), an expired round trip, an ID token with a bad signature, a wrong `iss` or `nonce`, a
 * UserInfo answer about someone else, and an upstream that is down. On PostgreSQL, parallel callbacks of one round trip: exactly one wins.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { WEB, authzWorkspace } from "../../helpers/fixtures";
import { createHarness, Jar, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { outcome, startSignIn, type PendingSignIn } from "../../helpers/factors/sign-in";
import { startOidcProviderUpstream, type OidcProviderUpstream } from "../../helpers/federation/oidc-provider-upstream";
import { addSocialProvider, callbackUrlOf, countsOf, deliverCallback, expectHostedError, startSocial, upstreamLocation, userByEmail } from "../../helpers/federation/setup";

let h: Harness;
const ws = uniqueWorkspaceId("fedfail");
let upstream: OidcProviderUpstream;

const NAMES = ["state", "nostate", "replay", "browser", "expired", "signature", "iss", "respiss", "nonce", "userinfo", "race"];
const account = (name: string) => ({ sub: `${name}-sub`, email: `${name}@mail.test`, email_verified: true });

beforeAll(async () => {
  h = await createHarness();
  await seed(h, authzWorkspace(ws));
  upstream = await startOidcProviderUpstream({ redirectUris: [callbackUrlOf(ws)], now: () => h.clock.now(), accounts: NAMES.map(account) });
  await addSocialProvider(h, ws, { key: "contoso", preset: "oidc", name: "Contoso ID", clientId: upstream.clientId, clientSecret: upstream.clientSecret, config: { issuer: upstream.issuer }, applications: [WEB.client_id] });
});

afterAll(async () => {
  await upstream?.close();
});

beforeEach(() => {
  for (const key of Object.keys(upstream.tamper)) delete (upstream.tamper as Record<string, unknown>)[key];
});

/** A sign-in sent upstream, and the callback the upstream sends back for `name` (not yet delivered). */
async function upstreamRound(name: string, target = upstream, key = "contoso"): Promise<{ s: PendingSignIn; back: URL }> {
  const s = await startSignIn(h, ws, { ...WEB, scope: "openid email" });
  const url = upstreamLocation(await startSocial(h, s, key), ws);
  return { s, back: (await target.authorize(url, { account: account(name).sub })).url };
}

function withParam(url: URL, name: string, value: string | null): URL {
  const copy = new URL(url);
  if (value === null) copy.searchParams.delete(name);
  else copy.searchParams.set(name, value);
  return copy;
}

/** Runs `work`, then checks that the workspace holds exactly what it held before. */
async function createsNothing(work: () => Promise<void>) {
  const before = await countsOf(h, ws);
  await work();
  expect(await countsOf(h, ws)).toEqual(before);
}

describe("a failed federated callback", () => {
  it("wrong state: federation_expired, nothing created; the true state then completes", async () => {
    const { s, back } = await upstreamRound("state");
    await createsNothing(async () => {
      await expectHostedError(await deliverCallback(h, s, withParam(back, "state", "a-state-nobody-issued")), "federation_expired");
    });
    expect(outcome(await deliverCallback(h, s, back)).to).toBe("callback");
  });

  it("no state: federation_invalid_response, nothing created", async () => {
    const { s, back } = await upstreamRound("nostate");
    await createsNothing(async () => {
      await expectHostedError(await deliverCallback(h, s, withParam(back, "state", null)), "federation_invalid_response");
    });
  });

  it("replayed: the round trip is consumed once; the second delivery is federation_expired and creates nothing", async () => {
    const { s, back } = await upstreamRound("replay");
    expect(outcome(await deliverCallback(h, s, back)).to).toBe("callback");
    await createsNothing(async () => {
      await expectHostedError(await deliverCallback(h, s, back), "federation_expired");
    });
  });

  it("in another browser (without the pending sign-in's cookie): federation_expired, nothing created, the round trip left for its browser", async () => {
    const { s, back } = await upstreamRound("browser");
    // Another browser with a sign-in of its own: its cookie opens another transaction, not this one.
    const other = await startSignIn(h, ws, { ...WEB, scope: "openid email" }, new Jar());
    await createsNothing(async () => {
      await expectHostedError(await deliverCallback(h, s, back, { cookie: "" }), "federation_expired");
      await expectHostedError(await deliverCallback(h, s, back, { cookie: other.jar.header() }), "federation_expired");
    });
    expect(outcome(await deliverCallback(h, s, back)).to).toBe("callback");
  });

  it("after the round trip's 10 minutes: federation_expired, nothing created", async () => {
    const { s, back } = await upstreamRound("expired");
    h.clock.advance(10 * 60_000 + 1000);
    await createsNothing(async () => {
      await expectHostedError(await deliverCallback(h, s, back), "federation_expired");
    });
  });

  it("an ID token signed with a key the upstream does not publish: federation_invalid_response, nothing created, the round trip spent", async () => {
    const { s, back } = await upstreamRound("signature");
    upstream.tamper.signWithUnpublishedKey = true;
    await createsNothing(async () => {
      await expectHostedError(await deliverCallback(h, s, back), "federation_invalid_response");
    });
    expect(await userByEmail(h, ws, account("signature").email)).toBeNull();
    delete upstream.tamper.signWithUnpublishedKey;
    await expectHostedError(await deliverCallback(h, s, back), "federation_expired");
  });

  it("an ID token from another issuer, or for another nonce: federation_invalid_response, nothing created", async () => {
    const first = await upstreamRound("iss");
    upstream.tamper.idTokenClaims = { iss: "https://evil.example.test" };
    await createsNothing(async () => {
      await expectHostedError(await deliverCallback(h, first.s, first.back), "federation_invalid_response");
    });
    const second = await upstreamRound("nonce");
    upstream.tamper.idTokenClaims = { nonce: "a-nonce-nobody-sent" };
    await createsNothing(async () => {
      await expectHostedError(await deliverCallback(h, second.s, second.back), "federation_invalid_response");
    });
  });

  it("a UserInfo answer about another subject than the ID token's: federation_invalid_response, nothing created", async () => {
    const { s, back } = await upstreamRound("userinfo");
    upstream.tamper.userinfoClaims = { sub: "state-sub" };
    await createsNothing(async () => {
      await expectHostedError(await deliverCallback(h, s, back), "federation_invalid_response");
    });
  });

  it("an authorization response with another iss (RFC 9207): federation_invalid_response, nothing created", async () => {
    upstream.tamper.responseIss = "https://evil.example.test";
    const { s, back } = await upstreamRound("respiss");
    expect(back.searchParams.get("iss")).toBe("https://evil.example.test");
    await createsNothing(async () => {
      await expectHostedError(await deliverCallback(h, s, back), "federation_invalid_response");
    });
  });

  it("the upstream down at the callback (token endpoint unreachable) or at the start: federation_unavailable, nothing created", async () => {
    const down = await startOidcProviderUpstream({ redirectUris: [callbackUrlOf(ws)], now: () => h.clock.now(), clientId: "down-client", accounts: [account("down")] });
    await addSocialProvider(h, ws, { key: "down", preset: "oidc", name: "Down ID", clientId: down.clientId, clientSecret: down.clientSecret, config: { issuer: down.issuer }, applications: [WEB.client_id] });
    const { s, back } = await upstreamRound("down", down, "down");
    await down.close();
    await createsNothing(async () => {
      await expectHostedError(await deliverCallback(h, s, back), "federation_unavailable");
    });
    // A provider never reached before (no discovery cached) fails at the start, before any round trip.
    await addSocialProvider(h, ws, { key: "gone", preset: "oidc", name: "Gone ID", clientId: "gone-client", clientSecret: "gone-secret-0123456789", config: { issuer: down.issuer }, applications: [WEB.client_id] });
    const start = await startSignIn(h, ws, { ...WEB, scope: "openid email" });
    await createsNothing(async () => {
      await expectHostedError(await startSocial(h, start, "gone"), "federation_unavailable");
    });
  });
});

describe.runIf(Boolean(inject("databaseUrl")))("parallel callbacks of one round trip (PostgreSQL)", () => {
  it("exactly one of 12 signs in; the others are federation_expired", async () => {
    const { s, back } = await upstreamRound("race");
    const before = await countsOf(h, ws);
    const answers = await Promise.all(Array.from({ length: 12 }, () => deliverCallback(h, s, back, { cookie: s.jar.header() })));
    const winners = answers.filter((r) => r.status === 303);
    expect(winners).toHaveLength(1);
    expect(outcome(winners[0]!).to).toBe("callback");
    for (const r of answers.filter((a) => a.status !== 303)) await expectHostedError(r, "federation_expired");
    const after = await countsOf(h, ws);
    expect({ users: after.users - before.users, identities: after.identities - before.identities, sessions: after.sessions - before.sessions, codes: after.codes - before.codes }).toEqual({
      users: 1,
      identities: 1,
      sessions: 1,
      codes: 1,
    });
  });
});
