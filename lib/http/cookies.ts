export function parseCookieHeader(header: string | null): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

/**
 * Hosted cookies are always `Secure; HttpOnly; SameSite=Lax` and scoped to one workspace path.
 * Browsers accept Secure cookies from http://localhost, so local development works unchanged.
 */
export function serializeCookie(name: string, value: string, path: string, maxAgeSeconds?: number): string {
  const parts = [`${name}=${value}`, `Path=${path}`, "Secure", "HttpOnly", "SameSite=Lax"];
  if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`);
  return parts.join("; ");
}

export function clearCookie(name: string, path: string): string {
  return serializeCookie(name, "", path, 0);
}
