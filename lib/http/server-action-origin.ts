/**
 * Next's server actions (the console's forms) under the same-origin rule of every form post
 * (`sameOriginRequest`, lib/http/guards.ts), decided before Next handles the action: a POST that
 * names an action (`Next-Action`) from another origin, or saying neither where it came from nor
 * `Sec-Fetch-Site: same-origin`, is refused with 403. (Next itself would refuse a foreign origin
 * with a 500 and let a missing one through.)
 */
import { sameOriginRequest } from "./guards";

/** The 403 for a server action that is not from our own pages, or null to let Next handle it. */
export function refuseForeignServerAction(request: Request, publicUrl: string): Response | null {
  if (request.method !== "POST" || !request.headers.has("next-action")) return null;
  if (sameOriginRequest(request, publicUrl)) return null;
  return new Response("Forbidden: this form was not sent from this site's own pages.\n", {
    status: 403,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" },
  });
}
