import { routeHandlers } from "@/lib/server/next-adapter";

export const dynamic = "force-dynamic";
// The SCIM API (lib/organizations/scim): one table route answers every path below /scim/v2.
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers("/scim/v2");
