/**
 * Passkeys and security keys (lib/authn/factors/webauthn/webauthn.ts, lib/sign-in/steps/webauthn.ts):
 * real WebAuthn responses from a software authenticator (tests/helpers/factors/webauthn/webauthn.ts),
 * through the sign-in's step endpoints. Each rule has a test that fails without it: the exact
 * origin and RP ID, challenges single-use, short-lived and bound to their sign-in, user
 * verification for passkeys, the signature counter (and flagging), unknown and foreign
 * credentials, duplicate registrations, the algorithm list; and the evidence in the tokens.
 */
import { beforeAll, describe, expect, inject, it } from "vitest";
import { decodeJwt } from "jose";
import { and, eq } from "drizzle-orm";
import { auditEvents, authorizationTransactions, factorChallenges, hostedSessions, users, webauthnCredentials } from "../../../db/schema";
import { DAY, MINUTE } from "../../../lib/clock";
import { PASSKEY_LATER_COOKIE } from "../../../lib/sign-in/passkey-offer";
import { readEvidence } from "../../../lib/authn/evidence";
import { enrolledSummary } from "../../../lib/authn/factors";
import { WEBAUTHN_CHALLENGE_TTL_MS } from "../../../lib/authn/factors/webauthn";
import { checkAssertion } from "../../../lib/authn/factors/webauthn/webauthn";
import { contextFor, resolveWorkspace } from "../../../lib/server/router";
import { call, createHarness, exchangeCode, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { standardWorkspace, SPA } from "../../helpers/fixtures";
import { outcome, postPassword, postStep, startSignIn, viewOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { postPasskey, postRegistration, postSecondFactorKey, SoftAuthenticator } from "../../helpers/factors/webauthn";

let h: Harness;
const ws = uniqueWorkspaceId("webauthn");
const other = uniqueWorkspaceId("webauthn-other");
const PASSWORD = "a long enough password for tests";

/** Applications of the test workspace, one per policy under test. */
const app = (client_id: string) => ({ client_id, redirect_uri: `https://${client_id}.example.test/callback` });
const DEFAULT_APP = SPA; // password, email code and passkey; no MFA; no passkey offer
const OFFER = app("offer");
const REQUIRE = app("require");
const MFA = app("mfa");
const PASSWORD_ONLY = app("password-only");

const NAMES = [
  "offer", "skip", "required", "first", "origin", "rpid", "replay", "expired", "bound", "uv", "counter", "counter2", "zero", "forged", "unknown",
  "foreign", "dup", "dup2", "alg", "eddsa", "rsa", "key", "key-other", "key-uv", "passkey2fa", "enrol-key", "enrol-passkey", "handle",
  "disabled", "not-allowed", "race", "churn", "sk-first", "reg", "race-factor", "passkey-step", "later", "later-other",
];
const user = (name: string) => ({ email: `${name}@example.test`, password: PASSWORD });

function workspaceDoc(id: string) {
  const doc = standardWorkspace(id);
  const publicApp = (client: { client_id: string; redirect_uri: string }, auth_policy: object) => ({
    client_id: client.client_id,
    name: `App ${client.client_id}`,
    type: "PUBLIC",
    redirect_uris: [client.redirect_uri],
    identity_scopes: ["openid", "email", "profile"],
    auth_policy,
  });
  doc.applications.push(
    publicApp(OFFER, { passkey_enrollment: "offer" }),
    publicApp(REQUIRE, { passkey_enrollment: "require" }),
    publicApp(MFA, { mfa: "required" }),
    publicApp(PASSWORD_ONLY, { first_factors: ["password"] }),
  );
  doc.users.push(...NAMES.map((n) => ({ email: user(n).email, password: PASSWORD, email_verified: true })));
  return doc;
}

beforeAll(async () => {
  h = await createHarness();
  await seed(h, workspaceDoc(ws));
  await seed(h, workspaceDoc(other));
});

async function userId(name: string, workspaceId = ws): Promise<string> {
  const [row] = await h.service.db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.workspaceId, workspaceId), eq(users.emailNormalized, user(name).email)));
  return row.id;
}

const credentialsOf = async (name: string, workspaceId = ws) =>
  h.service.db
    .select()
    .from(webauthnCredentials)
    .where(and(eq(webauthnCredentials.workspaceId, workspaceId), eq(webauthnCredentials.userId, await userId(name, workspaceId))));

/** A user with a passkey already registered (stored directly), and their authenticator. */
async function withPasskey(name: string, workspaceId = ws, authenticator = new SoftAuthenticator()) {
  const credential = await authenticator.enrol(h, workspaceId, await userId(name, workspaceId), "passkey");
  return { authenticator, credential };
}

/** The ID token's claims after a step sent the browser to the application with a code. */
async function idToken(s: PendingSignIn, res: Response) {
  const o = outcome(res);
  if (o.to !== "callback") throw new Error(`not signed in: ${o.error}`);
  const token = await exchangeCode(h, s.workspaceId, { code: o.code, redirect_uri: s.client.redirect_uri, verifier: s.verifier, client_id: s.client.client_id });
  expect(token.status).toBe(200);
  return decodeJwt((await token.json()).id_token);
}

const failed = { to: "page", error: "webauthn_failed" };

describe("passkey enrolment (the passkey offer) and sign-in with it", () => {
  it("offers a passkey after a password sign-in; the registered passkey then signs the user in: amr hwk+user+mfa, acr loa:3", async () => {
    const authenticator = new SoftAuthenticator();
    const s = await startSignIn(h, ws, OFFER);
    expect(outcome(await postPassword(h, s, user("offer").email, PASSWORD))).toEqual({ to: "page", error: null });
    const view = await viewOf(h, s);
    expect(view.step).toEqual({ kind: "passkey_offer", required: false });
    const creation = JSON.parse(view.webauthn.creation!.passkey!);
    // The RP is the authentication host of PUBLIC_URL; discoverable and user-verifying; no attestation; the pinned algorithms.
    expect(creation.rp).toEqual({ id: "auth.example.test", name: `Workspace ${ws}` });
    expect(creation.authenticatorSelection).toMatchObject({ residentKey: "required", userVerification: "required" });
    expect(creation.attestation).toBe("none");
    expect(creation.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toEqual([-7, -8, -257]);
    expect(creation.user.id).toBe(Buffer.from(await userId("offer")).toString("base64url"));

    const { res } = await postRegistration(h, s, authenticator, "passkey");
    const o = outcome(res);
    expect(o.to).toBe("callback");
    const [stored] = await credentialsOf("offer");
    expect(stored).toMatchObject({ kind: "passkey", rpId: "auth.example.test", counter: 0, transports: ["internal"], flaggedAt: null });
    expect(stored.credentialId).toBe(authenticator.credentials[0].id);
    // The offer is answered (also recorded on the transaction); registering proved no factor: the session is the password's.
    const [tx] = await h.service.db.select().from(authorizationTransactions).where(eq(authorizationTransactions.id, s.tx));
    expect(tx.passkeyOfferAnswered).toBe(true);
    expect(readEvidence(tx.evidence).map((e) => e.method)).toEqual(["password"]);

    // Then a passkey sign-in, in a new browser: no password.
    h.clock.advance(MINUTE);
    const next = await startSignIn(h, ws, DEFAULT_APP);
    const claims = await idToken(next, await postPasskey(h, next, authenticator));
    expect(claims.amr).toEqual(["hwk", "user", "mfa"]);
    expect(claims.acr).toBe("urn:latchkey:loa:3");
    expect(claims.auth_time).toBe(Math.floor(h.clock.now().getTime() / 1000));
    const [session] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.id, claims.sid as string));
    expect(readEvidence(session.evidence)).toEqual([{ method: "passkey", amr: ["hwk", "user"], strength: "phishing_resistant", factorId: stored.id, at: h.clock.now().toISOString() }]);
    const [used] = await credentialsOf("offer");
    expect(used.counter).toBe(1);
    expect(used.lastUsedAt).toEqual(h.clock.now());
  });

  it('"Not now" answers an optional offer and completes the sign-in without a passkey', async () => {
    const s = await startSignIn(h, ws, OFFER);
    await postPassword(h, s, user("skip").email, PASSWORD);
    expect((await viewOf(h, s)).step.kind).toBe("passkey_offer");
    expect(outcome(await postStep(h, s, "/sign-in/passkey/skip", {})).to).toBe("callback");
    expect(await credentialsOf("skip")).toEqual([]);
  });

  it('"Not now" holds in this browser for 30 days: a cookie under the workspace, bound to the account; another browser or account is offered again, and so is this one after 30 days', async () => {
    const s = await startSignIn(h, ws, OFFER);
    await postPassword(h, s, user("later").email, PASSWORD);
    expect((await viewOf(h, s)).step.kind).toBe("passkey_offer");
    const res = await postStep(h, s, "/sign-in/passkey/skip", {});
    expect(outcome(res).to).toBe("callback");
    const set = res.headers.getSetCookie().find((c) => c.startsWith(`${PASSKEY_LATER_COOKIE}=`))!;
    expect(set).toContain(`; Path=/t/${ws};`);
    expect(set).toMatch(/; Secure; HttpOnly; SameSite=Lax; Max-Age=2592000$/);
    // A browser that keeps only that cookie (signed out since): the next password sign-in goes straight to the application.
    const browser = () => new Jar().take(new Response(null, { headers: { "set-cookie": set } }));
    h.clock.advance(29 * DAY);
    const again = await startSignIn(h, ws, OFFER, browser());
    expect(outcome(await postPassword(h, again, user("later").email, PASSWORD)).to).toBe("callback");
    // Another browser is offered; so is another account in this browser (the cookie is bound to the account that said it).
    const elsewhere = await startSignIn(h, ws, OFFER);
    await postPassword(h, elsewhere, user("later").email, PASSWORD);
    expect((await viewOf(h, elsewhere)).step.kind).toBe("passkey_offer");
    const someoneElse = await startSignIn(h, ws, OFFER, browser());
    await postPassword(h, someoneElse, user("later-other").email, PASSWORD);
    expect((await viewOf(h, someoneElse)).step.kind).toBe("passkey_offer");
    // A cookie altered to look newer is nobody's.
    const forged = set.replace(/=(\d+)\./, (_m, at: string) => `=${Number(at) + DAY / 1000}.`);
    const tampered = await startSignIn(h, ws, OFFER, new Jar().take(new Response(null, { headers: { "set-cookie": forged } })));
    await postPassword(h, tampered, user("later").email, PASSWORD);
    expect((await viewOf(h, tampered)).step.kind).toBe("passkey_offer");
    // A required passkey is asked for whatever the cookie says.
    const required = await startSignIn(h, ws, REQUIRE, browser());
    await postPassword(h, required, user("later").email, PASSWORD);
    expect((await viewOf(h, required)).step).toEqual({ kind: "passkey_offer", required: true });
    // 30 days after "Not now", the offer comes back.
    h.clock.advance(DAY);
    const later = await startSignIn(h, ws, OFFER, browser());
    await postPassword(h, later, user("later").email, PASSWORD);
    expect((await viewOf(h, later)).step.kind).toBe("passkey_offer");
  });

  it('a required passkey cannot be skipped: "Not now" answers passkey_required; adding one completes', async () => {
    const s = await startSignIn(h, ws, REQUIRE);
    await postPassword(h, s, user("required").email, PASSWORD);
    expect((await viewOf(h, s)).step).toEqual({ kind: "passkey_offer", required: true });
    expect(outcome(await postStep(h, s, "/sign-in/passkey/skip", {}))).toEqual({ to: "page", error: "passkey_required" });
    expect((await viewOf(h, s)).step).toEqual({ kind: "passkey_offer", required: true });
    const { res } = await postRegistration(h, s, new SoftAuthenticator(), "passkey");
    expect(outcome(res).to).toBe("callback");
  });

  it("the first step's options: any discoverable credential, user verification required, the RP ID from PUBLIC_URL", async () => {
    const s = await startSignIn(h, ws, DEFAULT_APP);
    const options = JSON.parse((await viewOf(h, s)).webauthn.options!);
    expect(options).toMatchObject({ rpId: "auth.example.test", userVerification: "required", timeout: WEBAUTHN_CHALLENGE_TTL_MS });
    expect(options.allowCredentials ?? []).toEqual([]);
    const [challenge] = await h.service.db.select().from(factorChallenges).where(and(eq(factorChallenges.bindingId, s.tx), eq(factorChallenges.secret, options.challenge)));
    expect(challenge).toMatchObject({ kind: "webauthn", purpose: "sign_in", userId: null, consumedAt: null });
    expect(challenge.expiresAt.getTime() - challenge.createdAt.getTime()).toBe(5 * MINUTE);
  });
});

describe("what a passkey sign-in refuses", () => {
  it("an assertion made for another origin, even one that only differs in scheme or port", async () => {
    const { authenticator } = await withPasskey("origin");
    for (const origin of ["https://evil.example.test", "http://auth.example.test", "https://auth.example.test:8443", "https://login.auth.example.test"]) {
      const s = await startSignIn(h, ws, DEFAULT_APP);
      expect(outcome(await postPasskey(h, s, authenticator, { origin })), origin).toEqual(failed);
    }
    const s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, authenticator)).to).toBe("callback");
  });

  it("an assertion for another RP ID", async () => {
    const { authenticator } = await withPasskey("rpid");
    for (const rpId of ["example.test", "evil.example.test"]) {
      const s = await startSignIn(h, ws, DEFAULT_APP);
      expect(outcome(await postPasskey(h, s, authenticator, { rpId })), rpId).toEqual(failed);
    }
  });

  it("a replayed assertion, and any second use of a challenge", async () => {
    const { authenticator } = await withPasskey("replay");
    const s = await startSignIn(h, ws, DEFAULT_APP);
    const view = await viewOf(h, s);
    const options = JSON.parse(view.webauthn.options!);
    const first = authenticator.assert(options);
    // The first answer fails for another reason (another origin): the challenge is used all the same.
    const wrong = authenticator.assert(options, { origin: "https://evil.example.test" });
    expect(outcome(await postStep(h, s, "/sign-in/passkey", { response: JSON.stringify(wrong) }, { csrf: view.csrf }))).toEqual(failed);
    expect(outcome(await postStep(h, s, "/sign-in/passkey", { response: JSON.stringify(first) }, { csrf: view.csrf }))).toEqual(failed);

    const s2 = await startSignIn(h, ws, DEFAULT_APP);
    const view2 = await viewOf(h, s2);
    const good = authenticator.assert(JSON.parse(view2.webauthn.options!));
    expect(outcome(await postStep(h, s2, "/sign-in/passkey", { response: JSON.stringify(good) }, { csrf: view2.csrf })).to).toBe("callback");
    // The same assertion again, in a new sign-in: its challenge is gone.
    const s3 = await startSignIn(h, ws, DEFAULT_APP);
    const view3 = await viewOf(h, s3);
    expect(outcome(await postStep(h, s3, "/sign-in/passkey", { response: JSON.stringify(good) }, { csrf: view3.csrf }))).toEqual(failed);
  });

  it("an expired challenge (after five minutes); one just before that works", async () => {
    const { authenticator } = await withPasskey("expired");
    const s = await startSignIn(h, ws, DEFAULT_APP);
    let view = await viewOf(h, s);
    h.clock.advance(WEBAUTHN_CHALLENGE_TTL_MS);
    let assertion = authenticator.assert(JSON.parse(view.webauthn.options!));
    expect(outcome(await postStep(h, s, "/sign-in/passkey", { response: JSON.stringify(assertion) }, { csrf: view.csrf }))).toEqual(failed);

    view = await viewOf(h, s);
    h.clock.advance(WEBAUTHN_CHALLENGE_TTL_MS - 1000);
    assertion = authenticator.assert(JSON.parse(view.webauthn.options!));
    expect(outcome(await postStep(h, s, "/sign-in/passkey", { response: JSON.stringify(assertion) }, { csrf: view.csrf })).to).toBe("callback");
  });

  it("a challenge issued to another sign-in", async () => {
    const { authenticator } = await withPasskey("bound");
    const a = await startSignIn(h, ws, DEFAULT_APP);
    const b = await startSignIn(h, ws, DEFAULT_APP);
    const optionsOfA = JSON.parse((await viewOf(h, a)).webauthn.options!);
    await viewOf(h, b);
    expect(outcome(await postStep(h, b, "/sign-in/passkey", { response: JSON.stringify(authenticator.assert(optionsOfA)) }))).toEqual(failed);
    // A's challenge is still A's.
    expect(outcome(await postStep(h, a, "/sign-in/passkey", { response: JSON.stringify(authenticator.assert(optionsOfA)) })).to).toBe("callback");
  });

  it("a passkey assertion without user verification", async () => {
    const { authenticator } = await withPasskey("uv");
    const s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, authenticator, { uv: false }))).toEqual(failed);
    expect(outcome(await postPasskey(h, s, authenticator, { up: false }))).toEqual(failed);
    expect(outcome(await postPasskey(h, s, authenticator)).to).toBe("callback");
  });

  it("a counter that goes backwards: refused with credential_refused, the credential flagged and refused from then on", async () => {
    const { authenticator, credential } = await withPasskey("counter");
    let s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, authenticator, { counter: 5 })).to).toBe("callback");
    s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, authenticator, { counter: 3 }))).toEqual({ to: "page", error: "credential_refused" });
    const [flagged] = await credentialsOf("counter");
    expect(flagged.flaggedAt).toEqual(h.clock.now());
    expect(flagged.counter).toBe(5);
    // Never again, whatever the counter; the policy no longer counts it as the user's passkey.
    s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, authenticator, { counter: 100 }))).toEqual({ to: "page", error: "credential_refused" });
    const ctx = contextFor(h.service, (await resolveWorkspace(h.service, ws))!);
    expect((await enrolledSummary(ctx, await userId("counter")))?.passkey).toBe(0);
    expect(credential.rowId).toBe(flagged.id);
  });

  it("an unchanged nonzero counter is refused too; an authenticator that keeps its counter at 0 keeps working", async () => {
    const { authenticator } = await withPasskey("zero", ws, new SoftAuthenticator({ counterStep: 0 }));
    for (let i = 0; i < 3; i++) {
      const s = await startSignIn(h, ws, DEFAULT_APP);
      expect(outcome(await postPasskey(h, s, authenticator)).to).toBe("callback");
    }
    const { authenticator: same } = await withPasskey("counter2", ws);
    let s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, same, { counter: 7 })).to).toBe("callback");
    s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, same, { counter: 7 }))).toEqual({ to: "page", error: "credential_refused" });
  });

  it("a forged assertion with a low counter does not flag the owner's credential (the counter is judged after the signature)", async () => {
    const { authenticator, credential } = await withPasskey("forged");
    let s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, authenticator, { counter: 10 })).to).toBe("callback");
    // Another key, claiming the owner's credential id and user handle.
    const forger = new SoftAuthenticator();
    const { credential: forged } = forger.register({ challenge: "x", rp: { id: "auth.example.test" }, user: { id: credential.userHandle! } });
    s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, forger, { credential: { ...forged, id: credential.id, userHandle: credential.userHandle }, counter: 1 }))).toEqual(failed);
    const [row] = await credentialsOf("forged");
    expect(row.flaggedAt).toBeNull();
    s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, authenticator)).to).toBe("callback");
  });

  it("an unknown credential, and a credential of another workspace", async () => {
    const stranger = new SoftAuthenticator();
    stranger.register({ challenge: "x", rp: { id: "auth.example.test" }, user: { id: Buffer.from("nobody").toString("base64url") } });
    const failuresBefore = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "sign_in.failed")));
    let s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, stranger))).toEqual(failed);
    // Recorded for the administrators as a failed sign-in, without an account (none is established).
    const failuresAfter = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "sign_in.failed")));
    expect(failuresAfter.filter((e) => !failuresBefore.some((b) => b.id === e.id)).map((e) => [e.subject, e.reason, e.data.method])).toEqual([[null, "assertion_failed", "webauthn"]]);

    const { authenticator } = await withPasskey("foreign", other);
    s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, authenticator))).toEqual(failed);
    s = await startSignIn(h, other, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, authenticator)).to).toBe("callback");
  });

  it("a user handle that is not the credential's owner, or none at all", async () => {
    const { authenticator } = await withPasskey("handle");
    let s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, authenticator, { userHandle: Buffer.from(await userId("first")).toString("base64url") }))).toEqual(failed);
    s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, authenticator, { userHandle: null }))).toEqual(failed);
  });

  it("a security key as a first factor, a disabled user, a malformed answer, an application that does not allow passkeys", async () => {
    const key = new SoftAuthenticator();
    await key.enrol(h, ws, await userId("sk-first"), "security_key");
    let s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, key))).toEqual(failed);

    const { authenticator } = await withPasskey("disabled");
    await h.service.db.update(users).set({ status: "disabled" }).where(eq(users.id, await userId("disabled")));
    s = await startSignIn(h, ws, DEFAULT_APP);
    expect(outcome(await postPasskey(h, s, authenticator))).toEqual(failed);

    for (const response of ["", "{", "[]", JSON.stringify({ id: "a", rawId: "a", type: "public-key", response: {} }), "x".repeat(7_000)]) {
      const res = await postStep(h, s, "/sign-in/passkey", { response });
      expect(outcome(res)).toEqual(failed);
    }

    const { authenticator: allowedElsewhere } = await withPasskey("not-allowed");
    s = await startSignIn(h, ws, PASSWORD_ONLY);
    const view = await viewOf(h, s);
    expect(view.webauthn.options).toBeNull();
    const options = { challenge: "c2lnbi1pbg", rpId: "auth.example.test" };
    expect(outcome(await postStep(h, s, "/sign-in/passkey", { response: JSON.stringify(allowedElsewhere.assert(options)) }, { csrf: view.csrf }))).toEqual({
      to: "page",
      error: "method_not_allowed",
    });
  });
});

describe("registration refuses", () => {
  async function atOffer(name: string) {
    const s = await startSignIn(h, ws, OFFER);
    await postPassword(h, s, user(name).email, PASSWORD);
    return s;
  }
  const enrolmentFailed = { to: "page", error: "enrollment_failed" };

  it("another origin, another RP ID, a reused challenge, a passkey without user verification", async () => {
    const s = await atOffer("reg");
    const a = new SoftAuthenticator();
    expect(outcome((await postRegistration(h, s, a, "passkey", { origin: "https://evil.example.test" })).res)).toEqual(enrolmentFailed);
    expect(outcome((await postRegistration(h, s, a, "passkey", { rpId: "evil.example.test" })).res)).toEqual(enrolmentFailed);
    expect(outcome((await postRegistration(h, s, a, "passkey", { uv: false })).res)).toEqual(enrolmentFailed);
    expect(outcome((await postRegistration(h, s, a, "passkey", { type: "webauthn.get" })).res)).toEqual(enrolmentFailed);
    // A challenge of an assertion (the first step's) cannot be a registration's.
    const first = await startSignIn(h, ws, DEFAULT_APP);
    const signInChallenge = JSON.parse((await viewOf(h, first)).webauthn.options!).challenge;
    expect(outcome((await postRegistration(h, s, a, "passkey", { challenge: signInChallenge })).res)).toEqual(enrolmentFailed);
    expect(await credentialsOf("reg")).toHaveLength(0);

    const view = await viewOf(h, s);
    const { response } = a.register(JSON.parse(view.webauthn.creation!.passkey!));
    expect(outcome(await postStep(h, s, "/sign-in/webauthn/register", { kind: "passkey", response: JSON.stringify(response) }, { csrf: view.csrf })).to).toBe("callback");
    expect(await credentialsOf("reg")).toHaveLength(1);
  });

  it("a credential id already registered in the workspace (cleanly, no 500); the same id in another workspace is another credential", async () => {
    const { credential } = await withPasskey("dup");
    const s = await atOffer("dup2");
    const { res } = await postRegistration(h, s, new SoftAuthenticator(), "passkey", { credentialId: credential.id });
    expect(res.status).toBe(303);
    expect(outcome(res)).toEqual(enrolmentFailed);
    expect(await credentialsOf("dup2")).toHaveLength(0);
    expect(await credentialsOf("dup")).toHaveLength(1);

    const elsewhere = await startSignIn(h, other, OFFER);
    await postPassword(h, elsewhere, user("dup2").email, PASSWORD);
    expect(outcome((await postRegistration(h, elsewhere, new SoftAuthenticator(), "passkey", { credentialId: credential.id })).res).to).toBe("callback");
  });

  it("an algorithm outside ES256, EdDSA and RS256; EdDSA and RS256 keys register and sign in", async () => {
    let s = await atOffer("alg");
    expect(outcome((await postRegistration(h, s, new SoftAuthenticator(), "passkey", { alg: "ES384" })).res)).toEqual(enrolmentFailed);
    expect(await credentialsOf("alg")).toHaveLength(0);

    for (const [name, alg] of [["eddsa", "EdDSA"], ["rsa", "RS256"]] as const) {
      const authenticator = new SoftAuthenticator();
      s = await atOffer(name);
      expect(outcome((await postRegistration(h, s, authenticator, "passkey", { alg })).res).to, alg).toBe("callback");
      s = await startSignIn(h, ws, DEFAULT_APP);
      expect(outcome(await postPasskey(h, s, authenticator)).to, alg).toBe("callback");
    }
  });
});

describe("security keys and passkeys as a second factor", () => {
  async function atSecondFactor(name: string) {
    const s = await startSignIn(h, ws, MFA);
    expect(outcome(await postPassword(h, s, user(name).email, PASSWORD))).toEqual({ to: "page", error: null });
    return s;
  }

  it("a security key with user presence only completes an MFA sign-in: amr pwd+hwk+mfa, acr loa:3", async () => {
    const key = new SoftAuthenticator({ uv: false });
    const credential = await key.enrol(h, ws, await userId("key"), "security_key");
    const s = await atSecondFactor("key");
    const view = await viewOf(h, s);
    expect(view.step).toEqual({ kind: "second_factor", options: ["security_key"] });
    const options = JSON.parse(view.webauthn.options!);
    expect(options.allowCredentials).toEqual([{ id: credential.id, type: "public-key", transports: ["usb"] }]);
    expect(options.userVerification).toBe("discouraged");

    const claims = await idToken(s, await postSecondFactorKey(h, s, key));
    expect(claims.amr).toEqual(["pwd", "hwk", "mfa"]);
    expect(claims.acr).toBe("urn:latchkey:loa:3");
    const [session] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.id, claims.sid as string));
    expect(readEvidence(session.evidence).map((e) => [e.method, e.factorId])).toEqual([["password", null], ["security_key", credential.rowId]]);
  });

  it("refuses another user's key, a key without presence, and a passkey without user verification", async () => {
    const theirs = new SoftAuthenticator({ uv: false });
    await theirs.enrol(h, ws, await userId("key-other"), "security_key");
    const mine = new SoftAuthenticator({ uv: false });
    await mine.enrol(h, ws, await userId("key-uv"), "security_key");
    const s = await atSecondFactor("key-uv");
    const options = JSON.parse((await viewOf(h, s)).webauthn.options!);
    expect(outcome(await postStep(h, s, "/sign-in/webauthn", { response: JSON.stringify(theirs.assert({ ...options, allowCredentials: [] })) }))).toEqual(failed);
    expect(outcome(await postSecondFactorKey(h, s, mine, { up: false }))).toEqual(failed);
    expect((await viewOf(h, s)).step.kind).toBe("second_factor");

    const { authenticator: passkey } = await withPasskey("passkey2fa");
    const p = await atSecondFactor("passkey2fa");
    const view = await viewOf(h, p);
    expect(view.step).toEqual({ kind: "second_factor", options: ["passkey"] });
    expect(JSON.parse(view.webauthn.options!).userVerification).toBe("preferred");
    expect(outcome(await postSecondFactorKey(h, p, passkey, { uv: false }))).toEqual(failed);
    const claims = await idToken(p, await postSecondFactorKey(h, p, passkey));
    expect(claims.amr).toEqual(["pwd", "hwk", "user", "mfa"]);
    expect(claims.acr).toBe("urn:latchkey:loa:3");
  });

  it("a passkey posted to the first step's endpoint at the second-factor step is refused (that step takes keys at /sign-in/webauthn)", async () => {
    const { authenticator } = await withPasskey("passkey-step");
    const s = await startSignIn(h, ws, MFA);
    // The first step's options (a challenge for any passkey), then the password.
    const first = await viewOf(h, s);
    expect(outcome(await postPassword(h, s, user("passkey-step").email, PASSWORD))).toEqual({ to: "page", error: null });
    // Posted before the second step's page issues its own challenge (which drops the first step's).
    const assertion = authenticator.assert(JSON.parse(first.webauthn.options!));
    expect(outcome(await postStep(h, s, "/sign-in/passkey", { response: JSON.stringify(assertion) }, { csrf: first.csrf }))).toEqual(failed);
    expect((await viewOf(h, s)).step).toEqual({ kind: "second_factor", options: ["passkey"] });
    // The step's own endpoint takes it.
    expect(outcome(await postSecondFactorKey(h, s, authenticator)).to).toBe("callback");
  });

  it("enrols a security key when MFA is required and the user has no second factor; the registration counts as the factor", async () => {
    const s = await atSecondFactor("enrol-key");
    const view = await viewOf(h, s);
    expect(view.step).toEqual({ kind: "enroll_second_factor", options: ["totp", "security_key", "passkey"] });
    const creation = JSON.parse(view.webauthn.creation!.securityKey!);
    expect(creation.authenticatorSelection).toMatchObject({ residentKey: "discouraged", userVerification: "discouraged" });
    expect(view.webauthn.creation!.passkey).not.toBeNull();
    // A security key needs only presence.
    const { res } = await postRegistration(h, s, new SoftAuthenticator(), "security_key", { uv: false });
    expect(outcome(res)).toEqual({ to: "page", error: null });
    const [stored] = await credentialsOf("enrol-key");
    expect(stored.kind).toBe("security_key");
    const [tx] = await h.service.db.select().from(authorizationTransactions).where(eq(authorizationTransactions.id, s.tx));
    expect(readEvidence(tx.evidence).map((e) => [e.method, e.factorId])).toEqual([["password", null], ["security_key", stored.id]]);
    // First enrolment: the recovery codes are shown next.
    expect((await viewOf(h, s)).step).toEqual({ kind: "recovery_codes" });
  });

  it("enrols a passkey as the second factor (user verification required)", async () => {
    const s = await atSecondFactor("enrol-passkey");
    expect(outcome((await postRegistration(h, s, new SoftAuthenticator(), "passkey", { uv: false })).res)).toEqual({ to: "page", error: "enrollment_failed" });
    expect(outcome((await postRegistration(h, s, new SoftAuthenticator(), "passkey")).res)).toEqual({ to: "page", error: null });
    const [stored] = await credentialsOf("enrol-passkey");
    expect(stored.kind).toBe("passkey");
  });

  it("registration is refused outside the enrolment steps, and a kind the step does not offer", async () => {
    const s = await startSignIn(h, ws, DEFAULT_APP);
    const res = await postStep(h, s, "/sign-in/webauthn/register", { kind: "passkey", response: "{}" });
    expect(outcome(res)).toEqual({ to: "page", error: null });
    const again = await startSignIn(h, ws, REQUIRE);
    await postPassword(h, again, user("skip").email, PASSWORD);
    const view = await viewOf(h, again);
    const { response } = new SoftAuthenticator().register(JSON.parse(view.webauthn.creation!.passkey!), { uv: false });
    expect(outcome(await postStep(h, again, "/sign-in/webauthn/register", { kind: "security_key", response: JSON.stringify(response) }, { csrf: view.csrf }))).toEqual({
      to: "page",
      error: "method_not_allowed",
    });
  });
});

describe("challenges at rest", () => {
  it("a page reloaded many times keeps at most five live challenges for its sign-in", async () => {
    const s = await startSignIn(h, ws, DEFAULT_APP);
    for (let i = 0; i < 12; i++) await viewOf(h, s);
    const rows = await h.service.db.select().from(factorChallenges).where(and(eq(factorChallenges.workspaceId, ws), eq(factorChallenges.bindingId, s.tx)));
    expect(rows).toHaveLength(5);
    const { authenticator } = await withPasskey("churn");
    expect(outcome(await postPasskey(h, s, authenticator)).to).toBe("callback");
  });
});

describe.runIf(Boolean(inject("databaseUrl")))("parallel uses of one challenge (PostgreSQL)", () => {
  it("verifies exactly one of 12 parallel checks of the same assertion (the challenge is consumed once)", async () => {
    const { authenticator } = await withPasskey("race-factor");
    const s = await startSignIn(h, ws, DEFAULT_APP);
    const assertion = JSON.stringify(authenticator.assert(JSON.parse((await viewOf(h, s)).webauthn.options!)));
    const ctx = contextFor(h.service, (await resolveWorkspace(h.service, ws))!);
    const results = await Promise.all(
      Array.from({ length: 12 }, () => checkAssertion(ctx, { purpose: "sign_in", bindingId: s.tx }, assertion, { userId: null, kinds: ["passkey"] })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.reason)).toEqual(Array(11).fill("expired"));
  });

  it("gives exactly one success to 12 parallel posts of the same assertion", async () => {
    const { authenticator } = await withPasskey("race");
    const s = await startSignIn(h, ws, DEFAULT_APP);
    const view = await viewOf(h, s);
    const assertion = JSON.stringify(authenticator.assert(JSON.parse(view.webauthn.options!)));
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        call(h, `/t/${ws}/sign-in/passkey`, { form: { tx: s.tx, csrf: view.csrf, response: assertion }, cookie: s.jar.header(), headers: { origin: PUBLIC_URL } }),
      ),
    );
    // The others: refused (the challenge is used: 303 back to the page), or the sign-in already completed (400).
    for (const r of results) expect([303, 400]).toContain(r.status);
    const outcomes = results.filter((r) => r.status === 303).map((r) => outcome(r));
    expect(outcomes.filter((o) => o.to === "callback")).toHaveLength(1);
    expect(outcomes.filter((o) => o.to === "page").every((o) => o.to === "page" && o.error === "webauthn_failed")).toBe(true);
  });
});
