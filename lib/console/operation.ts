/**
 * Console changes as operations: a name, the minimum role, a zod input schema and a function.
 * `runOperation` is the one path every server action takes: it resolves the operator's current
 * authority for the workspace (one query), checks the role, validates the input, runs the change
 * and writes the audit event (who, what, when, from where) in one transaction, which also
 * announces the change to every process, so that none answers from what it cached of the
 * workspace once it commits (lib/service.ts `announceChange`). The integration tests call it
 * directly, so what they prove holds for the actions.
 */
import type { z } from "zod";
import type { Service } from "../service";
import { executeOperation, type Operation, type OperationOutcome } from "../surfaces/operation";
import { assertRole, requireWorkspaceRole } from "./authz";

// The operation's contract lives below the console, so that a feature declares its operations in its own folder.
export {
  ConsoleInputError,
  defineOperation,
  fieldError,
  formError,
  type AuditNote,
  type Operation,
  type OperationContext,
  type OperationData,
  type OperationOutput,
  type OperationOutcome,
  executeOperation,
  type OperationEvent,
} from "../surfaces/operation";



/**
 * Authorizes, validates and runs a console operation for the session `token` in `workspaceId`.
 * Throws ConsoleAccessError (unauthenticated, not_found, forbidden); rule and validation failures
 * come back as `{ ok: false }` with messages per field.
 */
export async function runOperation<S extends z.ZodType, R, P>(
  service: Service,
  token: string | null | undefined,
  workspaceId: string,
  op: Operation<S, R, P>,
  raw: unknown,
  meta: { ip?: string | null } = {},
): Promise<OperationOutcome<R>> {
  const access = await requireWorkspaceRole(service, token, workspaceId, "viewer");
  // Checked apart from the lookup so a viewer learns why, and a stranger learns nothing.
  assertRole(access, op.role);
  return executeOperation(service, access, op, raw, { ip: meta.ip ?? null, type: `console.${op.name}`, actor: access.operator.userId, data: { operator: access.operator.email, role: access.role } });
}

