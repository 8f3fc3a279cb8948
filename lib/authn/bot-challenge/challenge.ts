/**
 * The proof of work (ALTCHA's protocol, altcha-lib on the server): the page gets a challenge, the
 * browser finds the number whose SHA-256 with the challenge's salt is the challenge (on average
 * half of `BOT_CHALLENGE_MAX_NUMBER` hashes; the server checks it with one), and the form posts the
 * solution. A challenge is signed with a key derived from the master key for the workspace, bound
 * to one sign-in (its transaction id is in the signed salt), expires with the sign-in, and is
 * accepted once: its solution is claimed by an insert (`bot_challenge_solutions`), one winner
 * however many posts race. Nothing leaves the server and nothing is asked of a third party.
 */
import { createChallenge, verifySolution } from "altcha-lib/v1";
import type { Payload } from "altcha-lib/v1/types";
import { botChallengeSolutions } from "../../../db/schema";
import { MINUTE } from "../../clock";
import { deriveKey, hmacBase64Url } from "../../crypto";
import type { EndpointContext } from "../../http/context";

/** The range the secret number is drawn from: a browser tries half of it on average. */
export const BOT_CHALLENGE_MAX_NUMBER = 500_000;
/** As long as a sign-in lives. */
export const BOT_CHALLENGE_TTL_MS = 10 * MINUTE;
const ALGORITHM = "SHA-256" as const;

type Ctx = Pick<EndpointContext, "service" | "workspace">;

/** The workspace's signing key: one workspace's challenges are no challenges in another. */
function signingKey(ctx: Ctx): string {
  return hmacBase64Url(deriveKey(ctx.service.config.masterKey, "bot-challenge"), ctx.workspace.id);
}

/** A new challenge for the sign-in `txId`, as the page hands it to the browser (JSON). */
export async function newChallenge(ctx: Ctx, txId: string): Promise<string> {
  const expires = new Date(ctx.service.clock.now().getTime() + BOT_CHALLENGE_TTL_MS);
  const challenge = await createChallenge({ algorithm: ALGORITHM, hmacKey: signingKey(ctx), maxNumber: BOT_CHALLENGE_MAX_NUMBER, expires, params: { tx: txId } });
  return JSON.stringify(challenge);
}

/** The posted solution (base64 of ALTCHA's JSON payload), or null when it is not one. */
function readPayload(value: string | null): Payload | null {
  if (!value || value.length > 1024) return null;
  try {
    const p = JSON.parse(Buffer.from(value, "base64").toString("utf8")) as Partial<Payload>;
    const ok =
      p.algorithm === ALGORITHM &&
      typeof p.challenge === "string" &&
      /^[0-9a-f]{64}$/.test(p.challenge) &&
      Number.isSafeInteger(p.number) &&
      typeof p.salt === "string" &&
      p.salt.length <= 256 &&
      typeof p.signature === "string";
    return ok ? (p as Payload) : null;
  } catch {
    return null;
  }
}

/**
 * Whether `value` solves a challenge this workspace signed for the sign-in `txId`, still live, and
 * not accepted before; accepting it uses it up.
 */
export async function acceptSolution(ctx: Ctx, txId: string, value: string | null): Promise<boolean> {
  const payload = readPayload(value);
  if (!payload) return false;
  const params = new URLSearchParams(payload.salt.split("?")[1] ?? "");
  const expires = Number(params.get("expires")) * 1000;
  const now = ctx.service.clock.now().getTime();
  if (params.get("tx") !== txId || !Number.isFinite(expires) || expires <= now) return false;
  // The signature and the work, with the server's one hash; the expiry was judged by the injected clock above.
  if (!(await verifySolution(payload, signingKey(ctx), false))) return false;
  const claimed = await ctx.service.db
    .insert(botChallengeSolutions)
    .values({ workspaceId: ctx.workspace.id, challenge: payload.challenge, expiresAt: new Date(expires) })
    .onConflictDoNothing()
    .returning({ challenge: botChallengeSolutions.challenge });
  return claimed.length === 1;
}
