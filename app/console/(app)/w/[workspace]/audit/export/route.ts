import { auditExportEndpoint } from "@/lib/console/audit";
import { getService } from "@/lib/service";

export const dynamic = "force-dynamic";

export async function GET(request: Request, { params }: { params: Promise<{ workspace: string }> }): Promise<Response> {
  return auditExportEndpoint(request, await getService(), (await params).workspace);
}
