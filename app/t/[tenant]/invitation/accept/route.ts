import { routeHandlers } from "@/lib/server/next-adapter";

export const dynamic = "force-dynamic";
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers("/invitation/accept");
