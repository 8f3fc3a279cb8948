/**
 * Pushed authorization requests (RFC 9126), one feature: the endpoint (./endpoint.ts), the
 * authorization endpoint's use of a pushed request (./authorize.ts), the per-application option
 * that requires pushing (./option.ts), and the pushed requests' retention.
 */
import { pushedAuthorizationRequests } from "../../../db/schema";
import { defineFeature } from "../../surfaces/feature";
import { defineRetention, PURGE_GRACE_MS } from "../../surfaces/retention";
import { REQUIRE_PUSHED_REQUESTS } from "./option";
import { PUSHED_AUTHORIZATION_ROUTES } from "./routes";

/** A pushed request lives 60 seconds; used or not, it is kept only for the purge's grace. */
export const PUSHED_REQUESTS = defineRetention({
  name: "pushed_authorization_requests",
  table: pushedAuthorizationRequests,
  key: pushedAuthorizationRequests.uriHash,
  expiresAt: pushedAuthorizationRequests.expiresAt,
  grace: PURGE_GRACE_MS,
  workspaceId: pushedAuthorizationRequests.workspaceId,
});

export const PUSHED_AUTHORIZATION_FEATURE = defineFeature({
  name: "pushed-authorization",
  routes: PUSHED_AUTHORIZATION_ROUTES,
  applicationOptions: [REQUIRE_PUSHED_REQUESTS],
  retention: [PUSHED_REQUESTS],
});
