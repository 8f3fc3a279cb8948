/**
 * Authenticator apps in tests: give a user a confirmed factor with a known seed, compute its codes
 * at the harness clock, and drive a sign-in through the password and the code without the forms.
 */
import { Secret } from "otpauth";
import { totpFactors } from "../../../db/schema";
import { encryptSecret, newId } from "../../../lib/crypto";
import { stepAt, totpCode } from "../../../lib/authn/factors/totp";
import { Jar, type AuthorizeParams, type Harness } from "../harness";
import { outcome, passwordStep, postStep, userIdOf, type PendingSignIn } from "./sign-in";

/** A confirmed authenticator app for the user, as enrolment leaves it (no step used yet): returns its id and seed. */
export async function giveTotp(h: Harness, workspaceId: string, email: string): Promise<{ factorId: string; seed: string }> {
  const seed = new Secret({ size: 20 }).base32;
  const factorId = newId();
  const now = h.clock.now();
  await h.service.db.insert(totpFactors).values({
    id: factorId,
    workspaceId,
    userId: await userIdOf(h, workspaceId, email),
    secretEncrypted: encryptSecret(h.service.config.masterKey, seed, "totp-seed"),
    name: "Authenticator app",
    createdAt: now,
    confirmedAt: now,
  });
  return { factorId, seed };
}

/** The code of `seed` at the harness clock, `offset` steps away. */
export function codeAt(h: Harness, seed: string, offset = 0): string {
  return totpCode(seed, stepAt(h.clock.now()) + offset);
}

/** Signs in with the password and the authenticator code of `seed` at the harness clock; returns the callback. */
export async function signInWithTotp(
  h: Harness,
  workspaceId: string,
  p: AuthorizeParams & { email: string; password: string; seed: string },
  jar = new Jar(),
): Promise<PendingSignIn & { callback: URL }> {
  const s = await passwordStep(h, workspaceId, p, jar);
  const o = outcome(await postStep(h, s, "/sign-in/totp", { code: codeAt(h, p.seed) }));
  if (o.to !== "callback") throw new Error(`authenticator code refused: ${o.error}`);
  return { ...s, callback: o.url };
}
