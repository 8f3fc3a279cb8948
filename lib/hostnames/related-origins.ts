/**
 * `GET /.well-known/webauthn`: the WebAuthn related origins document
 * (https://w3c.github.io/webauthn/#sctn-related-origins). A browser asked for a passkey whose RP
 * ID is not the page's host fetches it from the RP ID's host, and allows the ceremony when the
 * page's origin is listed.
 *
 * Only a workspace's primary hostname serves it, and only while the workspace has related origins
 * on (./primary.ts `relatedOriginsRpId`: the same rule that makes the primary the RP
 * ID at every hostname), listing the origin of every verified hostname of that workspace.
 * Everywhere else it is the generic 404: another hostname, the setting off, and always the default
 * host, which every workspace shares (listing one workspace's hostnames there would leak them).
 *
 * Answered by lib/server's route table (`dispatch`), in the production listener directly and for
 * app/.well-known/webauthn/route.ts under `next dev`, with this one function.
 */
import { hostOrigin } from "../http/context";
import { failureResponse, json } from "../http/errors";
import { notFoundResponse, oauthFailures } from "../oauth/errors";
import { matchHost } from "./directory";
import { verifiedHostnames } from "./hostnames";
import { relatedOriginsRpId } from "./primary";
import type { Service } from "../service";

export const RELATED_ORIGINS_PATH = "/.well-known/webauthn";

/** Browsers may keep it this long: a hostname added or removed reaches them within five minutes. */
const CACHE_SECONDS = 300;

/** Its GET (and HEAD); the route table's edge rule answers every other method (./routes.ts). */
export async function relatedOriginsDocument(request: Request, service: Service): Promise<Response> {
  try {
    const match = await matchHost(service, request.headers);
    if (match.kind !== "hostname") return notFoundResponse();
    if ((await relatedOriginsRpId(service.db, match.workspaceId)) !== match.hostname) return notFoundResponse();
    const hostnames = await verifiedHostnames(service.db, match.workspaceId);
    const origins = hostnames.map((h) => hostOrigin(service.config.publicUrl, h));
    return json({ origins }, 200, { "Cache-Control": `public, max-age=${CACHE_SECONDS}` });
  } catch (error) {
    // The hostnames or the setting cannot be read: no document (503, fail closed), never a guess.
    return failureResponse(oauthFailures, error, `GET ${RELATED_ORIGINS_PATH}`);
  }
}
