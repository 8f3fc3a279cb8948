import type { NextConfig } from "next";
import { CONSOLE_REFERRER_POLICY, SECURITY_HEADERS } from "./lib/http/security-headers";

const nextConfig: NextConfig = {
  // Native and WASM packages stay outside the bundle; the database handle is shared through
  // globalThis so the custom server and Next's route bundles use one connection (one PGlite).
  serverExternalPackages: ["@electric-sql/pglite", "@node-rs/argon2", "postgres"],
  poweredByHeader: false,
  // Types are checked by `npm run typecheck` (part of `npm test`), once for the whole project.
  typescript: { ignoreBuildErrors: true },
  async headers() {
    // Every answer: no referrer leaks, no sniffing, never framed. The Content-Security-Policy is
    // set per answer by proxy.ts (pages need a fresh nonce each time).
    // The console's pages name our own origin to our own forms (the later entry wins).
    return [
      { source: "/:path*", headers: Object.entries(SECURITY_HEADERS).map(([key, value]) => ({ key, value })) },
      { source: "/console/:path*", headers: [{ key: "Referrer-Policy", value: CONSOLE_REFERRER_POLICY }] },
    ];
  },
};

export default nextConfig;
