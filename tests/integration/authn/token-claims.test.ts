/**
 * docs/sign-in.md shows the ID token of each way to sign in. This signs in each of those ways for
 * real and compares: the same claim names, and the same `amr` and `acr`. A change to what a
 * method records, or to the docs, that makes them disagree fails here.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { exchangeCode, createHarness, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { SPA, standardWorkspace } from "../../helpers/fixtures";
import { OUTBOX, signInWithEmailCode } from "../../helpers/factors/email";
import { codeAt, giveTotp, signInWithTotp } from "../../helpers/factors/totp";
import { giveRecoveryCodes, signInWithRecoveryCode } from "../../helpers/factors/recovery-codes";
import { outcome, passwordStep, postPassword, postStep, startSignIn, userIdOf, viewOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { postPasskey, postSecondFactorKey, SoftAuthenticator } from "../../helpers/factors/webauthn";

let h: Harness;
const plain = uniqueWorkspaceId("claims");
const mfa = uniqueWorkspaceId("claims-mfa");
const PASSWORD = "a long enough password";
const person = (name: string) => ({ email: `${name}@example.test`, password: PASSWORD });

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX });
  for (const [id, policy] of [
    [plain, undefined],
    [mfa, { mfa: "required" }],
  ] as const) {
    const doc = standardWorkspace(id);
    doc.users.push(...["pwd", "otp", "passkey", "totp", "recovery", "key", "otp-pwd"].map((n) => ({ ...person(n), name: n, email_verified: true })));
    await seed(h, policy ? { ...doc, auth_policy: policy } : doc);
  }
});

/** The ID token the application gets for a callback URL of this sign-in. */
async function idToken(workspaceId: string, s: { verifier: string }, callback: URL): Promise<Record<string, unknown>> {
  const res = await exchangeCode(h, workspaceId, { code: callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: s.verifier, client_id: SPA.client_id });
  expect(res.status).toBe(200);
  return decodeJwt((await res.json()).id_token) as Record<string, unknown>;
}

function callbackOf(res: Response): URL {
  const o = outcome(res);
  if (o.to !== "callback") throw new Error(`not signed in: ${o.error}`);
  return o.url;
}

const SCENARIOS: Record<string, () => Promise<Record<string, unknown>>> = {
  Password: async () => {
    const r = await signIn(h, plain, { ...SPA, ...person("pwd") });
    return idToken(plain, r, r.callback);
  },
  "Email code": async () => {
    const r = await signInWithEmailCode(h, plain, { ...SPA, email: person("otp").email });
    return idToken(plain, r, r.callback!);
  },
  Passkey: async () => {
    const authenticator = new SoftAuthenticator();
    await authenticator.enrol(h, plain, await userIdOf(h, plain, person("passkey").email), "passkey");
    const s = await startSignIn(h, plain, SPA);
    return idToken(plain, s, callbackOf(await postPasskey(h, s, authenticator)));
  },
  "Password and authenticator app": async () => {
    const { seed: key } = await giveTotp(h, mfa, person("totp").email);
    const r = await signInWithTotp(h, mfa, { ...SPA, ...person("totp"), seed: key });
    return idToken(mfa, r, r.callback);
  },
  "Password and recovery code": async () => {
    await giveTotp(h, mfa, person("recovery").email);
    const [code] = await giveRecoveryCodes(h, mfa, person("recovery").email);
    const r = await signInWithRecoveryCode(h, mfa, { ...SPA, ...person("recovery"), code });
    return idToken(mfa, r, r.callback);
  },
  "Password and security key": async () => {
    const key = new SoftAuthenticator({ uv: false });
    await key.enrol(h, mfa, await userIdOf(h, mfa, person("key").email), "security_key");
    const s = await passwordStep(h, mfa, { ...SPA, ...person("key") });
    return idToken(mfa, s, callbackOf(await postSecondFactorKey(h, s, key)));
  },
  "Email code and password": async () => {
    // An authenticator app is enrolled, but after an email code only the password makes the sign-in multi-factor.
    await giveTotp(h, mfa, person("otp-pwd").email);
    const r = await signInWithEmailCode(h, mfa, { ...SPA, email: person("otp-pwd").email });
    expect(r.callback).toBeNull();
    const s: PendingSignIn = r;
    return idToken(mfa, s, callbackOf(await postPassword(h, s, person("otp-pwd").email, PASSWORD)));
  },
};

/** The `#### <title>` examples of the docs' token section, each with its JSON block. */
function documentedExamples(): Map<string, Record<string, unknown>> {
  const text = readFileSync(new URL("../../../docs/sign-in.md", import.meta.url), "utf8");
  const section = text.slice(text.indexOf("## What the tokens say"));
  const examples = new Map<string, Record<string, unknown>>();
  for (const m of section.matchAll(/^#### (.+)\n[\s\S]*?```json\n([\s\S]*?)\n```/gm)) examples.set(m[1].trim(), JSON.parse(m[2]));
  return examples;
}

describe("the documented ID token of each way to sign in", () => {
  const examples = documentedExamples();

  it("documents every way, and nothing else", () => {
    expect([...examples.keys()].sort()).toEqual(Object.keys(SCENARIOS).sort());
  });

  for (const [title, run] of Object.entries(SCENARIOS)) {
    it(title, async () => {
      const doc = examples.get(title)!;
      const token = await run();
      expect(Object.keys(token).sort()).toEqual(Object.keys(doc).sort());
      expect({ amr: token.amr, acr: token.acr }).toEqual({ amr: doc.amr, acr: doc.acr });
    });
  }
});

describe("a step at the second-factor page acts only as offered", () => {
  it("refuses an authenticator code after an email code (two possession factors are not MFA)", async () => {
    const { seed: key } = await giveTotp(h, mfa, "pwd@example.test");
    const r = await signInWithEmailCode(h, mfa, { ...SPA, email: "pwd@example.test" });
    expect((await viewOf(h, r)).step).toEqual({ kind: "second_factor", options: ["password"] });
    const o = outcome(await postStep(h, r, "/sign-in/totp", { code: codeAt(h, key) }));
    expect(o).toEqual({ to: "page", error: null });
    expect((await viewOf(h, r)).step.kind).toBe("second_factor");
  });
});
