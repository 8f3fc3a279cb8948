import { and, eq, gt, isNull } from "drizzle-orm";
import { grants } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { clearSessionCookie, endHostedSession, getLiveSession } from "../authn/hosted-session";
import type { Endpoint, EndpointContext } from "../http/context";
import { dependencyFailureSummary, isDependencyFailure } from "../http/errors";
import { unstorableParameter } from "../http/form";
import { inTransaction } from "../http/transaction";
import { HOSTED_PAGE_HEADERS, hostedErrorPage } from "../hosted/html";
import { findClient } from "./clients";
import { subjectFor } from "./issue";

const ACCEPTED = new Set(["client_id", "post_logout_redirect_uri"]);
/**
 * Named so the page can say why, rather than just "not recognized". A Map, since parameter names
 * are the client's: a plain object would answer `toString` or `constructor` from its prototype.
 */
const REFUSED: ReadonlyMap<string, string> = new Map(
  ["id_token_hint", "state", "logout_hint", "ui_locales"].map((name) => [name, `${name} is not accepted; send only client_id and post_logout_redirect_uri.`]),
);

const UNSTORABLE = "The sign-out request contains a character that is not accepted.";

const refused = (message: string, status = 400) =>
  hostedErrorPage(status, "Sign-out failed", message, "invalid_request", "Return to the application you came from; it can end your session there.");

/**
 * GET /oidc/logout: hosted browser logout to a registered destination.
 *
 * The query is exactly `client_id` and `post_logout_redirect_uri` (registered for that client,
 * exact match). It needs the hosted session cookie and an active grant of that client in that
 * session. Success ends the hosted session — every grant of the session then fails the session
 * check and refresh, since both join it — clears the cookie and answers 303 to the destination.
 * Every failure is a hosted error page and never a redirect: an unverified destination is never
 * followed. A grant revoked before logout therefore makes logout fail here, as SPEC.md warns.
 */
export const logoutEndpoint: Endpoint = async (request, ctx) => {
  try {
    return await logout(request, ctx);
  } catch (error) {
    // A browser lands here: show a page, not the JSON of the machine endpoints. Nothing was ended.
    if (isDependencyFailure(error)) {
      console.error(`[latchkey] logout: dependency failure: ${dependencyFailureSummary(error)}`);
      return hostedErrorPage(503, "Sign-out unavailable", "Signing out is temporarily unavailable. Please try again in a moment.", "temporarily_unavailable");
    }
    throw error;
  }
};

async function logout(request: Request, ctx: EndpointContext): Promise<Response> {
  const query = new URL(request.url).searchParams;
  if (unstorableParameter(query) !== null) return refused(UNSTORABLE);
  const seen = new Set<string>();
  for (const name of query.keys()) {
    const reason = REFUSED.get(name);
    if (reason) return refused(reason);
    if (!ACCEPTED.has(name)) return refused(`Parameter ${name} is not accepted; send only client_id and post_logout_redirect_uri.`);
    if (seen.has(name)) return refused(`Parameter ${name} is duplicated.`);
    seen.add(name);
  }
  const clientId = query.get("client_id");
  const destination = query.get("post_logout_redirect_uri");
  if (!clientId) return refused("client_id is missing.");
  if (!destination) return refused("post_logout_redirect_uri is missing.");

  const client = await findClient(ctx, clientId);
  if (!client || !client.active) {
    return refused("This application is not known to this workspace, or it is disabled.", 404);
  }
  if (!client.postLogoutRedirectUris.includes(destination)) {
    return refused("The sign-out destination is not registered for this application.");
  }

  const session = await getLiveSession(ctx, request.headers.get("cookie"));
  if (!session) {
    return refused("You are not signed in here any more, so there is no session to end. You can close this page.");
  }
  const now = ctx.service.clock.now();
  const [grant] = await ctx.service.db
    .select({ id: grants.id })
    .from(grants)
    .where(
      and(
        eq(grants.workspaceId, ctx.workspace.id),
        eq(grants.sessionId, session.id),
        eq(grants.clientPk, client.id),
        isNull(grants.revokedAt),
        gt(grants.idleExpiresAt, now),
        gt(grants.absoluteExpiresAt, now),
      ),
    )
    .limit(1);
  if (!grant) {
    return refused(
      "This application has no active sign-in in this browser session (it may have been revoked already), so it cannot sign you out here. Your other sign-ins are unchanged.",
    );
  }

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
