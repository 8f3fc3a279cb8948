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
import type { Database } from "../../db/client";
import { foldedEvent, foldingAudit, writeAudit } from "../audit/events";
import { CodedError } from "../coded-error";
import { announceChange, forgetWorkspace, type Service } from "../service";
import { formRefusal, type Operation } from "../surfaces/operation";
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
} from "../surfaces/operation";

export type OperationOutcome<R> = { ok: true; result: R } | { ok: false; fieldErrors: Record<string, string>; formError?: string };

function zodFieldErrors(error: z.ZodError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = issue.path.length ? String(issue.path[0]) : "_form";
    out[key] ??= issue.message;
  }
  return out;
}

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
  const parsed = op.input.safeParse(raw);
  if (!parsed.success) {
    const fieldErrors = zodFieldErrors(parsed.error);
    const { _form, ...rest } = fieldErrors;
    return { ok: false, fieldErrors: rest, ...(_form ? { formError: _form } : {}) };
  }
  const input = parsed.data as z.output<S>;
  try {
    const prepared = (op.prepare ? await op.prepare(input, { service, access }) : undefined) as P;
    const result = await service.db.transaction(async (db) => {
      const now = service.clock.now();
      // The lib functions an operation calls may record their own events (a role assigned, a
      // grant revoked): they become part of this operation's one event, never a second one.
      const { value: out, collected } = await foldingAudit(() => op.run({ service, db: db as unknown as Database, access, now }, input, prepared));
      // Delivered to every process when this transaction commits (an operation that changed nothing costs them a reload).
      await announceChange(db as unknown as Database, access.workspace.id);
      if (out.audit === null) {
        // Nothing the operator changed; anything an inner writer still recorded keeps its own event.
        for (const event of collected) await writeAudit(db as unknown as Database, { ...event, actor: event.actor ?? access.operator.userId });
        return out.result;
      }
      const flagged = collected.find((e) => e.flagged)?.flagged ?? null;
      await writeAudit(db as unknown as Database, {
        workspaceId: access.workspace.id,
        type: `console.${op.name}`,
        actor: access.operator.userId,
        clientId: out.audit.clientId ?? null,
        subject: out.audit.target ?? null,
        flagged,
        data: { operator: access.operator.email, role: access.role, ...(out.audit.data ?? {}), ...(collected.length ? { effects: collected.map(foldedEvent) } : {}) },
        ip: meta.ip ?? null,
        at: now,
      });
      return out.result;
    });
    // This process forgets at once, without waiting for its own announcement.
    forgetWorkspace(service, access.workspace.id);
    return { ok: true, result };
  } catch (error) {
    // The one place the console answers a rule's refusal: an "operator" coded error, as its form shows it.
    if (error instanceof CodedError && error.family === "operator") return { ok: false, ...formRefusal(error) };
    throw error;
  }
}
