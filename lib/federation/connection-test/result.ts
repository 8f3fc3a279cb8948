/**
 * The end of a connection test, at the same callback as a sign-in (lib/sign-in/steps/federation.ts
 * hands a round trip of purpose `test` here): only in the browser holding the test's secret, the
 * round trip consumed once, the response verified exactly as a sign-in's (the upstream's
 * verification, SAML's at the ACS), and the admission rule asked what a sign-in would do with the
 * identity (lib/federation/identities.ts `admissionOf`, which writes nothing). The answer is a page
 * for the tester; the only record is the audit event `organization.connection_tested`. Nothing is
 * recorded on the connection's sign-in status and no sign-in signal is emitted.
 */
import { and, eq } from "drizzle-orm";
import { enterpriseConnections, organizations } from "../../../db/schema";
import { recordAudit } from "../../audit/events";
import { safeEqual, sha256Hex } from "../../crypto";
import type { EndpointContext } from "../../http/context";
import { clearCookie, parseCookieHeader } from "../../http/cookies";
import { logWarning } from "../../http/log";
import { hostedError } from "../../hosted/errors";
import { admissionOf, refusalText } from "../identities";
import { loadConnection } from "../providers";
import { answeredFailureOf, CALLBACK_PATH, callbackIdentity, consumeRoundTrip, type RoundTrip } from "../round-trip";
import { FederationError } from "../upstream/contract";
import { outboundRefusalOf } from "../upstream/transport";
import { testCookieName, type Tester } from "./begin";
import { connectionTestPage, type ConnectionTestOutcome, type ConnectionTestResult } from "./page";

/** Whether this round trip is a connection test (the callback's dispatch). */
export const isConnectionTest = (trip: RoundTrip): boolean => trip.purpose === "test";

/** GET <issuer>/federation/callback for a test's round trip. */
export async function connectionTestCallback(request: Request, ctx: EndpointContext, trip: RoundTrip, state: string, query: URLSearchParams): Promise<Response> {
  const tester = trip.tester;
  if (trip.purpose !== "test" || !trip.connectionId || !tester || !trip.browserBindingHash) return hostedError("federation_expired");
  // Only the browser that started the test sees its result (and it is not consumed for anyone else).
  const cookieName = testCookieName(trip.id);
  const secret = parseCookieHeader(request.headers.get("cookie")).get(cookieName);
  if (!secret || !safeEqual(trip.browserBindingHash, sha256Hex(secret))) return hostedError("federation_expired");
  if (!(await consumeRoundTrip(ctx, trip))) return hostedError("federation_expired");

  const [about] = await ctx.service.db
    .select({ name: enterpriseConnections.name, kind: enterpriseConnections.kind, active: enterpriseConnections.active, organizationId: organizations.id, organizationName: organizations.name })
    .from(enterpriseConnections)
    .innerJoin(organizations, eq(organizations.id, enterpriseConnections.organizationId))
    .where(and(eq(enterpriseConnections.workspaceId, ctx.workspace.id), eq(enterpriseConnections.id, trip.connectionId)))
    .limit(1);
  if (!about) return hostedError("federation_option_unavailable");

  const outcome = await verify(ctx, trip, state, query);
  const result: ConnectionTestResult & ConnectionTestOutcome = {
    connection: { name: about.name, kind: about.kind, active: about.active },
    organization: about.organizationName,
    ...outcome,
  };
  await recordAudit(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    type: "organization.connection_tested",
    actor: tester.id,
    subject: trip.connectionId,
    data: {
      organization_id: about.organizationId,
      connection_id: trip.connectionId,
      outcome: "identity" in outcome ? "succeeded" : "failed",
      by: tester.email,
      tester: tester.kind,
      ...("identity" in outcome ? { upstream_subject: outcome.identity.subject, admitted: outcome.admission.kind !== "refused" } : {}),
    },
    at: ctx.service.clock.now(),
  });
  const back = backLink(ctx, tester, about.organizationId);
  return connectionTestPage(result, back, [["Set-Cookie", clearCookie(cookieName, `${ctx.basePath}${CALLBACK_PATH}`)]]);
}



/** The identity the upstream asserted, verified as a sign-in's would be, and what a sign-in would do with it; or the condition that failed. */
async function verify(ctx: EndpointContext, trip: RoundTrip, state: string, query: URLSearchParams): Promise<ConnectionTestOutcome> {
  const failedAtAcs = answeredFailureOf(trip);
  if (failedAtAcs) return { failure: failedAtAcs };
  try {
    const loaded = await loadConnection(ctx, trip.connectionId!, { disabledToo: true });
    if (!loaded) return { failure: "The connection or its organization was removed or disabled during the test" };
    const identity = await callbackIdentity(ctx, trip, state, query, loaded);
    if (!identity) return { failure: "No verified response from the identity provider reached Latchkey for this test" };
    const admission = await admissionOf(ctx, loaded, identity);
    return { identity, admission, refusal: admission.kind === "refused" ? refusalText(identity, admission.reason) : null };
  } catch (error) {
    if (!(error instanceof FederationError)) throw error;
    const refused = outboundRefusalOf(error);
    if (refused) logWarning(`connection test at ${ctx.workspace.id}: upstream refused`, refused.message);
    return { failure: error.message };
  }
}

/** Where the page links back to: the page the test was started from (the admin portal's), or the organization in the console for an operator. */
function backLink(ctx: EndpointContext, tester: Tester, organizationId: string): string | null {
  if (tester.back) return tester.back;
  if (tester.kind !== "operator") return null;
  return `${ctx.service.config.publicUrl}/console/w/${encodeURIComponent(ctx.workspace.id)}/organizations/${encodeURIComponent(organizationId)}`;
}
