"use server";

// The admin portal's server actions: every change names a console operation the portal runs
// (lib/organizations/admin-portal/operations.ts). The person's access is resolved for each
// request from their cookies (a setup link's session, or an organization administrator's hosted
// session); runPortalOperation scopes the change to the portal's organization and records it
// under them. This file only adapts FormData, headers and Next's cache.
import { revalidatePath } from "next/cache";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { echoValues, type ActionState } from "@/lib/forms/action-state";
import { formDataObject } from "@/lib/console/forms";
import { readConnectionFields } from "@/lib/console/organizations";
import { operations } from "@/lib/console/registry";
import { clientAddressOf } from "@/lib/http/client-address";
import { isPortalOperationName, portalEntry, runPortalOperation, type PortalAccess } from "@/lib/organizations/admin-portal";
import { requestContext } from "@/lib/server/router";
import { getService } from "@/lib/service";

const ended = (values: Record<string, string | string[]>): ActionState => ({
  status: "error",
  fieldErrors: {},
  formError: "Your access to this portal has ended: open a new setup link, or sign in again.",
  values,
  at: Date.now(),
});

/** The portal this request is in (the organization chosen by an administrator of several), or null. */
async function currentAccess(tenant: string, organization: string | null): Promise<{ access: PortalAccess; ip: string | null } | null> {
  const service = await getService();
  const h = await headers();
  const ctx = await requestContext(service, h, tenant);
  if (!ctx) return null;
  const entry = await portalEntry(ctx, h.get("cookie"), organization);
  return entry.kind === "portal" ? { access: entry.access, ip: clientAddressOf(h, service.config.trustProxy) } : null;
}

export async function portalAction(tenant: string, organization: string | null, name: string, _previous: ActionState, form: FormData): Promise<ActionState> {
  const raw = formDataObject(form);
  const values = echoValues(raw);
  if (!isPortalOperationName(name)) return { status: "error", fieldErrors: {}, formError: "Unknown action", values, at: Date.now() };
  const current = await currentAccess(tenant, organization);
  if (!current) return ended(values);
  const outcome = await runPortalOperation(await getService(), current.access, name, operations[name], raw, { ip: current.ip });
  if (!outcome.ok) return { status: "error", fieldErrors: outcome.fieldErrors, formError: outcome.formError, values, at: Date.now() };
  revalidatePath(`/t/${tenant}/organization-admin`);
  return { status: "ok", result: outcome.result, at: Date.now() };
}

/** The connection form's action: "read metadata" (`intent=prefill`) fills fields in without saving; any other submission saves. */
export async function portalConnectionAction(tenant: string, organization: string | null, previous: ActionState, form: FormData): Promise<ActionState> {
  if (form.get("intent") !== "prefill") return portalAction(tenant, organization, "saveConnection", previous, form);
  const raw = formDataObject(form);
  const values = echoValues(raw);
  if (!(await currentAccess(tenant, organization))) return ended(values);
  const outcome = await readConnectionFields(await getService(), raw);
  if (!outcome.ok) return { status: "error", fieldErrors: outcome.fieldErrors, formError: outcome.formError, values, at: Date.now() };
  return { status: "draft", message: outcome.message, values: { ...values, ...outcome.values }, at: Date.now() };
}

/** "Test the connection": starts the test (the portal's operation), sets its cookie and sends the browser to the identity provider. */
export async function portalTestConnectionAction(tenant: string, organization: string | null, previous: ActionState, form: FormData): Promise<ActionState> {
  const state = await portalAction(tenant, organization, "testConnection", previous, form);
  if (state.status !== "ok") return state;
  const { cookie, location } = state.result as { cookie: { name: string; value: string; path: string; maxAge: number }; location: string };
  (await cookies()).set(cookie.name, cookie.value, { path: cookie.path, maxAge: cookie.maxAge, secure: true, httpOnly: true, sameSite: "lax" });
  redirect(location);
}
