import { cookies } from "next/headers";
import { CONSOLE_SESSION_COOKIE } from "@/lib/console/authz";
import { clearSessionCookie, endConsoleSession } from "@/lib/console/login";
import { hostedErrorPage } from "@/lib/hosted/html";
import { getService } from "@/lib/service";

export const dynamic = "force-dynamic";

/**
 * POST only, from the console's own pages (Origin checked; the cookie is SameSite=Lax): ends the
 * console session, then hands the browser to hosted logout, which ends the hosted session and
 * returns to /console/signed-out.
 */
export async function POST(request: Request): Promise<Response> {
  const service = await getService();
  const origin = request.headers.get("origin");
  const site = request.headers.get("sec-fetch-site");
  // Under Referrer-Policy: no-referrer browsers send `Origin: null` even for same-origin posts;
  // Sec-Fetch-Site then says where the form was.
  const foreignOrigin = origin !== null && origin !== "null" && origin !== service.config.publicUrl;
  const foreignSite = site !== null ? site !== "same-origin" : origin !== service.config.publicUrl;
  if (foreignOrigin || foreignSite) {
    return hostedErrorPage(403, "Request refused", "This sign-out was submitted from another site.", "invalid_request");
  }
  const token = (await cookies()).get(CONSOLE_SESSION_COOKIE)?.value;
  const { logoutUrl } = await endConsoleSession(service, token);
  return new Response(null, {
    status: 303,
    headers: { Location: logoutUrl, "Set-Cookie": clearSessionCookie(), "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" },
  });
}
