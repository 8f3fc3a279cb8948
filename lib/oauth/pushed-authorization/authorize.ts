/**
 * The authorization endpoint's side of pushed requests (RFC 9126 §4): the browser names a pushed
 * request by `client_id` and `request_uri`, which is used once, by the client that pushed it,
 * within its 60 seconds; and an application that requires pushing has every other request refused.
 */
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { param, reusable } from "../../../db/reusable";
import { pushedAuthorizationRequests } from "../../../db/schema";
import { sha256Hex } from "../../crypto";
import type { EndpointContext } from "../../http/context";
import { applicationOptionOn } from "../../surfaces/application-options";
import { REQUIRE_PUSHED_REQUESTS } from "./option";
import type { ClientRow } from "../clients";

export const PUSH_REQUIRED =
  "This application requires pushed authorization requests (RFC 9126): push the request to the pushed_authorization_request_endpoint and send the browser with only client_id and request_uri";

export const pushedRequestRequired = (client: Pick<ClientRow, "type" | "options">) => applicationOptionOn(client, REQUIRE_PUSHED_REQUESTS);

/** Uses the pushed request once: only while unused and unexpired, and only for the client_id that pushed it. */
const claimStatement = reusable("latchkey_use_pushed_request", (db) =>
  db
    .update(pushedAuthorizationRequests)
    .set({ usedAt: sql`${param("now")}::timestamptz` })
    .where(
      and(
        eq(pushedAuthorizationRequests.workspaceId, param("workspaceId")),
        eq(pushedAuthorizationRequests.uriHash, param("uriHash")),
        eq(pushedAuthorizationRequests.clientId, param("clientId")),
        isNull(pushedAuthorizationRequests.usedAt),
        gt(pushedAuthorizationRequests.expiresAt, sql`${param("now")}::timestamptz`),
      ),
    )
    .returning({ parameters: pushedAuthorizationRequests.parameters }),
);

export type PushedRefusal = "request_uri_parameters" | "invalid_request_uri";

/**
 * The pushed parameters a browser's `client_id` + `request_uri` name, used up now; or why not:
 * anything besides those two (each exactly once), or a URI unknown, used, expired or pushed by
 * another client (one answer for all four: which it was is nobody's business).
 */
export async function resolvePushedRequest(query: URLSearchParams, ctx: EndpointContext): Promise<{ params: URLSearchParams } | { refusal: PushedRefusal }> {
  const names = [...query.keys()];
  if (names.length !== 2 || query.getAll("client_id").length !== 1 || query.getAll("request_uri").length !== 1) return { refusal: "request_uri_parameters" };
  const clientId = query.get("client_id")!;
  const requestUri = query.get("request_uri")!;
  if (!clientId || !requestUri) return { refusal: "request_uri_parameters" };
  const [used] = await claimStatement(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    uriHash: sha256Hex(requestUri),
    clientId,
    now: ctx.service.clock.now().toISOString(),
  });
  if (!used) return { refusal: "invalid_request_uri" };
  return { params: new URLSearchParams(used.parameters) };
}
