"use server";

// The branding page's server actions: each runs one operation of lib/console/branding.ts through
// runOperation (role, validation, one audit event). The logo upload is here rather than in the
// console's shared action because it carries a file, not form text.
import { revalidatePath } from "next/cache";
import { echoValues, type ActionState } from "@/lib/forms/action-state";
import { ConsoleAccessError } from "@/lib/console/authz";
import { removeLogo, setBranding, setLogo } from "@/lib/console/branding";
import { formDataObject } from "@/lib/console/forms";
import { runOperation } from "@/lib/console/operation";
import { getService } from "@/lib/service";
import { consoleToken, handleAccessError, requestIp } from "../../../../_lib/session";

const OPERATIONS = { setBranding, setLogo, removeLogo } as const;

async function run(name: keyof typeof OPERATIONS, workspaceId: string, input: Record<string, unknown>, values: Record<string, string | string[]>): Promise<ActionState> {
  let outcome;
  try {
    outcome = await runOperation(await getService(), await consoleToken(), workspaceId, OPERATIONS[name] as typeof setBranding, input, { ip: await requestIp() });
  } catch (error) {
    if (error instanceof ConsoleAccessError && error.code === "forbidden") return { status: "error", fieldErrors: {}, formError: error.message, values, at: Date.now() };
    handleAccessError(error, `/console/w/${workspaceId}/branding`);
  }
  if (!outcome.ok) return { status: "error", fieldErrors: outcome.fieldErrors, formError: outcome.formError, values, at: Date.now() };
  revalidatePath(`/console/w/${workspaceId}/branding`);
  return { status: "ok", result: outcome.result, at: Date.now() };
}

export async function saveBrandingAction(workspaceId: string, _previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  return run("setBranding", workspaceId, raw, echoValues(raw));
}

export async function uploadLogoAction(workspaceId: string, _previous: ActionState, form: FormData): Promise<ActionState> {
  const file = form.get("logo");
  // No file chosen: the browser still sends an empty part.
  const logo = file instanceof File && file.size > 0 ? new Uint8Array(await file.arrayBuffer()) : undefined;
  return run("setLogo", workspaceId, { logo }, {});
}

export async function removeLogoAction(workspaceId: string): Promise<ActionState> {
  return run("removeLogo", workspaceId, {}, {});
}
