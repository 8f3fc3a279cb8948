/**
 * The device authorization grant (RFC 8628), one feature: the device authorization endpoint
 * (./endpoint.ts), the grant at the token endpoint (./grant.ts, listed in lib/oauth/grants), the
 * hosted device page's rules (./verification.ts; the page: app/t/[tenant]/device), the user code
 * (./user-code.ts) and its guessing limits (./limits.ts), the per-application switch (./option.ts),
 * and the retention of its rows. docs/device-flow.md says how to use it.
 */
import { deviceAuthorizations } from "../../../db/schema";
import { defineFeature } from "../../surfaces/feature";
import { defineRetention, PURGE_GRACE_MS } from "../../surfaces/retention";
import { DEVICE_AUTHORIZATION_OPTION } from "./option";
import { DEVICE_AUTHORIZATION_ROUTES } from "./routes";

/** Device authorizations live 10 minutes; an expired one answers expired_token, a purged one invalid_grant. */
export const DEVICE_AUTHORIZATIONS = defineRetention({
  name: "device_authorizations",
  table: deviceAuthorizations,
  key: deviceAuthorizations.id,
  expiresAt: deviceAuthorizations.expiresAt,
  grace: PURGE_GRACE_MS,
  workspaceId: deviceAuthorizations.workspaceId,
});

export const DEVICE_AUTHORIZATION_FEATURE = defineFeature({
  name: "device-authorization",
  routes: DEVICE_AUTHORIZATION_ROUTES,
  applicationOptions: [DEVICE_AUTHORIZATION_OPTION],
  retention: [DEVICE_AUTHORIZATIONS],
});
