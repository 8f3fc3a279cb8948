/**
 * The gate every sign-in form that emails a code passes (a sign-in code, sign-up's, a password
 * reset's): the proof of work where the workspace asks one (lib/authn/bot-challenge), then the
 * email code's send limits (its cooldown and its counts per address and client address). Refused,
 * it names the form's error; allowed, `sent` counts the send on both.
 */
import { botCheck } from "../authn/bot-challenge/gate";
import { sendGate } from "../authn/factors/email-code";
import type { EndpointContext } from "../http/context";

export type CodeSendGate = { allowed: false; error: "bot_check" | "code_resend_wait" | "rate_limited" } | { allowed: true; sent(): Promise<void> };

export async function codeSendGate(request: Request, ctx: EndpointContext, tx: { id: string; botChallenged: boolean }, form: URLSearchParams, address: string): Promise<CodeSendGate> {
  const bot = await botCheck(request, ctx, tx, form, address);
  if (!bot.ok) return { allowed: false, error: "bot_check" };
  const gate = await sendGate(ctx, request, address);
  if (!gate.allowed) return { allowed: false, error: gate.reason === "cooldown" ? "code_resend_wait" : "rate_limited" };
  return {
    allowed: true,
    sent: async () => {
      await gate.recordSend();
      bot.count();
    },
  };
}
