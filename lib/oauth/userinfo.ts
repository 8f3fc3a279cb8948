import type { Endpoint } from "../http/context";
import { answerUnknownClientError, withCors } from "./cors";
import { json } from "../http/errors";
import { requireHumanToken } from "./bearer";

export const userinfoEndpoint: Endpoint = async (request, ctx) => {
  try {
    const { authority, origin, headers } = await requireHumanToken(request, ctx, "/oidc/userinfo");
    const body: Record<string, unknown> = { sub: authority.subject };
    if (authority.organizationId) body.organization_id = authority.organizationId;
    if (authority.connectionId) body.connection_id = authority.connectionId;
    if (authority.scope.includes("email")) {
      body.email = authority.email;
      body.email_verified = authority.emailVerified === true;
    }
    if (authority.scope.includes("profile") && authority.name && authority.name.trim() !== "") body.name = authority.name;
    return withCors(json(body, 200, headers), origin);
  } catch (error) {
    // Every failure comes before the token's client is confirmed.
    return answerUnknownClientError(error, request, ctx);
  }
};
