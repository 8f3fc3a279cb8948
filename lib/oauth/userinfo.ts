import type { Endpoint } from "../http/context";
import { json } from "../http/errors";
import { invalidToken, loadHumanAuthority, readBearer } from "./bearer";

export const userinfoEndpoint: Endpoint = async (request, ctx) => {
  const token = readBearer(request);
  const authority = await loadHumanAuthority(ctx, token);
  if (!authority) throw invalidToken();
  const body: Record<string, unknown> = { sub: authority.subject };
  if (authority.organizationId) body.organization_id = authority.organizationId;
  if (authority.connectionId) body.connection_id = authority.connectionId;
  if (authority.scope.includes("email")) {
    body.email = authority.email;
    body.email_verified = authority.emailVerified === true;
  }
  if (authority.scope.includes("profile") && authority.name && authority.name.trim() !== "") body.name = authority.name;
  return json(body);
};
