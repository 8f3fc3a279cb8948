import type { RequestLimits } from "../limits/declarations";
import type { Endpoint } from "./context";
import type { ErrorFamilyName } from "./errors";

/** One entry of the route table (lib/server/router.ts); feature modules export theirs. */
export interface Route {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path relative to the issuer, e.g. `/oauth2/token`. */
  path: string;
  /**
   * The route answers every path below `path` too (`/scim/v2/…`): an API with resource paths of
   * its own, which its endpoint reads from the request's URL. An exact path of the table wins.
   */
  below?: boolean;
  endpoint: Endpoint;
  /**
   * Machine-facing endpoints are served by the production server straight from this table,
   * before Next's router; the rest (authorize, hosted form posts) go through Next as well.
   */
  machine: boolean;
  /**
   * The shape of this route's failures that happen outside the endpoint (rate limit, the
   * database failing while the workspace is resolved): the OAuth JSON body (default), a hosted
   * page for browser routes, the permission check's problem document, the account-security
   * handoff's error body (lib/account-security/errors.ts), or SCIM's error resource.
   */
  errors?: ErrorFamilyName;
  /**
   * This endpoint's request limits besides the table's own (every route's per-address limit,
   * lib/server/router.ts), declared here and enforced by the route runner through the one limiter:
   * those per client address before the endpoint runs, those per client when the endpoint's client
   * authentication (lib/oauth/clients.ts) names the client. Answered 429 with Retry-After.
   */
  limits?: readonly RequestLimits[];
}
