import { RELATED_ORIGINS_HANDLERS } from "@/lib/server/next-adapter";

export const dynamic = "force-dynamic";
// WebAuthn related origins: served at a workspace's primary hostname only (lib/hostnames/related-origins.ts).
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = RELATED_ORIGINS_HANDLERS;
