import { applicationOptionOn, defineApplicationOption } from "../../surfaces/application-options";
import type { ClientRow } from "../clients";

/** RFC 9126 §6 client metadata: the application's authorization requests must be pushed first. */
export const REQUIRE_PUSHED_REQUESTS = defineApplicationOption({
  key: "require_pushed_authorization_requests",
  label: "Require pushed authorization requests (PAR)",
  hint: "The application must send its authorization request to /oauth2/par first and send the browser with only client_id and request_uri; a request in the browser's address is refused. Pushing is always allowed.",
  types: ["PUBLIC", "WEB_CONFIDENTIAL"],
});

/**
 * Discovery's fields for pushed requests (RFC 9126 §5): the endpoint, and whether only pushed
 * requests are accepted: for a document asked for one application (`?client_id=`), that
 * application's option; for the workspace's, false (other applications need not push).
 */
export function pushedRequestMetadata(issuer: string, client: Pick<ClientRow, "type" | "options"> | null): Record<string, unknown> {
  return {
    pushed_authorization_request_endpoint: `${issuer}/oauth2/par`,
    require_pushed_authorization_requests: client !== null && applicationOptionOn(client, REQUIRE_PUSHED_REQUESTS),
  };
}
