"use server";

// The invitation page's actions: adapt FormData, cookies and navigation. The rules (single use,
// expiry, whose email) live in lib/console/invitations.ts.
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { echoValues, type ActionState } from "@/lib/forms/action-state";
import { ConsoleAccessError } from "@/lib/console/authz";
import { formDataObject } from "@/lib/console/forms";
import { acceptInvitationAsOperator, acceptInvitationInput, acceptInvitationWithNewAccount, InvitationError } from "@/lib/console/invitations";
import { startOperatorSession } from "@/lib/console/setup";
import { getService } from "@/lib/service";
import { consoleToken, requestIp, signInPath } from "../../_lib/session";
import { INVITATION_COOKIE, INVITATION_COOKIE_PATH, INVITATION_PAGE } from "./cookie";

const tokenOf = (raw: Record<string, string | string[]>) => (typeof raw.token === "string" ? raw.token : "");

/** Creates the invited operator's account with their own name and password, then signs them in. */
export async function acceptWithNewAccountAction(_previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  const values = echoValues(raw);
  const parsed = acceptInvitationInput.safeParse(raw);
  if (!parsed.success) {
    const fieldErrors: Record<string, string> = {};
    for (const issue of parsed.error.issues) fieldErrors[String(issue.path[0])] ??= issue.message;
    return { status: "error", fieldErrors, values, at: Date.now() };
  }
  if (raw.password !== raw.password_confirm) return { status: "error", fieldErrors: { password_confirm: "The passwords do not match" }, values, at: Date.now() };
  const service = await getService();
  const ip = await requestIp();
  let accepted;
  try {
    accepted = await acceptInvitationWithNewAccount(service, tokenOf(raw), parsed.data, { ip });
  } catch (error) {
    if (error instanceof InvitationError) return { status: "error", fieldErrors: {}, formError: error.message, values, at: Date.now() };
    throw error;
  }
  // As after setup: a hosted session for the new operator in this browser, then the console's ordinary sign-in finds it.
  const session = await startOperatorSession(service, accepted, { ip, userAgent: (await headers()).get("user-agent") });
  const jar = await cookies();
  jar.set(session.name, session.value, { path: session.path, maxAge: session.maxAgeSeconds, httpOnly: true, secure: true, sameSite: "lax" });
  jar.delete({ name: INVITATION_COOKIE, path: INVITATION_COOKIE_PATH });
  redirect(`${INVITATION_PAGE}/continue?workspace=${encodeURIComponent(accepted.workspaceId)}`);
}

/** Accepts as the operator signed in to the console (their email must be the invited one). */
export async function acceptAsOperatorAction(_previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  let accepted;
  try {
    accepted = await acceptInvitationAsOperator(await getService(), tokenOf(raw), await consoleToken(), { ip: await requestIp() });
  } catch (error) {
    if (error instanceof InvitationError) return { status: "error", fieldErrors: {}, formError: error.message, at: Date.now() };
    if (error instanceof ConsoleAccessError) redirect(signInPath(INVITATION_PAGE));
    throw error;
  }
  (await cookies()).delete({ name: INVITATION_COOKIE, path: INVITATION_COOKIE_PATH });
  redirect(`/console/w/${encodeURIComponent(accepted.workspaceId)}`);
}

/**
 * Sign in first, then come back: the link's secret waits in an HttpOnly cookie of this page
 * rather than in the sign-in's return address (which the server keeps while the sign-in runs).
 */
export async function signInToAcceptAction(_previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  (await cookies()).set(INVITATION_COOKIE, tokenOf(raw), { path: INVITATION_COOKIE_PATH, maxAge: 3600, httpOnly: true, secure: true, sameSite: "lax" });
  redirect(signInPath(INVITATION_PAGE));
}
