/**
 * The portal's form posts: the endpoint shape every one of them has (same origin, a small form,
 * a live portal session, the portal's CSRF token) and the answer that sends the browser back to
 * the portal page. Used by ./portal-routes.ts (re-verification) and ./credential-routes.ts (what
 * the portal manages).
 */
import { hostedError } from "../hosted/errors";
import type { Endpoint, EndpointContext } from "../http/context";
import { verifyCsrfToken } from "../http/csrf";
import { mediaType, readBody } from "../http/form";
import { guarded, sameOrigin } from "../http/guards";
import { redirect303 } from "../http/response";
import { livePortalSession, PORTAL_PATH, type PortalSession } from "./portal-session";
import { portalCsrfBindings } from "./portal-view";

/** The portal's form posts are small (a password, a code). */
const FORM_LIMIT = 8 * 1024;

export interface PortalFormInput {
  portal: PortalSession;
  form: URLSearchParams;
}

/**
 * A portal form post: same origin (lib/http/guards.ts), a form body of at most 8 KiB, a live
 * portal session (./portal-session.ts), and the portal's CSRF token (purpose "account-portal",
 * bound to the portal session, its cookie secret and the hosted session).
 */
export function portalForm(handler: (request: Request, ctx: EndpointContext, input: PortalFormInput) => Promise<Response>): Endpoint {
  return guarded(
    async (request: Request, ctx: EndpointContext) => {
      if (mediaType(request) !== "application/x-www-form-urlencoded") return hostedError("form_media_type");
      let form: URLSearchParams;
      try {
        form = new URLSearchParams(await readBody(request, FORM_LIMIT));
      } catch {
        return hostedError("form_too_large");
      }
      const portal = await livePortalSession(ctx, request.headers.get("cookie"));
      if (!portal) return hostedError("portal_session_ended");
      if (!verifyCsrfToken(ctx.service.config.masterKey, "account-portal", portalCsrfBindings(ctx, portal), form.get("csrf"))) return hostedError("form_unverified");
      return handler(request, ctx, { portal, form });
    },
    { use: [sameOrigin(() => hostedError("cross_site_form"))] },
  );
}

/** Back to the portal page, with a notice or an error code the page shows. */
export function toPortal(ctx: EndpointContext, query: { done?: string; error?: string } = {}): Response {
  const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => typeof e[1] === "string"));
  const s = q.toString();
  return redirect303(`${ctx.basePath}${PORTAL_PATH}${s ? `?${s}` : ""}`);
}
