/**
 * POST /authorization/check (SPEC.md): an API server asks whether the bearer of an access token
 * may perform `permission` on `resource`, at workspace level or within `organization_id`.
 *
 * 200 `{"allowed": true}` only while the token and its whole authority chain are current, the
 * resource is the token's audience, the permission is in the token's scope and still held now
 * (a user's role at workspace level or in the session's organization; a workload's API grant),
 * and a workload asks at workspace level. Every other well-formed request is 200
 * `{"allowed": false}`. One SQL round trip, nothing cached: a role or grant change is seen by the
 * next check. Errors use the check's own problem shape (lib/authz/errors.ts); a database failure
 * is 503, never an answer.
 */
import type { Endpoint, EndpointContext } from "../http/context";
import { failureResponse } from "../http/errors";
import { isStorableText } from "../text";
import { readJsonObject } from "../http/json";
import { loadTokenAuthorityWithPermission, type PermissionFacts, type TokenAuthority } from "../oauth/authority";
import { BOUND_AS_BEARER, presentedToken, provenToken, resourceResponseHeaders } from "../oauth/dpop/resource";
import { resourceChallenge, type Refuse } from "../oauth/dpop/refusals";
import { lightResponse } from "../http/response";
import {
  badRequest,
  checkFailures,
  checkPayloadTooLarge,
  checkUnsupportedMediaType,
  CheckError,
  invalidCheckToken,
} from "./errors";

const CHECK_BODY_LIMIT = 2 * 1024;

export interface CheckRequest {
  resource: string;
  permission: string;
  organizationId: string | null;
}

const MEMBERS = ["organization_id", "permission", "resource"];

/** The request rules: no query, no Origin, JSON of at most 2 KiB with exactly the three members. */
async function readCheckRequest(request: Request): Promise<CheckRequest> {
  if (request.url.includes("?")) throw badRequest("The permission check takes no query string");
  if (request.headers.has("origin")) throw badRequest("The permission check is called by API servers, not from a browser origin");
  const body = await readJsonObject(request, {
    limit: CHECK_BODY_LIMIT,
    members: MEMBERS,
    membersDescription: "The body must have exactly the members resource, permission and organization_id, once each",
    refuse: { unsupportedMediaType: checkUnsupportedMediaType, tooLarge: checkPayloadTooLarge, badRequest },
  });
  const { resource, permission, organization_id: organizationId } = body;
  if (typeof resource !== "string" || resource === "") throw badRequest("resource must be a nonempty string");
  if (typeof permission !== "string" || permission === "") throw badRequest("permission must be a nonempty string");
  if (organizationId !== null && (typeof organizationId !== "string" || organizationId === "")) {
    throw badRequest("organization_id must be an organization id string or null");
  }
  if (![resource, permission, organizationId ?? ""].every(isStorableText)) throw badRequest(UNSTORABLE);
  return { resource, permission, organizationId };
}

const UNSTORABLE = "resource, permission and organization_id may not contain U+0000";

/** The decision over a current token's authority and the permission facts read with it. */
export function decide(authority: TokenAuthority, facts: PermissionFacts, check: CheckRequest): boolean {
  if (!authority.active) return false;
  if (authority.audience === null || authority.audience !== check.resource) return false;
  if (!authority.scope.includes(check.permission)) return false;
  if (!facts.apiDefines || !facts.clientGrantIncludes) return false;
  if (authority.kind === "workload") return check.organizationId === null;
  if (!facts.sessionOrganizationCurrent || !facts.userHolds) return false;
  return check.organizationId === null || check.organizationId === authority.organizationId;
}

async function check(request: Request, ctx: EndpointContext): Promise<Response> {
  const body = await readCheckRequest(request);
  const presented = presentedToken(request);
  if (!presented) throw invalidCheckToken("A bearer access token is required");
  const { token } = presented;
  const lookup = () => loadTokenAuthorityWithPermission(ctx, token, { permission: body.permission, organizationId: body.organizationId });
  // A DPoP-bound token comes with the proof its client sent the API, forwarded by the API (lib/oauth/dpop):
  // made by the token's key, for this token, at a URL of the API the check names, fresh and unseen.
  // A bearer request does as before.
  const found = presented.dpop ? await provenToken(request, ctx, { target: { forwardedFor: body.resource }, token }, refuseAtCheck, lookup, (f) => f.authority.jkt) : await lookup();
  // A token whose only dead links are the session's organization or connection (judged last) is
  // still the caller's token: it is answered, and denied (decide), rather than refused.
  if (!found || (found.refusal !== null && found.refusal !== "organization" && found.refusal !== "connection")) throw invalidCheckToken();
  if (!presented.dpop && found.authority.jkt !== null) throw invalidCheckToken(BOUND_AS_BEARER);
  return allowedResponse(decide(found.authority, found.facts, body), resourceResponseHeaders(ctx, presented));
}

/** A DPoP refusal in the check's problem shape, with the DPoP challenge. */
const refuseAtCheck: Refuse = (refusal) => new CheckError(401, "invalid_token", refusal.description, resourceChallenge(refusal));

const ALLOWED = JSON.stringify({ allowed: true });
const DENIED = JSON.stringify({ allowed: false });

function allowedResponse(allowed: boolean, extra: Record<string, string>): Response {
  return lightResponse(allowed ? ALLOWED : DENIED, 200, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store", Pragma: "no-cache", ...extra });
}

export const authorizationCheckEndpoint: Endpoint = async (request, ctx) => {
  try {
    return await check(request, ctx);
  } catch (error) {
    return failureResponse(checkFailures, error, "authorization check");
  }
};
