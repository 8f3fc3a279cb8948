"use server";

// "Your account": adapt FormData and cookies. The rules live in lib/console/operator-accounts.ts.
import { redirect } from "next/navigation";
import { revalidatePath } from "next/cache";
import type { ActionState } from "@/lib/forms/action-state";
import { ConsoleAccessError } from "@/lib/console/authz";
import { formDataObject } from "@/lib/console/forms";
import { AccountError, endOwnSession, setOwnPassword } from "@/lib/console/operator-accounts";
import { getService } from "@/lib/service";
import { consoleToken, requestIp, signInPath } from "../../_lib/session";

const text = (raw: Record<string, string | string[]>, name: string) => (typeof raw[name] === "string" ? (raw[name] as string) : undefined);

/** Sets or changes the signed-in operator's own password. */
export async function setPasswordAction(_previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  try {
    await setOwnPassword(
      await getService(),
      await consoleToken(),
      { current: text(raw, "current"), password: text(raw, "password") ?? "", password_confirm: text(raw, "password_confirm") ?? "" },
      { ip: await requestIp() },
    );
    revalidatePath("/console/account");
    return { status: "ok", at: Date.now() };
  } catch (error) {
    if (error instanceof AccountError) {
      return error.field ? { status: "error", fieldErrors: { [error.field]: error.message }, at: Date.now() } : { status: "error", fieldErrors: {}, formError: error.message, at: Date.now() };
    }
    if (error instanceof ConsoleAccessError) redirect(signInPath("/console/account"));
    throw error;
  }
}

/** Ends one of the operator's console sessions. */
export async function endSessionAction(_previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  try {
    const ended = await endOwnSession(await getService(), await consoleToken(), text(raw, "session_id") ?? "");
    revalidatePath("/console/account");
    return ended ? { status: "ok", at: Date.now() } : { status: "error", fieldErrors: {}, formError: "This session has already ended.", at: Date.now() };
  } catch (error) {
    if (error instanceof ConsoleAccessError) redirect(signInPath("/console/account"));
    throw error;
  }
}
