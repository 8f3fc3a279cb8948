/**
 * User codes (RFC 8628 §6.1): 8 characters from 20 consonants that no font confuses and that spell
 * no word, shown as XXXX-XXXX. What a user types is normalized once, here, before any rule sees it
 * (uppercase, dashes and spaces removed). 20^8 is about 2^34.6 codes: the guessing limits
 * (./limits.ts) and the 10-minute life are what keep a guess from landing; at rest each is a keyed
 * hash (HMAC under the master key, with the workspace), so a copy of the table does not hand out
 * the live codes by brute force.
 */
import { randomInt } from "node:crypto";
import { deriveKey, hmacBase64Url } from "../../crypto";

export const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
export const USER_CODE_LENGTH = 8;
const SHAPE = new RegExp(`^[${USER_CODE_ALPHABET}]{${USER_CODE_LENGTH}}$`);

export function newUserCode(): string {
  let code = "";
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** XXXX-XXXX, as shown and as sent in `user_code`. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** A typed code as the rules read it: uppercase, without dashes and whitespace; null when it cannot be a user code. */
export function normalizeUserCode(typed: string): string | null {
  const code = typed.toUpperCase().replace(/[\s-]/g, "");
  return SHAPE.test(code) ? code : null;
}

/** The stored form of a normalized code. */
export function userCodeHash(masterKey: Buffer, workspaceId: string, code: string): string {
  return hmacBase64Url(deriveKey(masterKey, "device-user-code"), `${workspaceId}\u0000${code}`);
}
