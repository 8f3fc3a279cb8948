"use server";
import { PasswordRefused } from "@/lib/authn/passwords/screening";

// The invitation page's actions: adapt FormData, cookies and navigation. The rules (the code sent
// to the invited address, single use, expiry, whose email) live in lib/operators/invitations.ts.
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { echoValues, type ActionState } from "@/lib/forms/action-state";
import { ConsoleAccessError, requireOperator } from "@/lib/console/authz";
import { formDataObject } from "@/lib/console/forms";
import {
  acceptInvitationAsOperator,
  acceptInvitationInput,
  acceptInvitationWithNewAccount,
  acceptInvitationWithProof,
  INVITATION_PROOF_TTL_MS,
  InvitationError,
  proveInvitationMailbox,
  sendInvitationCode,
  type Accepted,
} from "@/lib/operators/invitations";
import { startOperatorSession } from "@/lib/console/setup";
import { getService } from "@/lib/service";
import { consoleToken, requestIp, signInPath } from "../../_lib/session";
import { INVITATION_COOKIE, INVITATION_COOKIE_PATH, INVITATION_PAGE, INVITATION_PROOF_COOKIE } from "./cookie";
import { EMAIL_CODE_EVIDENCE } from "@/lib/authn/factors/email-code/evidence";

const tokenOf = (raw: Record<string, string | string[]>) => (typeof raw.token === "string" ? raw.token : "");

const failed = (error: InvitationError, values?: Record<string, string | string[]>): ActionState => ({ status: "error", fieldErrors: {}, formError: error.message, values, at: Date.now() });

/** The request as the email-code factor's limits read it (client address, this browser's hosted session). */
async function currentRequest(): Promise<Request> {
  const service = await getService();
  return new Request(`${service.config.publicUrl}${INVITATION_PAGE}`, { headers: new Headers(await headers()) });
}

/** Sends a one-time code to the invited address. */
export async function sendCodeAction(_previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  try {
    await sendInvitationCode(await getService(), await currentRequest(), tokenOf(raw));
  } catch (error) {
    if (error instanceof InvitationError) return failed(error);
    throw error;
  }
  return { status: "ok", message: "A code is on its way to the invited address. Enter it below.", at: Date.now() };
}

/** Checks the code; a right one proves the mailbox, and this browser keeps the proof. */
export async function verifyCodeAction(_previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  let proof: string;
  try {
    proof = await proveInvitationMailbox(await getService(), await currentRequest(), tokenOf(raw), typeof raw.code === "string" ? raw.code : null);
  } catch (error) {
    if (error instanceof InvitationError) return { status: "error", fieldErrors: error.code.startsWith("code_") ? { code: error.message } : {}, formError: error.code.startsWith("code_") ? undefined : error.message, at: Date.now() };
    throw error;
  }
  const jar = await cookies();
  jar.set(INVITATION_PROOF_COOKIE, proof, { path: INVITATION_COOKIE_PATH, maxAge: INVITATION_PROOF_TTL_MS / 1000, httpOnly: true, secure: true, sameSite: "lax" });
  // The link's secret too, so that the page finds the invitation without the query.
  jar.set(INVITATION_COOKIE, tokenOf(raw), { path: INVITATION_COOKIE_PATH, maxAge: INVITATION_PROOF_TTL_MS / 1000, httpOnly: true, secure: true, sameSite: "lax" });
  redirect(INVITATION_PAGE);
}

/** After accepting: a hosted session for the operator in this browser (they just proved the mailbox), then the console's ordinary sign-in finds it. */
async function signInAfterAccepting(accepted: Accepted, ip: string | null): Promise<never> {
  const service = await getService();
  const session = await startOperatorSession(service, accepted, { ip, userAgent: (await headers()).get("user-agent") }, EMAIL_CODE_EVIDENCE.method);
  const jar = await cookies();
  jar.set(session.name, session.value, { path: session.path, maxAge: session.maxAgeSeconds, httpOnly: true, secure: true, sameSite: "lax" });
  jar.delete({ name: INVITATION_COOKIE, path: INVITATION_COOKIE_PATH });
  jar.delete({ name: INVITATION_PROOF_COOKIE, path: INVITATION_COOKIE_PATH });
  const query = new URLSearchParams({ workspace: accepted.workspaceId });
  // A password set before the proof was discarded: the person sets their own (or goes on without).
  if (accepted.passwordDiscarded) query.set("account", "1");
  redirect(`${INVITATION_PAGE}/continue?${query}`);
}

/** Creates the invited operator's account with their own name and password (or none), then signs them in. */
export async function acceptWithNewAccountAction(_previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  const values = echoValues(raw);
  const parsed = acceptInvitationInput.safeParse(raw);
  if (!parsed.success) {
    const fieldErrors: Record<string, string> = {};
    for (const issue of parsed.error.issues) fieldErrors[String(issue.path[0])] ??= issue.message;
    return { status: "error", fieldErrors, values, at: Date.now() };
  }
  if ((raw.password ?? "") !== (raw.password_confirm ?? "")) return { status: "error", fieldErrors: { password_confirm: "The passwords do not match" }, values, at: Date.now() };
  const service = await getService();
  const ip = await requestIp();
  let accepted;
  try {
    accepted = await acceptInvitationWithNewAccount(service, tokenOf(raw), (await cookies()).get(INVITATION_PROOF_COOKIE)?.value, parsed.data, { ip });
  } catch (error) {
    if (error instanceof InvitationError) return failed(error, values);
    if (error instanceof PasswordRefused) return { status: "error", fieldErrors: { password: error.message }, values, at: Date.now() };
    throw error;
  }
  return signInAfterAccepting(accepted, ip);
}

/** Accepts with the existing operator account of the proven address. */
export async function acceptWithProofAction(_previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  const ip = await requestIp();
  let accepted;
  try {
    accepted = await acceptInvitationWithProof(await getService(), tokenOf(raw), (await cookies()).get(INVITATION_PROOF_COOKIE)?.value, { ip });
  } catch (error) {
    if (error instanceof InvitationError) return failed(error);
    throw error;
  }
  return signInAfterAccepting(accepted, ip);
}

/** Accepts as the operator signed in to the console (their email must be the invited one). */
export async function acceptAsOperatorAction(_previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  let accepted;
  try {
    const service = await getService();
    const operator = await requireOperator(service, await consoleToken());
    accepted = await acceptInvitationAsOperator(service, tokenOf(raw), operator, { ip: await requestIp() });
  } catch (error) {
    if (error instanceof InvitationError) return failed(error);
    if (error instanceof ConsoleAccessError) redirect(signInPath(INVITATION_PAGE));
    throw error;
  }
  (await cookies()).delete({ name: INVITATION_COOKIE, path: INVITATION_COOKIE_PATH });
  redirect(`/console/w/${encodeURIComponent(accepted.workspaceId)}`);
}
