"use server";
import { PasswordRefused } from "@/lib/authn/passwords/screening";

import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { echoValues, type ActionState } from "@/lib/forms/action-state";
import { formDataObject } from "@/lib/console/forms";
import { completeSetup, SetupError, setupInputSchema, startOperatorSession } from "@/lib/console/setup";
import { getService } from "@/lib/service";
import { requestIp } from "../../_lib/session";

/** Creates the first operator; the token travels in the form (it was in the printed link). */
export async function setupAction(_previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  const values = echoValues(raw);
  const parsed = setupInputSchema.safeParse(raw);
  if (!parsed.success) {
    const fieldErrors: Record<string, string> = {};
    for (const issue of parsed.error.issues) fieldErrors[String(issue.path[0])] ??= issue.message;
    return { status: "error", fieldErrors, values, at: Date.now() };
  }
  if (raw.password !== raw.password_confirm) {
    return { status: "error", fieldErrors: { password_confirm: "The passwords do not match" }, values, at: Date.now() };
  }
  const service = await getService();
  const ip = await requestIp();
  let created;
  try {
    created = await completeSetup(service, typeof raw.token === "string" ? raw.token : "", parsed.data, { ip });
  } catch (error) {
    if (error instanceof SetupError) return { status: "error", fieldErrors: {}, formError: error.message, values, at: Date.now() };
    if (error instanceof PasswordRefused) return { status: "error", fieldErrors: { password: error.message }, values, at: Date.now() };
    throw error;
  }
  // The operator is signed in (lib/console/setup.ts says why): a hosted session for them in this
  // browser, then (./continue) the console's ordinary sign-in, which finds it and comes straight back.
  const session = await startOperatorSession(service, created, { ip, userAgent: (await headers()).get("user-agent") });
  (await cookies()).set(session.name, session.value, { path: session.path, maxAge: session.maxAgeSeconds, httpOnly: true, secure: true, sameSite: "lax" });
  redirect("/console/setup/continue");
}
