import { auditExportEndpoint } from "@/lib/console/audit";
import { methodsOf } from "@/lib/server/next-adapter";
import { getService } from "@/lib/service";

export const dynamic = "force-dynamic";

async function exportAudit(request: Request, { params }: { params: Promise<{ workspace: string }> }): Promise<Response> {
  return auditExportEndpoint(request, await getService(), (await params).workspace);
}

// GET (and HEAD) through the console session as before; every other method the route table's edge rule (405 with Allow).
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = methodsOf({ GET: exportAudit });
