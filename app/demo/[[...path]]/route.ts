import { demoApplication } from "@/lib/demo/serve";
import { getService } from "@/lib/service";

// The demo application (lib/demo): the production server answers /demo before Next, with the same handler.
export const dynamic = "force-dynamic";

async function handle(request: Request): Promise<Response> {
  return demoApplication(await getService())(request);
}

export { handle as GET, handle as POST };
