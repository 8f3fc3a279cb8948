/**
 * A console operation as a feature declares it: a name, the minimum role, a zod input schema and a
 * function. Declared beside the feature's rules (lib/hostnames, lib/federation/…, a factor's
 * folder) and run by lib/console's `runOperation`, the one path every server action takes: it
 * resolves the operator's authority, checks the role, validates the input, runs the change and
 * writes the audit event in one transaction.
 */
import type { z } from "zod";
import type { Database } from "../../db/client";
import { CodedError } from "../coded-error";
import type { AuditData, ConsoleOperationName } from "../audit/catalogue";
import type { Service } from "../service";

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
