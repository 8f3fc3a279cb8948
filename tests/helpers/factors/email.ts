/**
 * Email codes in tests: a harness whose mail goes to the development outbox, the code read back
 * from it, and a sign-in or sign-up driven through the code without the forms.
 */
import type { MailSettings } from "../../../lib/config";
import { listOutbox, type OutboxMessage } from "../../../lib/authn/email/outbox";
import { mailSettled } from "../../../lib/authn/email/transport";
import { Jar, type AuthorizeParams, type Harness } from "../harness";
import { outcome, postStep, startSignIn, workspaceContext, type PendingSignIn } from "./sign-in";

/** createHarness({ mail: OUTBOX }): the test harness's https PUBLIC_URL would otherwise make email unavailable. */
export const OUTBOX: MailSettings = { transport: "outbox", from: "Latchkey <no-reply@auth.example.test>" };

/** The messages sent to `address`, newest first, once every send in flight has finished. */
export async function outboxFor(h: Harness, workspaceId: string, address: string): Promise<OutboxMessage[]> {
  await mailSettled();
  return listOutbox(await workspaceContext(h, workspaceId), { recipient: address.toLowerCase() });
}

/** The code in the newest message to `address` (the subject's first word), or null when none was sent or it has none. */
export async function latestCode(h: Harness, workspaceId: string, address: string): Promise<string | null> {
  const [message] = await outboxFor(h, workspaceId, address);
  return message ? (/^(\d{6}) /.exec(message.subject)?.[1] ?? null) : null;
}

/** "Email me a code" on the sign-in's first step. */
export function requestSignInCode(h: Harness, s: PendingSignIn, email: string, headers: Record<string, string> = {}): Promise<Response> {
  return postStep(h, s, "/sign-in/email", { email }, { headers });
}

/** The code step's form. */
export function enterSignInCode(h: Harness, s: PendingSignIn, code: string, headers: Record<string, string> = {}): Promise<Response> {
  return postStep(h, s, "/sign-in/email/verify", { code }, { headers });
}

/** authorize, "Email me a code", the code from the outbox: the sign-in stands at the next step, or completed (`callback`). */
export async function signInWithEmailCode(
  h: Harness,
  workspaceId: string,
  p: AuthorizeParams & { email: string },
  jar = new Jar(),
): Promise<PendingSignIn & { callback: URL | null }> {
  const s = await startSignIn(h, workspaceId, p, jar);
  const sent = outcome(await requestSignInCode(h, s, p.email));
  if (sent.to !== "page" || sent.error) throw new Error(`code request: ${sent.to === "page" ? sent.error : "completed"}`);
  const code = await latestCode(h, workspaceId, p.email);
  if (!code) throw new Error(`no code was sent to ${p.email}`);
  const o = outcome(await enterSignInCode(h, s, code));
  if (o.to === "page" && o.error) throw new Error(`email code refused: ${o.error}`);
  return { ...s, callback: o.to === "callback" ? o.url : null };
}

/** Sign-up through the code and a password (the application's policy must allow sign-up); returns where the sign-in went. */
export async function signUpWithPassword(
  h: Harness,
  workspaceId: string,
  p: AuthorizeParams & { email: string; password: string },
  jar = new Jar(),
): Promise<PendingSignIn & { callback: URL | null }> {
  const s = await startSignIn(h, workspaceId, p, jar);
  const sent = outcome(await postStep(h, s, "/sign-up/email", { email: p.email }));
  if (sent.to !== "page" || sent.error) throw new Error(`sign-up code request: ${sent.to === "page" ? sent.error : "completed"}`);
  const code = await latestCode(h, workspaceId, p.email);
  if (!code) throw new Error(`no code was sent to ${p.email}`);
  const verified = outcome(await postStep(h, s, "/sign-up/verify", { code }));
  if (verified.to !== "page" || verified.error) throw new Error(`sign-up code: ${verified.to === "page" ? verified.error : "completed"}`);
  const o = outcome(await postStep(h, s, "/sign-up/account", { credential: "password", password: p.password }));
  if (o.to === "page" && o.error) throw new Error(`sign-up refused: ${o.error}`);
  return { ...s, callback: o.to === "callback" ? o.url : null };
}
