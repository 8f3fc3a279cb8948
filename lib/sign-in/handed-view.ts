/**
 * The sign-in view the listener computed for a page request (lib/server/sign-in-page.ts), handed to
 * the page Next renders for that same request, so the page shows exactly what its kept template
 * is keyed by. By request id (the server's own UUID is part of it: lib/http/request-id.ts);
 * process-wide, as the custom server and Next's bundles each load this module.
 */
import type { SignInView } from "./view";

const KEY = Symbol.for("latchkey.handed-sign-in-views");
const views = ((globalThis as Record<symbol, unknown>)[KEY] ??= new Map()) as Map<string, SignInView>;

/** Hands `view` to the render of request `requestId` until `release` is called (when the answer is done). */
export function handView(requestId: string, view: SignInView): () => void {
  views.set(requestId, view);
  return () => views.delete(requestId);
}

/** The view handed to this request's render, if any. */
export function handedView(requestId: string | null): SignInView | undefined {
  return requestId === null ? undefined : views.get(requestId);
}
