/**
 * POST /auth/account/approve?client_id=… (SPEC.md): the customer's handoff callback received
 * `challenge`, `state` and `intent`, checked them against its pending record and dashboard
 * session, and now asks for the completion URL with the user's real access token.
 *
 * Approved only for the same live user, source session and grant as the launch (the token is
 * judged by lib/authority's access-token chain, then must name the launch's user, session and
 * grant), with the launch's state and challenge, within the launch's 120 seconds, once: one
 * conditional UPDATE issued → approved … RETURNING, so of any number of parallel calls exactly
 * one succeeds. The completion handle is random, only its hash is stored, and it lives 30 seconds.
 */
import { and, eq, gt, isNotNull } from "drizzle-orm";
import { accountSecurityLaunches } from "../../db/schema";
import { randomToken, sha256Hex } from "../crypto";
import type { EndpointContext } from "../http/context";
import { handoffJson, invalidHandoff } from "./errors";
import {
  after,
  auditHandoff,
  COMPLETION_TTL_MS,
  expiresAt,
  handoffEndpoint,
  readHandoffCall,
  requireHandoffOffered,
  requireUserToken,
  stateMember,
  stringMember,
} from "./handoff";

const MEMBERS = ["user_token", "challenge", "state"] as const;

/** The browser's completion URL, relative to the issuer (lib/account-security/handoff-browser.ts). */
export const COMPLETION_PATH = "/auth/account/complete";

async function approve(request: Request, ctx: EndpointContext): Promise<Response> {
  const { client, body } = await readHandoffCall(request, ctx, MEMBERS);
  const state = stateMember(body);
  const challenge = stringMember(body, "challenge", 128);
  requireHandoffOffered(client);
  const token = await requireUserToken(ctx, client, body);
  const now = ctx.service.clock.now();
  const handle = randomToken(32);
  const expires = after(ctx, COMPLETION_TTL_MS);
  const L = accountSecurityLaunches;
  const [approved] = await ctx.service.db
    .update(L)
    .set({ state: "approved", approvedAt: now, completionHash: sha256Hex(handle), completionExpiresAt: expires })
    .where(
      and(
        eq(L.workspaceId, ctx.workspace.id),
        eq(L.clientPk, client.id),
        eq(L.stateHash, sha256Hex(state)),
        eq(L.state, "issued"),
        isNotNull(L.challengeHash),
        eq(L.challengeHash, sha256Hex(challenge)),
        gt(L.expiresAt, now),
        eq(L.userId, token.userId),
        eq(L.sessionId, token.sessionId),
        eq(L.grantId, token.grantId),
      ),
    )
    .returning({ id: L.id, userId: L.userId });
  if (!approved) {
    await auditHandoff(ctx, request, { type: "account_security.handoff_approval_refused", client, subject: token.userId, reason: "no_matching_launch" });
    throw invalidHandoff("No launch matches: the state or challenge is wrong, the launch expired or was already used, or it was started for another user, session or grant");
  }
  await auditHandoff(ctx, request, { type: "account_security.handoff_approved", client, subject: approved.userId, data: { launch: approved.id.slice(0, 16) } });
  return handoffJson({ completion_url: `${ctx.issuer}${COMPLETION_PATH}?handle=${handle}`, expires_at: expiresAt(expires) });
}

export const approveEndpoint = handoffEndpoint("account-security approve", approve);
