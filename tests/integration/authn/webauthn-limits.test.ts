/**
 * Abuse limits on WebAuthn answers (lib/authn/factors/webauthn/verify.ts `verifyWebAuthnFactor`): a passkey
 * sign-in names no account until it verifies, so its failures are counted per client address; a
 * second factor's per account and address. A limited attempt is not checked (the credential's
 * counter does not move); as a signature cannot be guessed, the page says so and when to try again
 * (in 5 minutes, the window) instead of "could not be verified, try again". Nobody elsewhere is
 * locked out, and the limit lifts after its window.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { users, webauthnCredentials } from "../../../db/schema";
import { MINUTE } from "../../../lib/clock";
import { WEBAUTHN_LIMITS } from "../../../lib/authn/factors/webauthn";
import { signInFormMessage } from "../../../lib/hosted/errors";
import { FAILURES_PER_5_MINUTES } from "../../../lib/limits/declarations";
import { CLIENT_ADDRESS_HEADER } from "../../../lib/http/client-address";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { SPA, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postPassword, startSignIn } from "../../helpers/factors/sign-in";
import { postPasskey, postSecondFactorKey, SoftAuthenticator } from "../../helpers/factors/webauthn";

const LIMIT = 3;
const PASSWORD = "a long enough password for tests";
const MFA = { client_id: "mfa", redirect_uri: "https://mfa.example.test/callback" };

let h: Harness;
const ws = uniqueWorkspaceId("webauthn-limits");
const user = (name: string) => ({ email: `${name}@example.test`, password: PASSWORD });
const from = (address: string) => ({ [CLIENT_ADDRESS_HEADER]: address });
const failed = { to: "page", error: "webauthn_failed" };
const limited = { to: "page", error: "webauthn_limited" };

beforeAll(async () => {
  h = await createHarness({ rateLimits: { requestsPerMinute: 100_000, failuresPer5Minutes: LIMIT } });
  const doc = standardWorkspace(ws);
  doc.applications.push({ client_id: MFA.client_id, name: "MFA app", type: "PUBLIC", redirect_uris: [MFA.redirect_uri], identity_scopes: ["openid", "email", "profile"], auth_policy: { mfa: "required" } });
  doc.users.push(...["owner", "key", "bystander"].map((n) => ({ email: user(n).email, password: PASSWORD, email_verified: true })));
  await seed(h, doc);
});

async function userId(name: string): Promise<string> {
  const [row] = await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, user(name).email)));
  return row.id;
}

const counterOf = async (rowId: string) => (await h.service.db.select().from(webauthnCredentials).where(eq(webauthnCredentials.id, rowId)))[0].counter;

describe("passkey sign-in: failures per client address", () => {
  it("after the limit, even a valid passkey from that address is not checked and the page says when to try again; other addresses are unaffected; it lifts after 5 minutes", async () => {
    const authenticator = new SoftAuthenticator();
    const credential = await authenticator.enrol(h, ws, await userId("owner"), "passkey");
    const stranger = new SoftAuthenticator();
    stranger.register({ challenge: "x", rp: { id: "auth.example.test" }, user: { id: "eA" } });

    for (let i = 0; i < LIMIT; i++) {
      const s = await startSignIn(h, ws, SPA);
      expect(outcome(await postPasskey(h, s, stranger, {}, from("10.1.0.1")))).toEqual(failed);
    }
    let s = await startSignIn(h, ws, SPA);
    const before = await counterOf(credential.rowId);
    expect(outcome(await postPasskey(h, s, authenticator, {}, from("10.1.0.1")))).toEqual(limited);
    expect(await counterOf(credential.rowId)).toBe(before);
    // What the page says: not "could not be verified, try again" while nothing would be verified, but when to try again: the limit's window.
    expect(signInFormMessage("webauthn_limited")).toContain(`Try again in ${FAILURES_PER_5_MINUTES.windowMs / MINUTE} minutes`);
    expect(signInFormMessage("webauthn_limited", "de")).toContain(`in ${FAILURES_PER_5_MINUTES.windowMs / MINUTE} Minuten`);
    expect(signInFormMessage("webauthn_limited", "fr")).toContain(`dans ${FAILURES_PER_5_MINUTES.windowMs / MINUTE} minutes`);
    expect([WEBAUTHN_LIMITS.unidentified, WEBAUTHN_LIMITS.perAccountAndAddress]).toEqual([FAILURES_PER_5_MINUTES, FAILURES_PER_5_MINUTES]);

    // The owner, elsewhere.
    s = await startSignIn(h, ws, SPA);
    expect(outcome(await postPasskey(h, s, authenticator, {}, from("10.1.0.2"))).to).toBe("callback");

    h.clock.advance(5 * MINUTE);
    s = await startSignIn(h, ws, SPA);
    expect(outcome(await postPasskey(h, s, authenticator, {}, from("10.1.0.1"))).to).toBe("callback");
  });
});

describe("security key as a second factor: failures per account and address", () => {
  it("limits the account at that address only: the same account from another address, and another account at that address, still get in", async () => {
    const key = new SoftAuthenticator({ uv: false });
    await key.enrol(h, ws, await userId("key"), "security_key");
    const bystanderKey = new SoftAuthenticator({ uv: false });
    await bystanderKey.enrol(h, ws, await userId("bystander"), "security_key");

    const atSecondFactor = async (name: string, address: string) => {
      const s = await startSignIn(h, ws, MFA);
      await postPassword(h, s, user(name).email, PASSWORD);
      return { s, address };
    };
    const { s } = await atSecondFactor("key", "10.2.0.1");
    for (let i = 0; i < LIMIT; i++) expect(outcome(await postSecondFactorKey(h, s, key, { up: false }, from("10.2.0.1")))).toEqual(failed);
    expect(outcome(await postSecondFactorKey(h, s, key, {}, from("10.2.0.1")))).toEqual(limited);

    const elsewhere = await atSecondFactor("key", "10.2.0.2");
    expect(outcome(await postSecondFactorKey(h, elsewhere.s, key, {}, from("10.2.0.2"))).to).toBe("callback");
    const neighbour = await atSecondFactor("bystander", "10.2.0.1");
    expect(outcome(await postSecondFactorKey(h, neighbour.s, bystanderKey, {}, from("10.2.0.1"))).to).toBe("callback");

    h.clock.advance(5 * MINUTE);
    const later = await atSecondFactor("key", "10.2.0.1");
    expect(outcome(await postSecondFactorKey(h, later.s, key, {}, from("10.2.0.1"))).to).toBe("callback");
  });
});
