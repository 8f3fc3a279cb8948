import { clientAddressOf } from "@/lib/http/client-address";
import { parseCookieHeader } from "@/lib/http/cookies";
import { hostedErrorPage } from "@/lib/hosted/html";
import { clearLoginCookie, CONSOLE_TX_COOKIE, ConsoleLoginError, finishConsoleLogin } from "@/lib/console/login";
import { getService } from "@/lib/service";

export const dynamic = "force-dynamic";

/** The console's OAuth callback: consume the transaction, exchange the code, start a console session. */
export async function GET(request: Request): Promise<Response> {
  const service = await getService();
  // The browser asked for PUBLIC_URL's callback; the query is all that is read from the request URL.
  const url = new URL(request.url);
  const callback = new URL(`${service.config.publicUrl}${url.pathname}${url.search}`);
  try {
    const done = await finishConsoleLogin(service, {
      url: callback,
      txCookie: parseCookieHeader(request.headers.get("cookie")).get(CONSOLE_TX_COOKIE),
      ip: clientAddressOf(request.headers, service.config.trustProxy),
      userAgent: request.headers.get("user-agent"),
    });
    const headers = new Headers({ Location: done.returnTo, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" });
    headers.append("Set-Cookie", done.cookie);
    headers.append("Set-Cookie", clearLoginCookie());
    return new Response(null, { status: 303, headers });
  } catch (error) {
    if (!(error instanceof ConsoleLoginError)) throw error;
    const page = hostedErrorPage(400, "Console sign-in failed", `${error.message} Start again from /console.`, error.code);
    page.headers.append("Set-Cookie", clearLoginCookie());
    return page;
  }
}
