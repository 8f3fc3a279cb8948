/**
 * POST /auth/account/launch?client_id=… (SPEC.md): the customer server starts a handoff for its
 * signed-in user with the user's real access token (`user_token`) and a fresh `state`. The token
 * must be live with its whole authority chain and this client's (REAUTHENTICATION_REQUIRED
 * otherwise); the application must offer the portal and have a saved configuration
 * (NOT_AVAILABLE otherwise). A state is used for one launch only. The launch is single use and
 * expires after 120 seconds; the answer is `launch_url`, `intent` and `expires_at`.
 *
 * The launch URL carries a random handle; the launch row's id is the handle's SHA-256, so the
 * database holds no usable reference.
 */
import { accountSecurityLaunches } from "../../db/schema";
import { randomToken, sha256Hex } from "../crypto";
import type { EndpointContext } from "../http/context";
import { handoffJson, invalidHandoff } from "./errors";
import {
  after,
  auditHandoff,
  expiresAt,
  HANDOFF_INTENT,
  handoffEndpoint,
  LAUNCH_TTL_MS,
  readHandoffCall,
  requireHandoffOffered,
  requireUserToken,
  stateMember,
} from "./handoff";

const MEMBERS = ["user_token", "state"] as const;

/** The browser's entry point of a launch, relative to the issuer (lib/account-security/handoff-browser.ts). */
export const LAUNCH_PATH = "/auth/account/handoff";

async function launch(request: Request, ctx: EndpointContext): Promise<Response> {
  const { client, body } = await readHandoffCall(request, ctx, MEMBERS);
  const state = stateMember(body);
  requireHandoffOffered(client);
  const token = await requireUserToken(ctx, client, body);
  const now = ctx.service.clock.now();
  const handle = randomToken(32);
  const expires = after(ctx, LAUNCH_TTL_MS);
  const inserted = await ctx.service.db
    .insert(accountSecurityLaunches)
    .values({
      id: sha256Hex(handle),
      workspaceId: ctx.workspace.id,
      clientPk: client.id,
      userId: token.userId,
      sessionId: token.sessionId,
      grantId: token.grantId,
      stateHash: sha256Hex(state),
      callbackState: state,
      intent: HANDOFF_INTENT,
      createdAt: now,
      expiresAt: expires,
    })
    .onConflictDoNothing()
    .returning({ id: accountSecurityLaunches.id });
  if (inserted.length === 0) throw invalidHandoff("This state was already used for a launch; send a fresh state for every launch");
  await auditHandoff(ctx, request, {
    type: "account_security.handoff_launched",
    client,
    subject: token.userId,
    data: { launch: inserted[0].id.slice(0, 16), session: token.sessionId, grant: token.grantId, intent: HANDOFF_INTENT },
  });
  return handoffJson({
    launch_url: `${ctx.issuer}${LAUNCH_PATH}?launch=${handle}`,
    intent: HANDOFF_INTENT,
    expires_at: expiresAt(expires),
  });
}

export const launchEndpoint = handoffEndpoint("account-security launch", launch);
