/**
 * Console authority. Every console page and every server action resolves the operator's session
 * cookie with one query, as the session check does: the console session live, the chain of the
 * grant of the console's code exchange live (lib/authority: the grant, the console client's secret
 * behind it, the hosted session, the operator, the console client), and (for a workspace) the
 * operator's membership there. Disabling an operator, ending their hosted session
 * or revoking their grant therefore ends console access on the next request.
 *
 * Membership per workspace: owner > admin > viewer. Viewers change nothing; admins change the
 * workspace's configuration; owners also manage its operators. A workspace the operator is not a
 * member of does not exist for them (not_found, never forbidden).
 */
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { consoleSessions, grants, operatorMemberships, users, workspaces } from "../../db/schema";
import { nowValue, selectConsoleSessionChain, sessionIsLive } from "../authority";
import { HOUR } from "../clock";
import { parseSessionToken, slideIdleExpiry, verifySessionSecret } from "../authn/session-token";
import type { Service } from "../service";
import { roleAtLeast, type Operator, type OperatorRole, type WorkspaceAccess } from "../surfaces/operation";
import { SYSTEM_WORKSPACE_ID } from "./system";

export const CONSOLE_SESSION_COOKIE = "lk_console";
export const CONSOLE_COOKIE_PATH = "/console";
/** A console session idles out after 2 hours and ends after 12, or sooner with its hosted session or grant. */
export const CONSOLE_IDLE_MS = 2 * HOUR;
export const CONSOLE_ABSOLUTE_MS = 12 * HOUR;

export { operatorRoles, roleAtLeast, type Operator, type OperatorRole, type WorkspaceAccess } from "../surfaces/operation";

export type ConsoleAccessCode = "unauthenticated" | "not_found" | "forbidden";

export class ConsoleAccessError extends Error {
  constructor(
    readonly code: ConsoleAccessCode,
    message: string,
  ) {
    super(message);
    this.name = "ConsoleAccessError";
  }
}



interface Resolved {
  operator: Operator;
  membership: { role: OperatorRole; workspaceId: string; workspaceName: string } | null;
}

/**
 * The operator behind a console session token, and their membership in `workspaceId` when
 * given, in one query; null when the session or any link of its authority is gone.
 */
export async function resolveConsoleSession(service: Service, token: string | null | undefined, workspaceId?: string): Promise<Resolved | null> {
  const parts = parseSessionToken(token);
  if (!parts) return null;
  const now = service.clock.now();
  const ws = workspaceId ?? null;
  // The console session with the chain of its grant (lib/authority: grant, the console client's
  // secret it was obtained with, hosted session, operator, console client).
  const [row] = await selectConsoleSessionChain(service.db, nowValue(now), {
    session: consoleSessions,
    grantUserId: grants.userId,
    userWorkspaceId: users.workspaceId,
    email: users.email,
    name: users.name,
    role: operatorMemberships.role,
    workspaceId: workspaces.id,
    workspaceName: workspaces.name,
    workspaceSystem: workspaces.system,
  })
    .leftJoin(workspaces, sql`${workspaces.id} = ${ws}::text`)
    .leftJoin(operatorMemberships, and(eq(operatorMemberships.operatorUserId, consoleSessions.operatorUserId), eq(operatorMemberships.workspaceId, workspaces.id)))
    .where(eq(consoleSessions.id, parts.id))
    .limit(1);
  if (!row || !verifySessionSecret(row.session, parts.secret)) return null;
  const s = row.session;
  const live =
    // The console session's own state, by the session rule (its absolute bound is `expiresAt`).
    sessionIsLive({ endedAt: s.endedAt, idleExpiresAt: s.idleExpiresAt, absoluteExpiresAt: s.expiresAt }, now) &&
    row.refusal === null &&
    row.grantUserId === s.operatorUserId &&
    row.userWorkspaceId === SYSTEM_WORKSPACE_ID;
  // A live chain has its operator's row (the email is always there then).
  if (!live || row.email === null) return null;
  const idle = slideIdleExpiry({ lastSeenAt: s.lastSeenAt, absoluteExpiresAt: s.expiresAt }, now, CONSOLE_IDLE_MS);
  if (idle) {
    await service.db
      .update(consoleSessions)
      .set({ lastSeenAt: now, idleExpiresAt: idle })
      .where(and(eq(consoleSessions.id, s.id), isNull(consoleSessions.endedAt), gt(consoleSessions.idleExpiresAt, now)));
  }
  const operator: Operator = {
    userId: s.operatorUserId,
    email: row.email,
    name: row.name,
    sessionId: s.id,
    grantId: s.grantId,
    hostedSessionId: s.hostedSessionId,
  };
  const membership =
    row.role && row.workspaceId && !row.workspaceSystem ? { role: row.role, workspaceId: row.workspaceId, workspaceName: row.workspaceName ?? row.workspaceId } : null;
  return { operator, membership };
}

/** The signed-in operator, or ConsoleAccessError("unauthenticated"). */
export async function requireOperator(service: Service, token: string | null | undefined): Promise<Operator> {
  const resolved = await resolveConsoleSession(service, token);
  if (!resolved) throw new ConsoleAccessError("unauthenticated", "Sign in to the console");
  return resolved.operator;
}

/**
 * The operator's access to a workspace with at least `minimum` role. A workspace they are not a
 * member of (or that does not exist, or is the system workspace) is not_found; a lower role is
 * forbidden.
 */
export async function requireWorkspaceRole(service: Service, token: string | null | undefined, workspaceId: string, minimum: OperatorRole): Promise<WorkspaceAccess> {
  const resolved = await resolveConsoleSession(service, token, workspaceId);
  if (!resolved) throw new ConsoleAccessError("unauthenticated", "Sign in to the console");
  if (!resolved.membership) throw new ConsoleAccessError("not_found", "Not found");
  const access: WorkspaceAccess = {
    operator: resolved.operator,
    workspace: { id: resolved.membership.workspaceId, name: resolved.membership.workspaceName },
    role: resolved.membership.role,
  };
  assertRole(access, minimum);
  return access;
}

export function assertRole(access: WorkspaceAccess, minimum: OperatorRole): void {
  if (!roleAtLeast(access.role, minimum)) {
    throw new ConsoleAccessError(
      "forbidden",
      access.role === "viewer"
        ? "Viewers cannot change anything in this workspace."
        : `This needs the ${minimum} role in this workspace; yours is ${access.role}.`,
    );
  }
}
