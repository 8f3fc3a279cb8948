import { routeHandlers } from "@/lib/server/next-adapter";

export const dynamic = "force-dynamic";
// The workspace's logo at its content address (lib/branding/routes.ts): one table route answers every path below /branding/logo.
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers("/branding/logo");
