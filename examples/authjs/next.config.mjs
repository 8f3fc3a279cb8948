// next.config.mjs
// Nothing to set: its presence keeps Next.js from taking up a configuration from a parent folder.
const nextConfig = {};

export default nextConfig;
