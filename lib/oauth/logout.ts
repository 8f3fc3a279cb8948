import { and, eq } from "drizzle-orm";
import { grants } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { chains, grantSource, liveSql, nowValue, selectGrantChain } from "../authority";
import { clearSessionCookie, endHostedSession, getLiveSession } from "../authn/hosted-session";
import type { Endpoint, EndpointContext } from "../http/context";
import { failureResponse, type ErrorFamily } from "../http/errors";
import { unstorableParameter } from "../http/form";
import { inTransaction } from "../http/transaction";
import { hostedError } from "../hosted/errors";
import { HOSTED_PAGE_HEADERS } from "../hosted/html";
import { signedOutOfApplicationPage } from "../hosted/notice-page";
import { findClient } from "./clients";
import { hostedFailures } from "./errors";
import { subjectFor } from "./issue";

const ACCEPTED = new Set(["client_id", "post_logout_redirect_uri"]);
/**
 * Named so the page can say why, rather than just "not recognized". A Set, since parameter names
 * are the client's: a plain object would answer `toString` or `constructor` from its prototype.
 */
const REFUSED: ReadonlySet<string> = new Set(["id_token_hint", "state", "logout_hint", "ui_locales"]);

/**
 * GET /oidc/logout: hosted browser logout to a registered destination.
 *
 * The query is exactly `client_id` and `post_logout_redirect_uri` (registered for that client,
 * exact match). It needs the hosted session cookie and an active grant of that client in that
 * session. Success ends the hosted session — every grant of the session then fails the session
 * check and refresh, since both join it — clears the cookie and answers 303 to the destination.
 * Every failure is a hosted error page and never a redirect: an unverified destination is never
 * followed. A grant revoked before logout therefore makes logout fail here, as SPEC.md warns: the
 * page then says the user is signed out of that application and links to the (registered)
 * destination, leaving the hosted session as it is.
 */
export const logoutEndpoint: Endpoint = async (request, ctx) => {
  try {
    return await logout(request, ctx);
  } catch (error) {
    // A browser lands here: show a page, not the JSON of the machine endpoints. Nothing was ended.
    return failureResponse(LOGOUT_FAILURES, error, "logout");
  }
};

/** The hosted family, with the logout's own page when authority cannot be confirmed. */
const LOGOUT_FAILURES: ErrorFamily = { ...hostedFailures, unavailable: () => hostedError("logout_unavailable") };

async function logout(request: Request, ctx: EndpointContext): Promise<Response> {
  const query = new URL(request.url).searchParams;
  if (unstorableParameter(query) !== null) return hostedError("logout_unstorable");
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (REFUSED.has(name)) return hostedError("logout_parameter_refused", { name });
    if (!ACCEPTED.has(name)) return hostedError("logout_parameter_unknown", { name });
    if (seen.has(name)) return hostedError("logout_parameter_duplicated", { name });
    seen.add(name);
  }
  const clientId = query.get("client_id");
  const destination = query.get("post_logout_redirect_uri");
  if (!clientId) return hostedError("logout_client_id_missing");
  if (!destination) return hostedError("logout_destination_missing");

  const client = await findClient(ctx, clientId);
  if (!client || !client.active) return hostedError("logout_unknown_application");
  if (!client.postLogoutRedirectUris.includes(destination)) return hostedError("logout_unregistered_destination");

  const session = await getLiveSession(ctx, request.headers.get("cookie"));
  if (!session) return hostedError("logout_no_session");
  const now = ctx.service.clock.now();
  // A live grant of this client in this session (the grant's own state, by the one authority rule).
  const [grant] = await selectGrantChain(ctx.service.db, nowValue(now), { id: grants.id }, chains.grantRecord)
    .where(
      and(
        eq(grants.workspaceId, ctx.workspace.id),
        eq(grants.sessionId, session.id),
        eq(grants.clientPk, client.id),
        liveSql(chains.grantRecord, grantSource, nowValue(now)),
      ),
    )
    .limit(1);
  // No live grant of this application here (revoked first, say): the user is signed out of it
  // already. Say so and offer the registered destination, without ending the hosted session
  // (nothing of this application's authority stands on it) and without redirecting by itself.
  if (!grant) return signedOutOfApplicationPage({ application: client.name, destination });

  // A concurrent logout may have ended it a moment ago: the outcome is the same, recorded once.
  await inTransaction(ctx, async (tx) => {
    if (!(await endHostedSession(tx, session.id, "logout"))) return;
    await recordAudit(tx.service.db, {
      workspaceId: ctx.workspace.id,
      type: "session.logout",
      clientId: client.clientId,
      subject: subjectFor(ctx, client.clientId, session.userId),
      reason: "hosted_logout",
      data: { session_id: session.id, grant_id: grant.id },
      at: now,
    });
  });
  const headers = new Headers({ ...HOSTED_PAGE_HEADERS, Location: destination });
  headers.append("Set-Cookie", clearSessionCookie(ctx));
  return new Response(null, { status: 303, headers });
}
