import { deriveKey, hmacBase64Url } from "../crypto";
import type { Service } from "../service";

/**
 * Pairwise subject: the same user gets a different, stable `sub` per client and per
 * authentication host, so two clients cannot correlate users through it.
 */
export function pairwiseSubject(service: Service, workspaceId: string, clientId: string, userId: string): string {
  let key = service.cache.get("pairwise-key") as Buffer | undefined;
  if (!key) {
    key = deriveKey(service.config.masterKey, "pairwise-subject");
    service.cache.set("pairwise-key", key);
  }
  const host = new URL(service.config.publicUrl).host;
  return hmacBase64Url(key, `${host}\n${workspaceId}\n${clientId}\n${userId}`);
}
