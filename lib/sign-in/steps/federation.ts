/**
 * Signing in through an upstream provider (lib/federation): a social provider's button, single
 * sign-on by work email (home-realm discovery), the callback from the upstream, and each
 * connection protocol's own routes (lib/federation/protocols). A protocol whose response arrives
 * at its own endpoint answers the round trip there and sends the browser to the same callback
 * GET, where the pending sign-in's cookie binds it to the browser that started it.
 *
 * The round trip is bound to the pending sign-in and to this browser (the callback needs the
 * sign-in's HttpOnly cookie), consumed once, and verified by lib/federation/upstream. The verified
 * identity then signs in as lib/federation/identities.ts decides, and the sign-in continues like
 * any other first factor: the application's policy may still ask for MFA. Every failure ends on a
 * hosted error page, and nothing is created. A round trip that is an administrator's test of a
 * connection ends in lib/federation/connection-test instead.
 */
import type { Endpoint, EndpointContext } from "../../http/context";
import { mediaType, readBody } from "../../http/form";
import type { Route } from "../../http/route";
import { logWarning } from "../../http/log";
import { redirect303 } from "../../http/response";
import { hostedError, type HostedErrorCode } from "../../hosted/errors";
import { HOSTED_FORM_LIMIT } from "../../hosted/form-post";
import type { TransactionRow } from "../../oauth/pending-sign-in";
import { connectionForAddress } from "../../federation/home-realm";
import { federatedEvidence, refusalText, resolveIdentity, type RefusalReason } from "../../federation/identities";
import { loadConnection, loadSocialProvider, loadSocialProviderById, type LoadedProvider } from "../../federation/providers";
import { beginRoundTrip, CALLBACK_PATH, callbackIdentity, consumeRoundTrip, findRoundTrip, UPSTREAM_FAILURE } from "../../federation/round-trip";
import { recordConnectionFailure, recordConnectionSuccess } from "../../federation/connection-status";
import { FederationError, type UpstreamIdentity } from "../../federation/upstream/contract";
import { outboundRefusalOf } from "../../federation/upstream/transport";
import { connectionProtocolRoutes } from "../../federation/protocols";
import { connectionTestCallback, isConnectionTest } from "../../federation/connection-test";
import { notFoundResponse } from "../../oauth/errors";
import { identify, signInStep, toSignInPage, transactionOf, updateOpen } from "../flow";
import { normalizeEmail } from "../../authn/email-address";

const REFUSAL: Record<RefusalReason, HostedErrorCode> = {
  no_email: "federation_no_email",
  email_unverified: "federation_email_unverified",
  domain_of_organization: "federation_domain_of_organization",
  not_admitted: "federation_not_admitted",
  account_disabled: "federation_account_disabled",
  not_member: "federation_not_member",
};

/**
 * The hosted page for a failed round trip. A destination the outbound guard refused (an address
 * that is not public and not in UPSTREAM_ALLOW) is a setting of the workspace or the installation
 * to fix: the page says the option is not set up, and the log says why, under the request's id.
 */
function upstreamFailure(ctx: EndpointContext, error: unknown): Response {
  if (!(error instanceof FederationError)) throw error;
  const refused = outboundRefusalOf(error);
  if (refused) logWarning(`federated sign-in at ${ctx.workspace.id}: upstream refused`, refused.message);
  return hostedError(UPSTREAM_FAILURE[error.code]);
}

/** Sends the browser upstream for this sign-in (settings that cannot work, such as a missing secret, end on the hosted page). */
async function goUpstream(ctx: EndpointContext, tx: TransactionRow, load: () => Promise<LoadedProvider | null>): Promise<Response> {
  try {
    const loaded = await load();
    if (!loaded) return toSignInPage(ctx, tx.id, "method_not_allowed");
    return redirect303((await beginRoundTrip(ctx, tx, loaded)).url.href);
  } catch (error) {
    return upstreamFailure(ctx, error);
  }
}

/**
 * Home-realm discovery for a first-factor post: when the address is in a domain an organization
 * verified, the sign-in goes to that organization's connection instead (null otherwise). Not for
 * the account the user is proving to link an upstream identity to (its own connection sent the
 * user here).
 */
export async function homeRealmRedirect(ctx: EndpointContext, tx: TransactionRow, address: string): Promise<Response | null> {
  if (tx.federatedLink?.email && normalizeEmail(tx.federatedLink.email) === normalizeEmail(address)) return null;
  const target = await connectionForAddress(ctx, address);
  return target ? goUpstream(ctx, tx, () => loadConnection(ctx, target.connectionId)) : null;
}

/** POST /sign-in/federation: a social provider's button (`provider` = its key) or a connection (`connection` = its id). */
export const federationStartEndpoint = signInStep(async (_request, ctx, { tx, form }) => {
  const key = form.get("provider");
  if (key) return goUpstream(ctx, tx, () => loadSocialProvider(ctx, tx.clientPk, key));
  return toSignInPage(ctx, tx.id, "method_not_allowed");
});

/** POST /sign-in/sso: "Sign in with single sign-on": the work address decides the organization. */
export const ssoEndpoint = signInStep(async (_request, ctx, { tx, form }) => {
  const address = normalizeEmail(form.get("email"));
  if (!address) return toSignInPage(ctx, tx.id, "invalid_email");
  return (await homeRealmRedirect(ctx, tx, address)) ?? toSignInPage(ctx, tx.id, "sso_not_configured");
});

/** POST /sign-in/federation/cancel: give up linking an upstream identity; back to the methods. */
export const federationCancelEndpoint = signInStep(async (_request, ctx, { tx }) => {
  if (tx.federatedLink) await updateOpen(ctx, tx, { federatedLink: null });
  return toSignInPage(ctx, tx.id);
});

/** The parameters an upstream may send back (anything else is dropped). */
const CALLBACK_PARAMETERS = ["code", "state", "iss", "error", "error_description", "error_uri", "session_state", "user"];

/**
 * GET <issuer>/federation/callback: the upstream's redirect back. POST: a `response_mode=form_post`
 * answer (Apple), which a browser sends cross-site without our SameSite=Lax cookies: it becomes
 * the same GET on our origin, where they are sent.
 */
export const federationCallbackEndpoint: Endpoint = async (request, ctx) => {
  if (request.method === "POST") {
    if (mediaType(request) !== "application/x-www-form-urlencoded") return hostedError("form_media_type");
    let body: URLSearchParams;
    try {
      body = new URLSearchParams(await readBody(request, HOSTED_FORM_LIMIT));
    } catch {
      return hostedError("form_too_large");
    }
    const query = new URLSearchParams();
    for (const name of CALLBACK_PARAMETERS) for (const value of body.getAll(name)) query.append(name, value);
    return redirect303(`${ctx.basePath}${CALLBACK_PATH}?${query}`);
  }
  const query = new URL(request.url).searchParams;
  const state = query.get("state");
  const trip = await findRoundTrip(ctx, state);
  if (!trip || !state) return hostedError(state ? "federation_expired" : "federation_invalid_response");
  // An administrator's test of a connection: verified the same way, signing no one in.
  if (isConnectionTest(trip)) return connectionTestCallback(request, ctx, trip, state, query);
  if (!trip.transactionId) return hostedError("federation_expired");
  // Only the browser that started it: the pending sign-in's own HttpOnly cookie (no login CSRF).
  const open = await transactionOf(ctx, trip.transactionId, request.headers.get("cookie"));
  if (!open || !(await consumeRoundTrip(ctx, trip))) return hostedError("federation_expired");
  const tx = open.tx;

  let loaded: LoadedProvider | null;
  let identity: UpstreamIdentity;
  try {
    loaded = trip.connectionId ? await loadConnection(ctx, trip.connectionId) : trip.socialProviderId ? await loadSocialProviderById(ctx, tx.clientPk, trip.socialProviderId) : null;
    if (!loaded) return hostedError("federation_option_unavailable");
    const answered = await callbackIdentity(ctx, trip, state, query, loaded);
    if (!answered) return hostedError("federation_invalid_response");
    identity = answered;
  } catch (error) {
    if (error instanceof FederationError && trip.connectionId) await recordConnectionFailure(ctx, trip.connectionId, error.message);
    return upstreamFailure(ctx, error);
  }

  const resolution = await resolveIdentity(ctx, loaded, identity);
  if (resolution.kind === "refused") {
    if (trip.connectionId) await recordConnectionFailure(ctx, trip.connectionId, refusalText(identity, resolution.reason));
    return hostedError(REFUSAL[resolution.reason]);
  }
  if (trip.connectionId) await recordConnectionSuccess(ctx, trip.connectionId);
  if (resolution.kind === "link") {
    // Nothing is linked yet: the user proves the account with this email first (flow.ts identify).
    const updated = await updateOpen(ctx, tx, { userId: null, evidence: [], sessionId: null, organizationId: null, connectionId: null, federatedLink: resolution.link });
    return updated ? toSignInPage(ctx, updated.id) : hostedError("sign_in_expired");
  }
  const link = resolution.link;
  return identify(request, ctx, { ...tx, federatedLink: null }, resolution.userId, federatedEvidence(ctx.service.clock.now(), link), {
    origin: { organizationId: link.organizationId, connectionId: link.connectionId },
  });
};

export const federationRoutes: Route[] = [
  { method: "POST", path: "/sign-in/federation", endpoint: federationStartEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/federation/cancel", endpoint: federationCancelEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: "/sign-in/sso", endpoint: ssoEndpoint, machine: false, errors: "hosted" },
  { method: "GET", path: CALLBACK_PATH, endpoint: federationCallbackEndpoint, machine: false, errors: "hosted" },
  { method: "POST", path: CALLBACK_PATH, endpoint: federationCallbackEndpoint, machine: false, errors: "hosted" },
  // Each connection protocol's own routes (lib/federation/protocols).
  ...connectionProtocolRoutes({ notFound: notFoundResponse }),
];
