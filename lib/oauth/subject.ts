import { deriveKey, hmacBase64Url } from "../crypto";
import type { Service } from "../service";
import { hostOrigin } from "../http/context";

/**
 * Pairwise subject: the same user gets a different, stable `sub` per client and per
 * authentication host (the default host, PUBLIC_URL's, or a workspace hostname: lib/hostnames),
 * so two clients cannot correlate users through it. A grant's tokens are answered only at the
 * hostname it was made under, so its subject never changes when hostnames are added.
 */
export function pairwiseSubject(service: Service, workspaceId: string, clientId: string, userId: string, hostname: string | null = null): string {
  let cached = service.cache.get("pairwise-key") as { key: Buffer; host: string } | undefined;
  if (!cached) {
    cached = { key: deriveKey(service.config.masterKey, "pairwise-subject"), host: new URL(service.config.publicUrl).host };
    service.cache.set("pairwise-key", cached);
  }
  const host = hostname === null ? cached.host : new URL(hostOrigin(service.config.publicUrl, hostname)).host;
  return hmacBase64Url(cached.key, `${host}\n${workspaceId}\n${clientId}\n${userId}`);
}
