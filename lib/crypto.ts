import { createCipheriv, createDecipheriv, createHash, createHmac, createSecretKey, hkdfSync, randomBytes, timingSafeEqual, type KeyObject } from "node:crypto";

/**
 * Random bytes are taken from a pool refilled 4 KiB at a time from the CSPRNG: one `randomBytes`
 * call per token cost more than the rest of issuing it. Every byte is handed out once.
 */
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

export function pooledRandom(bytes: number): Buffer {
  if (bytes > POOL_SIZE) return randomBytes(bytes);
  if (poolOffset + bytes > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const out = pool.subarray(poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return out;
}

export function randomToken(bytes = 32): string {
  return pooledRandom(bytes).toString("base64url");
}

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

export function sha256Base64Url(value: string): string {
  return createHash("sha256").update(value).digest("base64url");
}

// Keys as key objects, by the buffer that holds them: a raw key is imported again on every HMAC,
// which cost more than the HMAC itself on the refresh path (pairwise subjects).
const keyObjects = new WeakMap<Buffer, KeyObject>();

/** The key object of a long-lived key buffer (never mutated after it is made). */
export function secretKeyOf(key: Buffer): KeyObject {
  let object = keyObjects.get(key);
  if (!object) keyObjects.set(key, (object = createSecretKey(key)));
  return object;
}

export function hmacBase64Url(key: Buffer, value: string): string {
  return createHmac("sha256", secretKeyOf(key)).update(value).digest("base64url");
}

/** Constant-time comparison of two strings of any length. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

/** A purpose-bound subkey of the master key, so one key never serves two uses. */
export function deriveKey(masterKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", masterKey, Buffer.alloc(0), `latchkey:${purpose}`, 32));
}

/** AES-256-GCM; output is `v1.<iv>.<ciphertext>.<tag>` in base64url. */
export function encryptSecret(masterKey: Buffer, plaintext: string, purpose: string): string {
  const key = deriveKey(masterKey, `encrypt:${purpose}`);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return ["v1", iv.toString("base64url"), ct.toString("base64url"), cipher.getAuthTag().toString("base64url")].join(".");
}

export function decryptSecret(masterKey: Buffer, sealed: string, purpose: string): string {
  const [version, iv, ct, tag] = sealed.split(".");
  if (version !== "v1" || !iv || ct === undefined || !tag) throw new Error("Unsupported sealed secret format");
  const key = deriveKey(masterKey, `encrypt:${purpose}`);
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
}

export function newId(): string {
  return crypto.randomUUID();
}
