/**
 * A console operation as a feature declares it: a name, the minimum role, a zod input schema and a
 * function. Declared beside the feature's rules (lib/hostnames, lib/federation/…, a factor's
 * folder) and run by lib/console's `runOperation`, the one path every server action takes: it
 * resolves the operator's authority, checks the role, validates the input, runs the change and
 * writes the audit event in one transaction (`executeOperation`, which an organization's admin
 * portal also runs a few of the organization's operations through, under its own authority).
 */
import type { z } from "zod";
import type { Database } from "../../db/client";
import { CodedError } from "../coded-error";
import type { AuditData, AuditEventType, ConsoleOperationName } from "../audit/catalogue";
import { foldedEvent, foldingAudit, writeAudit } from "../audit/events";
import { announceChange, forgetWorkspace, type Service } from "../service";

export const operatorRoles = ["viewer", "admin", "owner"] as const;
export type OperatorRole = (typeof operatorRoles)[number];
const RANK: Record<OperatorRole, number> = { viewer: 1, admin: 2, owner: 3 };

export function roleAtLeast(role: OperatorRole, minimum: OperatorRole): boolean {
  return RANK[role] >= RANK[minimum];
}

export interface Operator {
  userId: string;
  email: string;
  name: string | null;
  /** The console session id. */
  sessionId: string;
  grantId: string;
  hostedSessionId: string;
}

/** An operator's authority in one workspace, as the console resolved it for this request. */
export interface WorkspaceAccess {
  operator: Operator;
  workspace: { id: string; name: string };
  role: OperatorRole;
  /**
   * Set when the person acts through an organization's admin portal
   * (lib/organizations/admin-portal), never by the console: `administrator` when they are an
   * administrator of the organization (an invitation's rules check that authority again); `home`
   * the portal's page of the organization, where a page an operation leads to links back.
   */
  portal?: { administrator: boolean; home: string };
}

export interface OperationContext {
  service: Service;
  /** The transaction the operation and its audit event share. */
  db: Database;
  access: WorkspaceAccess;
  now: Date;
}

/** What an operation's event carries beyond what runOperation adds (the operator, their role, the folded effects): its declared keys. */
export type OperationData<N extends ConsoleOperationName> = Omit<AuditData<`console.${N}`>, "operator" | "role" | "effects">;

export interface AuditNote<N extends ConsoleOperationName = ConsoleOperationName> {
  /** Short, human-readable subject of the change, e.g. the client_id or the user's email. */
  target?: string;
  clientId?: string | null;
  data?: OperationData<N>;
}

export interface OperationOutput<R, N extends ConsoleOperationName = ConsoleOperationName> {
  result: R;
  /** Null when nothing changed (a form saved as it was): no audit event then. */
  audit: AuditNote<N> | null;
}

export interface Operation<S extends z.ZodType, R, P = undefined, N extends ConsoleOperationName = ConsoleOperationName> {
  /** Audit type suffix: the event is `console.<name>`, a name of the audit catalogue. */
  name: N;
  role: OperatorRole;
  input: S;
  /**
   * Work that must not hold a transaction open (argon2 hashing, screening a password), run before
   * it, with the operator's access; its result goes to `run`.
   */
  prepare?: (input: z.output<S>, ctx: { service: Service; access: WorkspaceAccess }) => Promise<P>;
  run(ctx: OperationContext, input: z.output<S>, prepared: P): Promise<OperationOutput<R, N>>;
}

export type AnyOperation = Operation<any, any, any, any>;

export function defineOperation<S extends z.ZodType, R, P = undefined, N extends ConsoleOperationName = ConsoleOperationName>(op: Operation<S, R, P, N>): Operation<S, R, P, N> {
  return op;
}

/** A rule the input broke, beside a field (or for the whole form). */
export class ConsoleInputError extends CodedError<"invalid_input"> {
  constructor(
    readonly fieldErrors: Record<string, string>,
    readonly formError?: string,
  ) {
    super("invalid_input", formError ?? Object.values(fieldErrors).join("; "));
    this.name = "ConsoleInputError";
  }
}

/** How the console's forms word an "operator" coded error (lib/coded-error.ts): beside its field, else over the form. */
export function formRefusal(error: CodedError): { fieldErrors: Record<string, string>; formError?: string } {
  if (error instanceof ConsoleInputError) return { fieldErrors: error.fieldErrors, ...(error.formError ? { formError: error.formError } : {}) };
  return error.field ? { fieldErrors: { [error.field]: error.message } } : { fieldErrors: {}, formError: error.message };
}

export const fieldError = (field: string, message: string) => new ConsoleInputError({ [field]: message });
export const formError = (message: string) => new ConsoleInputError({}, message);

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
 * Who an operation's event is recorded under, and as what: the console's operator
 * (`console.<operation>`), or another surface that runs the same operations under its own
 * authority (an organization's admin portal: `organization_portal.<…>`), checked by its caller.
 */
export interface OperationEvent {
  ip: string | null;
  type: AuditEventType;
  actor: string;
  /** What the event's data starts with: who acted, and in what role. */
  data: { operator: string; role: string };
}

/**
 * Validates and runs an operation for an authority its caller has checked: the change and its
 * audit event in one transaction, announced to every process. Rule and validation failures come
 * back as `{ ok: false }` with messages per field.
 */
export async function executeOperation<S extends z.ZodType, R, P>(service: Service, access: WorkspaceAccess, op: Operation<S, R, P>, raw: unknown, event: OperationEvent): Promise<OperationOutcome<R>> {
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
        for (const e of collected) await writeAudit(db as unknown as Database, { ...e, actor: e.actor ?? event.actor });
        return out.result;
      }
      const flagged = collected.find((e) => e.flagged)?.flagged ?? null;
      await writeAudit(db as unknown as Database, {
        workspaceId: access.workspace.id,
        type: event.type,
        actor: event.actor,
        clientId: out.audit.clientId ?? null,
        subject: out.audit.target ?? null,
        flagged,
        data: { ...event.data, ...(out.audit.data ?? {}), ...(collected.length ? { effects: collected.map(foldedEvent) } : {}) },
        ip: event.ip,
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
