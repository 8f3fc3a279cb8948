/**
 * The workload (M2M) access token: sealed, not stored. Client credentials issue it without a
 * write: the token carries its own authority (client, the credential that obtained it, API,
 * scope, expiry, and a random id), encrypted and authenticated with AES-256-GCM under a key
 * derived from the master key for the hour it was issued in, bound to its workspace and to the host
 * it was issued at (the default host, or a workspace hostname: lib/hostnames), so that, like a
 * user's token, it is answered under its own issuer only.
 *
 * It stays opaque to clients (SPEC: an M2M token is opaque, lives 5 minutes and is limited by
 * current credential and grant authority): nothing in it can be read without the master key,
 * and a changed byte, another workspace, or another hour's key makes it no token at all. Every
 * reader still judges current authority (credential, client, API, the deny list) in one indexed
 * statement (lib/authority/statements.ts, `selectSealedTokenVerdict`); revocation adds the id to
 * `revoked_workload_tokens` until the token's expiry.
 *
 * Layout, base64url after the `lkw_` prefix: version (1 byte) · key hour (uint32, big-endian) ·
 * IV (12 bytes) · ciphertext · tag (16 bytes). The version byte, hour, workspace id and hostname
 * are the additional authenticated data: version 1 is a token of the default host (its data is the
 * workspace id alone, as before hostnames were bound), version 2 one of a workspace hostname.
 */
import { createCipheriv, createDecipheriv, type KeyObject } from "node:crypto";
import { deriveKey, pooledRandom, secretKeyOf } from "../crypto";
import { HOUR } from "../clock";

export const WORKLOAD_TOKEN_PREFIX = "lkw_";
/** The version byte says which host the token was issued at: the default host, or a hostname (named in the additional data). */
const DEFAULT_HOST_VERSION = 1;
const HOSTNAME_VERSION = 2;
const HEADER = 5;
const IV = 12;
const TAG = 16;
/** Keys of the issuing hour and the one next to it are accepted (a token lives 5 minutes; instances' clocks differ a little). */
const HOUR_TOLERANCE = 1;
/** Longer input is not looked at (64 permissions of 64 characters and the ids seal to under 8 KiB). */
export const MAX_WORKLOAD_TOKEN_LENGTH = 16 * 1024;

export interface WorkloadTokenClaims {
  /** Random, unique per token: the deny list's key. */
  id: string;
  clientPk: string;
  credentialId: string;
  apiId: string;
  scope: string[];
  issuedAt: Date;
  expiresAt: Date;
}

// Derived keys by master key and hour, as key objects (a raw key would be imported again on every
// cipher); a few hours are kept (the current one, its neighbours).
const keys = new WeakMap<Buffer, Map<number, KeyObject>>();

function hourKey(masterKey: Buffer, hour: number): KeyObject {
  let byHour = keys.get(masterKey);
  if (!byHour) keys.set(masterKey, (byHour = new Map()));
  let key = byHour.get(hour);
  if (!key) {
    key = secretKeyOf(deriveKey(masterKey, `workload-token:${hour}`));
    byHour.set(hour, key);
    if (byHour.size > 4) byHour.delete(byHour.keys().next().value!);
  }
  return key;
}

const versionFor = (hostname: string | null) => (hostname === null ? DEFAULT_HOST_VERSION : HOSTNAME_VERSION);

/** The additional authenticated data: the header, then the workspace id (and, for a hostname's token, both as one unambiguous JSON array). */
function aad(header: Buffer, workspaceId: string, hostname: string | null): Buffer {
  const bound = hostname === null ? workspaceId : JSON.stringify([workspaceId, hostname]);
  return Buffer.concat([header, Buffer.from(bound, "utf8")]);
}

export function newWorkloadTokenId(): string {
  return pooledRandom(16).toString("base64url");
}

/**
 * Seals the claims for `workspaceId` at `hostname` (null: the default host) under the key of the
 * hour they were issued in.
 */
export function sealWorkloadToken(masterKey: Buffer, workspaceId: string, hostname: string | null, claims: WorkloadTokenClaims): string {
  const hour = Math.floor(claims.issuedAt.getTime() / HOUR);
  const header = Buffer.alloc(HEADER);
  header.writeUInt8(versionFor(hostname), 0);
  header.writeUInt32BE(hour, 1);
  const iv = pooledRandom(IV);
  const cipher = createCipheriv("aes-256-gcm", hourKey(masterKey, hour), iv);
  cipher.setAAD(aad(header, workspaceId, hostname));
  const plaintext = JSON.stringify([claims.id, claims.clientPk, claims.credentialId, claims.apiId, claims.issuedAt.getTime(), claims.expiresAt.getTime(), claims.scope]);
  const body = Buffer.concat([header, iv, cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return WORKLOAD_TOKEN_PREFIX + body.toString("base64url");
}

export function isWorkloadTokenFormat(token: string): boolean {
  return token.startsWith(WORKLOAD_TOKEN_PREFIX);
}

const isString = (v: unknown): v is string => typeof v === "string" && v !== "";
const isTime = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v);

/**
 * The claims of a token sealed for `workspaceId` at `hostname` within an hour of `now`, or null:
 * malformed, altered, sealed for another workspace or at another host, under another master key,
 * or too old for its key. An expired token opens (its expiry is judged with the rest of its authority).
 */
export function openWorkloadToken(masterKey: Buffer, workspaceId: string, hostname: string | null, token: string, now: Date): WorkloadTokenClaims | null {
  if (!isWorkloadTokenFormat(token) || token.length > MAX_WORKLOAD_TOKEN_LENGTH) return null;
  const encoded = token.slice(WORKLOAD_TOKEN_PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return null;
  const body = Buffer.from(encoded, "base64url");
  if (body.length <= HEADER + IV + TAG || body.readUInt8(0) !== versionFor(hostname)) return null;
  const hour = body.readUInt32BE(1);
  if (Math.abs(hour - Math.floor(now.getTime() / HOUR)) > HOUR_TOLERANCE) return null;
  const header = body.subarray(0, HEADER);
  let plaintext: string;
  try {
    const decipher = createDecipheriv("aes-256-gcm", hourKey(masterKey, hour), body.subarray(HEADER, HEADER + IV));
    decipher.setAAD(aad(header, workspaceId, hostname));
    decipher.setAuthTag(body.subarray(body.length - TAG));
    plaintext = decipher.update(body.subarray(HEADER + IV, body.length - TAG), undefined, "utf8") + decipher.final("utf8");
  } catch {
    return null;
  }
  let value: unknown;
  try {
    value = JSON.parse(plaintext);
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 7) return null;
  const [id, clientPk, credentialId, apiId, issuedAt, expiresAt, scope] = value as unknown[];
  if (!isString(id) || !isString(clientPk) || !isString(credentialId) || !isString(apiId) || !isTime(issuedAt) || !isTime(expiresAt)) return null;
  if (!Array.isArray(scope) || !scope.every(isString)) return null;
  return { id, clientPk, credentialId, apiId, scope, issuedAt: new Date(issuedAt), expiresAt: new Date(expiresAt) };
}
