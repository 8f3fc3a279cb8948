// The Content-Security-Policy of everything Next answers. Pages get a fresh nonce per response:
// Next reads it from the request's CSP header and puts it on its own scripts, so pages must be
// rendered per request (app/layout.tsx). The route table's answers under an issuer get the same
// fixed policy as on the production server's direct path (lib/server/node-server.ts). Every
// state-changing request Next answers is judged by the same-origin rule here, before Next handles
// it (lib/http/server-action-origin.ts): refused with 403, or passed on with the judged Origin.
import { NextResponse, type NextRequest } from "next/server";
import { configuredPublicUrl, configuredTrustProxy } from "./lib/config";
import { ISSUER_ROUTE_CSP, ISSUER_ROUTE_PATH, pageContentSecurityPolicy } from "./lib/http/security-headers";
import { judgeStateChange } from "./lib/http/server-action-origin";
import { notFoundResponse } from "./lib/oauth/errors";
import { LOCALE_HEADER, negotiateLocale } from "./lib/i18n/locales";

export function proxy(request: NextRequest) {
  const { pathname } = request.nextUrl;
  if (ISSUER_ROUTE_PATH.test(pathname)) {
    const response = NextResponse.next();
    response.headers.set("Content-Security-Policy", ISSUER_ROUTE_CSP);
    return response;
  }
  const judged = judgeStateChange(request, configuredPublicUrl(), configuredTrustProxy());
  // No page under an issuer takes a change (the hosted forms post to the route table), so a refused
  // one there gets what every unknown path under an issuer gets: the generic 404.
  if (judged instanceof Response) return pathname.startsWith("/t/") ? notFoundResponse() : judged;
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString("base64");
  const policy = pageContentSecurityPolicy(nonce, { hosted: pathname.startsWith("/t/"), dev: process.env.NODE_ENV === "development" });
  const headers = new Headers(request.headers);
  headers.set("Content-Security-Policy", policy);
  if (judged !== null) headers.set("origin", judged);
  // The hosted pages' language for the root layout's <html lang> (the console stays English); never the client's own value.
  if (pathname.startsWith("/t/")) headers.set(LOCALE_HEADER, negotiateLocale(request.headers.get("accept-language")));
  else headers.delete(LOCALE_HEADER);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("Content-Security-Policy", policy);
  return response;
}

export const config = {
  // Everything but the build's static files (they are not documents).
  matcher: ["/((?!_next/static/|_next/image/|favicon\\.ico$).*)"],
};
