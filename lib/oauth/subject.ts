import { deriveKey, hmacBase64Url } from "../crypto";
import type { Service } from "../service";

/**
 * Pairwise subject: the same user gets a different, stable `sub` per client and per
 * authentication host, so two clients cannot correlate users through it.
 */
export function pairwiseSubject(service: Service, workspaceId: string, clientId: string, userId: string): string {
  let cached = service.cache.get("pairwise-key") as { key: Buffer; host: string } | undefined;
  if (!cached) {
    cached = { key: deriveKey(service.config.masterKey, "pairwise-subject"), host: new URL(service.config.publicUrl).host };
    service.cache.set("pairwise-key", cached);
  }
  return hmacBase64Url(cached.key, `${cached.host}\n${workspaceId}\n${clientId}\n${userId}`);
}
