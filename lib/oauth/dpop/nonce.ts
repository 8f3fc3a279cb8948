/**
 * Server nonces (RFC 9449 §8, §9), stateless: the nonce of a time window is an HMAC of the
 * workspace and the window's number under a key derived from the master key, so every instance
 * issues and accepts the same ones with no storage. A nonce is accepted in the window it was
 * issued in and the next one (5 to 10 minutes); every DPoP answer offers the current one.
 */
import { MINUTE } from "../../clock";
import { deriveKey, hmacBase64Url, safeEqual } from "../../crypto";
import type { EndpointContext } from "../../http/context";

export const DPOP_NONCE_WINDOW_MS = 5 * MINUTE;

const keys = new WeakMap<Buffer, Buffer>();

function nonceKey(masterKey: Buffer): Buffer {
  let key = keys.get(masterKey);
  if (!key) keys.set(masterKey, (key = deriveKey(masterKey, "dpop-nonce")));
  return key;
}

type Ctx = Pick<EndpointContext, "service" | "workspace">;

const windowOf = (ctx: Ctx) => Math.floor(ctx.service.clock.now().getTime() / DPOP_NONCE_WINDOW_MS);

function nonceOf(ctx: Ctx, window: number): string {
  // 128 bits of the HMAC: unguessable, and short in every proof.
  return hmacBase64Url(nonceKey(ctx.service.config.masterKey), `${ctx.workspace.id}:${window}`).slice(0, 22);
}

/** The nonce to offer now. */
export function currentNonce(ctx: Ctx): string {
  return nonceOf(ctx, windowOf(ctx));
}

/** Whether `nonce` is the current window's or the previous one's. */
export function nonceAccepted(ctx: Ctx, nonce: string): boolean {
  const window = windowOf(ctx);
  return safeEqual(nonce, nonceOf(ctx, window)) || safeEqual(nonce, nonceOf(ctx, window - 1));
}

/** The header every answer to a DPoP request carries. */
export const nonceHeader = (ctx: Ctx): Record<string, string> => ({ "DPoP-Nonce": currentNonce(ctx) });
