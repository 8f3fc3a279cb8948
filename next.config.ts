import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native and WASM packages stay outside the bundle; the database handle is shared through
  // globalThis so the custom server and Next's route bundles use one connection (one PGlite).
  serverExternalPackages: ["@electric-sql/pglite", "@node-rs/argon2", "postgres"],
  poweredByHeader: false,
  typescript: { ignoreBuildErrors: false },
};

export default nextConfig;
