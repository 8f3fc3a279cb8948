/**
 * The portal's form posts: the endpoint shape every one of them has (same origin, a small form,
 * a live portal session, the portal's CSRF token) and the answer that sends the browser back to
 * the portal page. Used by ./portal-routes.ts (re-verification) and ./credential-routes.ts (what
 * the portal manages).
 */
import { hostedError } from "../hosted/errors";
import { hostedFormPost } from "../hosted/form-post";
import type { Endpoint, EndpointContext } from "../http/context";
import { verifyCsrfToken } from "../http/csrf";
import { redirect303 } from "../http/response";
import { livePortalSession, PORTAL_PATH, type PortalSession } from "./portal-session";
import { portalCsrfBindings } from "./portal-view";

export interface PortalFormInput {
  portal: PortalSession;
  form: URLSearchParams;
}

/**
 * A portal form post: a hosted form post (lib/hosted/form-post.ts: same origin, form body of at
 * most 8 KiB), a live portal session (./portal-session.ts), and the portal's CSRF token (purpose "account-portal",
 * bound to the portal session, its cookie secret and the hosted session).
 */
export function portalForm(handler: (request: Request, ctx: EndpointContext, input: PortalFormInput) => Promise<Response>): Endpoint {
  return hostedFormPost(async (request, ctx, form) => {
    const portal = await livePortalSession(ctx, request.headers.get("cookie"));
    if (!portal) return hostedError("portal_session_ended");
    if (!verifyCsrfToken(ctx.service.config.masterKey, "account-portal", portalCsrfBindings(ctx, portal), form.get("csrf"))) return hostedError("form_unverified");
    return handler(request, ctx, { portal, form });
  });
}

/** Back to the portal page, with a notice or an error code the page shows. */
export function toPortal(ctx: EndpointContext, query: { done?: string; error?: string } = {}): Response {
  const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => typeof e[1] === "string"));
  const s = q.toString();
  return redirect303(`${ctx.basePath}${PORTAL_PATH}${s ? `?${s}` : ""}`);
}
