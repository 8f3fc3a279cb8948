"use server";

// The console's one server action: every form names an operation (lib/console/registry.ts) and
// its workspace. runOperation authorizes (current authority, role), validates and audits; this
// file only adapts FormData, cookies and Next's navigation.
import { revalidatePath } from "next/cache";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { echoValues, type ActionState } from "@/lib/forms/action-state";
import { ConsoleAccessError } from "@/lib/console/authz";
import { formDataObject } from "@/lib/console/forms";
import { runOperation } from "@/lib/console/operation";
import { isOperationName, operations, type OperationName } from "@/lib/console/registry";
import { createWorkspace } from "@/lib/console/workspaces";
import { prefillConnection } from "@/lib/console/organizations";
import { getService } from "@/lib/service";
import { consoleToken, handleAccessError, requestIp } from "./session";

/** Where to go after some operations succeed (otherwise the page re-renders in place). */
const afterSuccess: Partial<Record<OperationName, (workspaceId: string, result: never) => string | null>> = {
  createApplication: (ws, r: { clientId: string; secret: unknown }) => (r.secret ? null : `/console/w/${ws}/applications/${encodeURIComponent(r.clientId)}`),
  createApi: (ws, r: { id: string }) => `/console/w/${ws}/apis/${r.id}`,
  createRole: (ws, r: { id: string }) => `/console/w/${ws}/roles/${r.id}`,
  deleteRole: (ws) => `/console/w/${ws}/roles`,
  deleteApplication: (ws) => `/console/w/${ws}/applications`,
  deleteApi: (ws) => `/console/w/${ws}/apis`,
  deleteWorkspace: () => "/console",
  createUser: (ws, r: { id: string }) => `/console/w/${ws}/users/${r.id}`,
  deleteUser: (ws) => `/console/w/${ws}/users`,
  createOrganization: (ws, r: { id: string }) => `/console/w/${ws}/organizations/${r.id}`,
  // A new connection: to its own form on the organization's page, which says it was added.
  saveConnection: (ws, r: { id: string; organizationId: string; created: boolean }) =>
    r.created ? `/console/w/${ws}/organizations/${r.organizationId}?added=${encodeURIComponent(r.id)}#connection-${r.id}` : null,
};

type Refusable = { ok: true } | { ok: false; fieldErrors: Record<string, string>; formError?: string };

/**
 * Runs a workspace's console work for a form: a refusal (a forbidden role, the input's problems)
 * becomes the form's error state with what was typed; a lost session or an unknown workspace goes
 * to Next's sign-in redirect or not-found (handleAccessError).
 */
async function inWorkspace<O extends Refusable>(workspaceId: string, values: Record<string, string | string[]>, run: () => Promise<O>): Promise<Extract<O, { ok: true }> | { ok: false; refused: ActionState }> {
  let outcome: O;
  try {
    outcome = await run();
  } catch (error) {
    if (error instanceof ConsoleAccessError && error.code === "forbidden") {
      return { ok: false, refused: { status: "error", fieldErrors: {}, formError: error.message, values, at: Date.now() } };
    }
    handleAccessError(error, `/console/w/${workspaceId}`);
  }
  if (!outcome.ok) return { ok: false, refused: { status: "error", fieldErrors: outcome.fieldErrors, formError: outcome.formError, values, at: Date.now() } };
  return outcome as Extract<O, { ok: true }>;
}

export async function consoleAction(name: string, workspaceId: string, _previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  const values = echoValues(raw);
  if (!isOperationName(name)) return { status: "error", fieldErrors: {}, formError: "Unknown action", values, at: Date.now() };
  const outcome = await inWorkspace(workspaceId, values, async () =>
    runOperation(await getService(), await consoleToken(), workspaceId, operations[name] as (typeof operations)["createRole"], raw, { ip: await requestIp() }),
  );
  if (!outcome.ok) return outcome.refused;
  revalidatePath("/console", "layout");
  const next = afterSuccess[name]?.(workspaceId, outcome.result as never);
  if (next) redirect(next);
  return { status: "ok", result: outcome.result, at: Date.now() };
}

export async function createWorkspaceAction(_previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  let outcome;
  try {
    outcome = await createWorkspace(await getService(), await consoleToken(), raw, { ip: await requestIp() });
  } catch (error) {
    if (error instanceof ConsoleAccessError && error.code === "forbidden") {
      return { status: "error", fieldErrors: {}, formError: error.message, values: echoValues(raw), at: Date.now() };
    }
    handleAccessError(error);
  }
  if (!outcome.ok) return { status: "error", fieldErrors: outcome.fieldErrors, values: echoValues(raw), at: Date.now() };
  revalidatePath("/console", "layout");
  redirect(`/console/w/${outcome.result.id}`);
}

/**
 * Tries an application's sign-in (lib/getting-started/try-sign-in.ts): the operation opens the
 * hosted sign-in; this sets its two cookies (the transaction's under the issuer, the console's copy
 * under /console) and sends the browser to the hosted page.
 */
export async function trySignInAction(workspaceId: string, _previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  const outcome = await inWorkspace(workspaceId, echoValues(raw), async () =>
    runOperation(await getService(), await consoleToken(), workspaceId, operations.trySignIn, raw, { ip: await requestIp() }),
  );
  if (!outcome.ok) return outcome.refused;
  const jar = await cookies();
  for (const cookie of outcome.result.cookies) {
    jar.set(cookie.name, cookie.value, { path: cookie.path, maxAge: cookie.maxAge, secure: true, httpOnly: true, sameSite: "lax" });
  }
  redirect(outcome.result.location);
}

/**
 * Tests an enterprise connection (lib/federation/connection-test): the operation starts the round
 * trip; this sets its browser-binding cookie (under the callback's path) and sends the browser to
 * the identity provider.
 */
export async function testConnectionAction(workspaceId: string, _previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  const outcome = await inWorkspace(workspaceId, echoValues(raw), async () =>
    runOperation(await getService(), await consoleToken(), workspaceId, operations.testConnection, raw, { ip: await requestIp() }),
  );
  if (!outcome.ok) return outcome.refused;
  const { cookie, location } = outcome.result;
  (await cookies()).set(cookie.name, cookie.value, { path: cookie.path, maxAge: cookie.maxAge, secure: true, httpOnly: true, sameSite: "lax" });
  redirect(location);
}

/**
 * The connection form's action: its "read metadata" button (`intent=prefill`) fills fields in
 * without saving (the fields then show what was read); any other submission saves.
 */
export async function connectionAction(workspaceId: string, previous: ActionState, form: FormData): Promise<ActionState> {
  if (form.get("intent") !== "prefill") return consoleAction("saveConnection", workspaceId, previous, form);
  const raw = formDataObject(form);
  const values = echoValues(raw);
  const outcome = await inWorkspace(workspaceId, values, async () => prefillConnection(await getService(), await consoleToken(), workspaceId, raw));
  if (!outcome.ok) return outcome.refused;
  return { status: "draft", message: outcome.message, values: { ...values, ...outcome.values }, at: Date.now() };
}
