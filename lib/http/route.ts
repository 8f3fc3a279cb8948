import type { Endpoint } from "./context";

/** One entry of the route table (lib/server/router.ts); feature modules export theirs. */
export interface Route {
  method: "GET" | "POST";
  /** Path relative to the issuer, e.g. `/oauth2/token`. */
  path: string;
  endpoint: Endpoint;
  /**
   * Machine-facing endpoints are served by the production server straight from this table,
   * before Next's router; the rest (authorize, hosted form posts) go through Next as well.
   */
  machine: boolean;
  /**
   * The shape of this route's failures that happen outside the endpoint (rate limit, the
   * database failing while the workspace is resolved): the OAuth JSON body (default), a hosted
   * page for browser routes, the permission check's problem document, or the account-security
   * handoff's error body (lib/account-security/errors.ts).
   */
  errors?: "oauth" | "hosted" | "problem" | "account-security";
}
