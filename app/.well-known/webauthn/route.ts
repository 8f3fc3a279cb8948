import { hostRouteHandlers } from "@/lib/server/next-adapter";

export const dynamic = "force-dynamic";
// WebAuthn related origins: served at a workspace's primary hostname only (lib/hostnames/related-origins.ts).
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = hostRouteHandlers("/.well-known/webauthn");
