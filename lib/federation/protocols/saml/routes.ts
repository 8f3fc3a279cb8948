/**
 * A SAML connection's routes under the issuer: its ACS and its SP metadata.
 *
 * A SAML response arrives as a cross-site POST, without the browser's SameSite=Lax cookies: the
 * ACS verifies it there (./upstream.ts), records the assertion's ID once (replays refused),
 * answers the round trip once, and sends the browser to the same callback GET as OAuth's
 * (lib/sign-in/steps/federation.ts), where the pending sign-in's cookie binds it to the browser
 * that started it. The response itself never travels in a URL. A round trip that tests the
 * connection is answered the same way, its failure kept on it for the tester's page.
 */
import type { Endpoint, EndpointContext } from "../../../http/context";
import { mediaType, readBody } from "../../../http/form";
import { redirect303 } from "../../../http/response";
import type { Route } from "../../../http/route";
import { hostedError, type HostedErrorCode } from "../../../hosted/errors";
import { recordConnectionFailure } from "../../connection-status";
import { loadConnection, type LoadedProvider } from "../../providers";
import { answerRoundTrip, answerRoundTripFailure, CALLBACK_PATH, findRoundTrip, UPSTREAM_FAILURE, upstreamCall, type RoundTrip } from "../../round-trip";
import { FederationError } from "../../upstream/contract";
import type { ProtocolRouteDeps } from "../contract";
import { SAML_ACS_PATH, SAML_METADATA_PATH } from "../../upstream/saml-settings";
import { firstUseOfAssertion, idpInitiatedDestination, spMetadataOf } from "./settings";
import { completeSaml, SAML_ACS_BODY_LIMIT } from "../../upstream/saml";

/** The connection a SAML address names (`?connection=`), when it is an enabled SAML connection (or a disabled one under test). */
async function samlConnection(ctx: EndpointContext, connectionId: string | null, options: { disabledToo?: boolean } = {}): Promise<LoadedProvider | null> {
  if (!connectionId || connectionId.length > 64) return null;
  try {
    const loaded = await loadConnection(ctx, connectionId, options);
    return loaded?.provider.protocol === "saml" ? loaded : null;
  } catch (error) {
    if (error instanceof FederationError) return null;
    throw error;
  }
}

/** The ACS's form body, or the hosted page that refuses it. */
async function acsForm(request: Request): Promise<URLSearchParams | Response> {
  if (mediaType(request) !== "application/x-www-form-urlencoded") return hostedError("form_media_type");
  try {
    return new URLSearchParams(await readBody(request, SAML_ACS_BODY_LIMIT));
  } catch {
    return hostedError("form_too_large");
  }
}

type Fail = (reason: string, code: HostedErrorCode) => Promise<Response>;

/**
 * A response no pending sign-in through this connection asked for (started at the identity
 * provider, or one that outlived its round trip): never a session from it; where the connection
 * names an application, the user signs in from there.
 */
async function unsolicited(ctx: EndpointContext, loaded: LoadedProvider, connectionId: string, relayState: string, fail: Fail): Promise<Response> {
  const destination = await idpInitiatedDestination(ctx, loaded.provider.saml!.config);
  if (destination) {
    await recordConnectionFailure(ctx, connectionId, `A sign-in started at the identity provider was sent to ${destination.clientId} to sign in from there`);
    return redirect303(destination.url);
  }
  if (!relayState) return fail("An unsolicited response (no RelayState): sign-in started at the identity provider is not accepted", "federation_unsolicited");
  return fail("The RelayState names no pending sign-in through this connection (expired, already answered, or unknown)", "federation_expired");
}

/** Verifies the response for the round trip, records its assertion once and answers the round trip with the identity. */
async function answer(ctx: EndpointContext, loaded: LoadedProvider, trip: RoundTrip & { requestId: string }, samlResponse: string, relayState: string, fail: Fail): Promise<Response> {
  let verified;
  try {
    verified = await completeSaml(loaded.provider, upstreamCall(ctx), { samlResponse, requestId: trip.requestId });
  } catch (error) {
    if (error instanceof FederationError) return fail(error.message, UPSTREAM_FAILURE[error.code]);
    throw error;
  }
  if (!(await firstUseOfAssertion(ctx, trip.connectionId!, verified.assertionId, verified.replayUntil))) return fail("A replayed assertion (its ID was already used)", "federation_invalid_response");
  if (!(await answerRoundTrip(ctx, trip, verified.identity))) return fail("A second response to a request already answered", "federation_expired");
  return toCallback(ctx, relayState);
}

/** On to the callback GET in the browser, where the round trip's own binding is checked. */
const toCallback = (ctx: EndpointContext, relayState: string) => redirect303(`${ctx.basePath}${CALLBACK_PATH}?${new URLSearchParams({ state: relayState })}`);

/**
 * POST <issuer>/federation/saml/acs?connection=<id>: the identity provider's Response (HTTP-POST
 * binding). Every failure ends on a hosted error page and is recorded on the connection for its
 * administrators, with the condition that failed.
 */
export const samlAcsEndpoint: Endpoint = async (request, ctx) => {
  const body = await acsForm(request);
  if (body instanceof Response) return body;
  const named = new URL(request.url).searchParams.get("connection");
  const relayStates = body.getAll("RelayState");
  const relayState = relayStates.length === 1 ? relayStates[0]! : "";
  const trip = relayState ? await findRoundTrip(ctx, relayState) : null;
  // An administrator's test of this connection (lib/federation/connection-test): a disabled connection too,
  // and its failures are the tester's to read on the test's page, not the connection's sign-in status.
  const test = trip?.purpose === "test" && trip.connectionId === named ? trip : null;
  const loaded = await samlConnection(ctx, named, { disabledToo: test !== null });
  if (!loaded?.connection) return hostedError("federation_option_unavailable");
  const connectionId = loaded.connection.id;
  const fail: Fail = async (reason, code) => {
    if (test) return (await answerRoundTripFailure(ctx, test, reason)) ? toCallback(ctx, relayState) : hostedError(code);
    await recordConnectionFailure(ctx, connectionId, reason);
    return hostedError(code);
  };
  const responses = body.getAll("SAMLResponse");
  if (responses.length !== 1 || !responses[0]) return fail("The POST carries no single SAMLResponse", "federation_invalid_response");
  if (!trip || trip.connectionId !== connectionId || trip.requestId === null) return unsolicited(ctx, loaded, connectionId, relayState, fail);
  return answer(ctx, loaded, { ...trip, requestId: trip.requestId }, responses[0], relayState, fail);
};

/** GET <issuer>/federation/saml/metadata?connection=<id>: the connection's SP metadata (also its entity ID). */
const samlMetadataEndpoint =
  (notFound: () => Response): Endpoint =>
  async (request, ctx) => {
    const connectionId = new URL(request.url).searchParams.get("connection");
    const metadata = connectionId && connectionId.length <= 64 ? await spMetadataOf(ctx, connectionId) : null;
    if (!metadata) return notFound();
    return new Response(metadata, {
      status: 200,
      headers: { "Content-Type": "application/samlmetadata+xml", "Content-Disposition": `inline; filename="sp-metadata-${connectionId}.xml"`, "Cache-Control": "no-cache" },
    });
  };

export const samlRoutes = (deps: ProtocolRouteDeps): Route[] => [
  { method: "POST", path: SAML_ACS_PATH, endpoint: samlAcsEndpoint, machine: false, errors: "hosted" },
  { method: "GET", path: SAML_METADATA_PATH, endpoint: samlMetadataEndpoint(deps.notFound), machine: false },
];
