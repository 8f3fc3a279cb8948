/**
 * Browser guards a route declares instead of re-implementing them (better-auth's
 * `createAuthEndpoint(path, { use: [...] })`):
 *
 *   export const signOut = guarded(endSession, { use: [sameOrigin(() => refusedPage)] });
 *
 * A guard looks at the request before the endpoint runs: null lets it on, a Response is the
 * answer instead. Guards run in the order declared; the first refusal wins. What a refusal looks
 * like (a hosted page, JSON) is the route's, so each guard takes its refusal as an argument.
 */
import type { Service } from "../service";

/** What a guard may read besides the request: the service (configuration, clock, database) and the origin the request came to. */
export interface GuardContext {
  service: Service;
  origin: string;
}

export type Guard = (request: Request, ctx: GuardContext) => Response | null | Promise<Response | null>;

export type GuardedEndpoint<C extends GuardContext> = (request: Request, ctx: C) => Promise<Response>;

/** The endpoint behind its declared guards. */
export function guarded<C extends GuardContext>(endpoint: GuardedEndpoint<C>, options: { use: readonly Guard[] }): GuardedEndpoint<C> {
  const use = [...options.use];
  return async (request, ctx) => {
    for (const guard of use) {
      const refusal = await guard(request, ctx);
      if (refusal) return refusal;
    }
    return endpoint(request, ctx);
  };
}

/**
 * The one same-origin rule for a state-changing browser request (a form POST, a server action) to
 * our own pages, whose origin is `publicUrl` (for a workspace's pages: the origin of the hostname
 * they are served at). The route table's form posts declare it as a guard (`sameOrigin`); every
 * state-changing request Next answers is judged by it in proxy.ts (./server-action-origin.ts).
 *
 * - an `Origin` naming another origin refuses, whatever else is sent (another host, a sibling
 *   subdomain, another port or scheme: origins compare exactly);
 * - `Sec-Fetch-Site`, when sent, must be `same-origin` (under the hosted pages'
 *   `Referrer-Policy: no-referrer` browsers send `Origin: null` even for our own forms;
 *   Sec-Fetch-Site still says where the form was);
 * - without `Sec-Fetch-Site`, `Origin` must be `publicUrl` itself.
 *
 * So a request with neither header, or with only `Origin: null`, is refused: fail closed. Every
 * browser sends `Origin` on a POST and current ones `Sec-Fetch-Site` too; what sends neither is not
 * a browser on our page, and `null` alone is also what sandboxed frames and `data:` pages send. A
 * request without `Origin` but with `Sec-Fetch-Site: same-origin` passes: a page cannot set
 * Sec-Fetch-* (browsers own them), so only the browser says so, and only for our own pages.
 */
export function sameOriginRequest(request: Request, publicUrl: string): boolean {
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== "null" && origin !== publicUrl) return false;
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin";
  return origin === publicUrl;
}

/** The guard for `sameOriginRequest` against the origin the request came to (`ctx.origin`), answering `refusal()` when it refuses. */
export function sameOrigin(refusal: () => Response): Guard {
  return (request, ctx) => (sameOriginRequest(request, ctx.origin) ? null : refusal());
}
