/**
 * grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 §3.4–3.5): the device polls
 * with its device code. An approved authorization is consumed by exactly one poll (one conditional
 * update), which creates the grant and its tokens as the code exchange does (lib/oauth/human-grant.ts);
 * every other poll is recorded (an early one raises the interval) and answered
 * authorization_pending, slow_down, access_denied, expired_token or invalid_grant.
 */
import { newId } from "../../crypto";
import { inTransaction } from "../../http/transaction";
import { invalidGrant, invalidRequest } from "../errors";
import { issueHumanGrant, type GrantHandler } from "../human-grant";
import { allowsDeviceFlow } from "./endpoint";
import { accessDenied, authorizationPending, expiredToken, slowDown, unauthorizedClient } from "./errors";
import { consumeApproved, recordPoll } from "./store";

export const DEVICE_CODE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";

const unknownCode = () => invalidGrant("The device code is invalid or was issued to another client");

export const deviceCodeGrant: GrantHandler = {
  grantType: DEVICE_CODE_GRANT_TYPE,
  parameters: new Set(["grant_type", "device_code", "client_id"]),
  clients: { types: new Set(["PUBLIC", "WEB_CONFIDENTIAL"]), refusal: "This client cannot use the device_code grant" },
  handle(params, { client, credentialId }, outer, _request, sender) {
    const deviceCode = params.get("device_code");
    if (!deviceCode) throw invalidRequest("device_code is required");
    if (!allowsDeviceFlow(client)) throw unauthorizedClient();
    return inTransaction(outer, async (ctx) => {
      const grantId = newId();
      const consumed = await consumeApproved(ctx, deviceCode, client.id, grantId);
      if (consumed) {
        return issueHumanGrant(ctx, {
          client,
          credentialId: credentialId ?? null,
          grantId,
          userId: consumed.userId!,
          sessionId: consumed.sessionId!,
          scope: consumed.scope,
          apiId: consumed.apiId,
          nonce: null,
          sender: sender ?? null,
          refusals: { authority: "The authorization behind this device code is no longer valid", unusable: "The device code is invalid, expired or already used" },
        });
      }
      // Recorded and committed with the answer (a rule error commits: lib/http/transaction.ts).
      const poll = await recordPoll(ctx, deviceCode, client.id);
      if (!poll) throw unknownCode();
      if (poll.expiresAt <= ctx.service.clock.now()) throw expiredToken();
      switch (poll.status) {
        case "consumed":
          throw invalidGrant("The device code was already used");
        case "denied":
          throw accessDenied();
        case "approved":
          // Approved between this poll's two statements: the next poll receives the tokens.
          throw authorizationPending();
        case "pending":
          throw poll.early ? slowDown(poll.interval) : authorizationPending();
      }
    });
  },
};
