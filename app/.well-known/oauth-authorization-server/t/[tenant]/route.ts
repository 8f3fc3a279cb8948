import { routeHandlers } from "@/lib/server/next-adapter";

export const dynamic = "force-dynamic";
// RFC 8414 §3.1: the issuer /t/{tenant}'s authorization server metadata, answered by its discovery route.
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers("/.well-known/openid-configuration");
