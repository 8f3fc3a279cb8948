import { logoResponse } from "@/lib/branding/store";
import { toWebResponse } from "@/lib/http/response";
import { errorToResponse } from "@/lib/oauth/errors";
import { getService } from "@/lib/service";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ tenant: string; digest: string }> };

/** The workspace's logo at its content address (lib/branding/store.ts). */
async function answer(request: Request, { params }: Context): Promise<Response> {
  try {
    const { tenant, digest } = await params;
    return toWebResponse(await logoResponse((await getService()).db, tenant, digest, request.method));
  } catch (error) {
    return toWebResponse(errorToResponse(error));
  }
}

export { answer as GET, answer as HEAD };
