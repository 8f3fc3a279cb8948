/**
 * Testing an enterprise connection, one feature: an administrator sends their browser through the
 * organization's identity provider and, back at the callback, reads the attributes Latchkey
 * received and whether a sign-in through the connection would be admitted, without anyone being
 * signed in (no account, identity link, session, grant or membership). A disabled connection can be
 * tested (before enabling it). Only the browser that started a test sees its result.
 *
 * - ./begin.ts: `beginConnectionTest`, for any surface that authorizes its tester (the console's
 *   operation, ./console.ts; an organization's own administrators in another hosted surface, with
 *   `tester.kind = "organization_portal"`): it returns where to send the browser and the cookie to
 *   set first. The result page is the same for every tester.
 * - ./result.ts: the callback's end of a test (lib/sign-in/steps/federation.ts dispatches a round
 *   trip of purpose `test` to it); ./page.ts: the page.
 * - The audit event `organization.connection_tested` (lib/audit/catalogue.ts).
 * docs/enterprise-sign-in.md, "Testing a connection".
 */
import { defineFeature } from "../../surfaces/feature";
import { testConnection } from "./console";

export { beginConnectionTest, ConnectionTestError, TEST_COOKIE_PREFIX, testCookieName, type ConnectionTestErrorCode, type ConnectionTestRequest, type ConnectionTestStart, type Tester, type TesterKind } from "./begin";
export { connectionTestCallback, isConnectionTest } from "./result";
export { CONNECTION_TEST_TITLE } from "./page";

export const CONNECTION_TEST_FEATURE = defineFeature({
  name: "connection-test",
  operations: { testConnection },
});
