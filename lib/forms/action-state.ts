/**
 * What a console (and, next, portal) server action answers; forms render it (errors beside fields,
 * what was typed kept). Outside lib/console so that components/ can render it without importing the console's rules.
 */
export type ActionState =
  | { status: "idle" }
  | { status: "ok"; result?: unknown; message?: string; at: number }
  | {
      status: "error";
      fieldErrors: Record<string, string>;
      formError?: string;
      /** What the operator submitted (never passwords or secrets), to put back in the fields. */
      values?: Record<string, string | string[]>;
      at: number;
    }
  /** Nothing saved: fields filled in by the server (a connection's identity provider metadata read) for the operator to check, then submit. */
  | { status: "draft"; message: string; values: Record<string, string | string[]>; at: number };

export const idleState: ActionState = { status: "idle" };

/** Fields never echoed back to the browser. */
export function echoValues(raw: Record<string, string | string[]>): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(raw).filter(([key]) => !/password|secret/i.test(key)));
}

export type ServerAction = (state: ActionState, form: FormData) => Promise<ActionState>;
