import { demoApplication } from "@/lib/demo/serve";
import { methodsOf } from "@/lib/server/next-adapter";
import { getService } from "@/lib/service";

// The demo application (lib/demo): the production server answers /demo before Next, with the same handler.
export const dynamic = "force-dynamic";

async function handle(request: Request): Promise<Response> {
  return demoApplication(await getService())(request);
}

export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = methodsOf({ GET: handle, POST: handle });
