/** Recovery codes in tests: give a user a set (returns the codes in clear) and sign in with one. */
import { generateRecoveryCodes } from "../../../lib/authn/factors/recovery-codes";
import { Jar, type AuthorizeParams, type Harness } from "../harness";
import { outcome, passwordStep, postStep, userIdOf, workspaceContext, type PendingSignIn } from "./sign-in";

export async function giveRecoveryCodes(h: Harness, workspaceId: string, email: string): Promise<string[]> {
  return generateRecoveryCodes(await workspaceContext(h, workspaceId), await userIdOf(h, workspaceId, email), { ip: null, context: {} });
}

/** Signs in with the password and a recovery code (the user must have a second factor, so the step offers codes). */
export async function signInWithRecoveryCode(
  h: Harness,
  workspaceId: string,
  p: AuthorizeParams & { email: string; password: string; code: string },
  jar = new Jar(),
): Promise<PendingSignIn & { callback: URL }> {
  const s = await passwordStep(h, workspaceId, p, jar);
  const o = outcome(await postStep(h, s, "/sign-in/recovery-code", { code: p.code }));
  if (o.to !== "callback") throw new Error(`recovery code refused: ${o.error}`);
  return { ...s, callback: o.url };
}
