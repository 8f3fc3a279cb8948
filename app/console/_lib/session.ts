// The console's adapter to Next: reads the session cookie and the client address, and maps
// ConsoleAccessError to Next's redirect() and notFound(). The rules live in lib/console/authz.ts.
import { cookies, headers } from "next/headers";
import { notFound, redirect } from "next/navigation";
import { cache } from "react";
import { ConsoleAccessError, CONSOLE_SESSION_COOKIE, requireOperator, requireWorkspaceRole, roleAtLeast, type Operator, type OperatorRole, type WorkspaceAccess } from "@/lib/console/authz";
import { getService } from "@/lib/service";
import { clientAddressOf } from "@/lib/http/client-address";

export const consoleToken = cache(async (): Promise<string | null> => (await cookies()).get(CONSOLE_SESSION_COOKIE)?.value ?? null);

export async function requestIp(): Promise<string | null> {
  const [h, service] = await Promise.all([headers(), getService()]);
  return clientAddressOf(h, service.config.trustProxy);
}

/** A page (not the start route itself), so redirects during client-side navigation work too. */
export function signInPath(next?: string): string {
  return next ? `/console/sign-in?next=${encodeURIComponent(next)}` : "/console/sign-in";
}

/** Maps an access failure to Next: sign in again, or a not-found page. Forbidden is left to the caller. */
export function handleAccessError(error: unknown, next?: string): never {
  if (error instanceof ConsoleAccessError) {
    if (error.code === "unauthenticated") redirect(signInPath(next));
    if (error.code === "not_found") notFound();
  }
  throw error;
}

const resolveOperator = cache(async (): Promise<{ operator: Operator } | { error: ConsoleAccessError }> => {
  try {
    return { operator: await requireOperator(await getService(), await consoleToken()) };
  } catch (error) {
    if (error instanceof ConsoleAccessError) return { error };
    throw error;
  }
});

const resolveAccess = cache(async (workspaceId: string): Promise<{ access: WorkspaceAccess } | { error: ConsoleAccessError }> => {
  try {
    return { access: await requireWorkspaceRole(await getService(), await consoleToken(), workspaceId, "viewer") };
  } catch (error) {
    if (error instanceof ConsoleAccessError) return { error };
    throw error;
  }
});

/**
 * The signed-in operator for a page (one query per request), or a redirect to sign in that
 * returns to `path`.
 */
export async function pageOperator(path = "/console"): Promise<Operator> {
  const resolved = await resolveOperator();
  if ("error" in resolved) handleAccessError(resolved.error, path);
  return resolved.operator;
}

/** For layouts: the operator, or null (the page redirects, knowing its own path). */
export async function layoutOperator(): Promise<Operator | null> {
  const resolved = await resolveOperator();
  return "operator" in resolved ? resolved.operator : null;
}

/**
 * The operator's access to a workspace for a page: a not-found page for a workspace that is not
 * theirs, a redirect to sign in (returning to `path`) without a live session, and a not-found
 * page too when `minimum` is above their role (pages that only exist for changes).
 */
export async function pageAccess(workspaceId: string, minimum: OperatorRole = "viewer", path?: string): Promise<WorkspaceAccess> {
  const resolved = await resolveAccess(workspaceId);
  if ("error" in resolved) handleAccessError(resolved.error, path ?? `/console/w/${workspaceId}`);
  if (!roleAtLeast(resolved.access.role, minimum)) notFound();
  return resolved.access;
}

/** For layouts: access, or null without a live session (the page redirects); not-found otherwise. */
export async function layoutAccess(workspaceId: string): Promise<WorkspaceAccess | null> {
  const resolved = await resolveAccess(workspaceId);
  if ("error" in resolved) {
    if (resolved.error.code === "unauthenticated") return null;
    handleAccessError(resolved.error);
  }
  return resolved.access;
}
