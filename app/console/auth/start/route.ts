import { safeReturnTo, startConsoleLogin } from "@/lib/console/login";
import { getService } from "@/lib/service";

export const dynamic = "force-dynamic";

/** Starts a console sign-in: a fresh transaction, then the system workspace's authorize endpoint. */
export async function GET(request: Request): Promise<Response> {
  const next = safeReturnTo(new URL(request.url).searchParams.get("next"));
  const { location, cookie } = await startConsoleLogin(await getService(), next);
  return new Response(null, {
    status: 303,
    headers: { Location: location, "Set-Cookie": cookie, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" },
  });
}
