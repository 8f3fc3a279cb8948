import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native and WASM packages stay outside the bundle; the database handle is shared through
  // globalThis so the custom server and Next's route bundles use one connection (one PGlite).
  serverExternalPackages: ["@electric-sql/pglite", "@node-rs/argon2", "postgres"],
  poweredByHeader: false,
  // Types are checked by `npm run typecheck` (part of `npm test`), once for the whole project.
  typescript: { ignoreBuildErrors: true },
  async headers() {
    // Hosted pages: never framed, no referrer leaks, no sniffing. (form-action is not restricted:
    // the sign-in form's 303 leads to the application's registered callback on another origin.)
    const hosted = [
      { key: "Content-Security-Policy", value: "frame-ancestors 'none'; base-uri 'none'; object-src 'none'" },
      { key: "Referrer-Policy", value: "no-referrer" },
      { key: "X-Content-Type-Options", value: "nosniff" },
      { key: "X-Frame-Options", value: "DENY" },
    ];
    return [
      { source: "/t/:tenant/:path*", headers: hosted },
      { source: "/console/:path*", headers: hosted },
    ];
  },
};

export default nextConfig;
