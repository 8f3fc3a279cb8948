/**
 * The device authorization endpoint (RFC 8628 §3.1–3.2): `POST /t/{workspace}/oauth2/device_authorization`.
 * The client authenticates exactly as at the token endpoint (lib/oauth/clients.ts); the application
 * must have switched the grant on (./option.ts); `scope` and `resource` follow the authorization
 * request's rule (lib/oauth/requested-scope.ts). The answer carries the codes in clear, once.
 */
import { applicationOptionOn } from "../../surfaces/application-options";
import type { Endpoint } from "../../http/context";
import { json } from "../../http/errors";
import { authenticateClient, type AuthenticatedClient } from "../clients";
import { answerUnknownClientError, withCors } from "../cors";
import { errorToResponse, invalidRequest, invalidScope } from "../errors";
import { readOAuthForm } from "../form";
import { checkRequestedScope, ScopeRefused } from "../requested-scope";
import { unauthorizedClient } from "./errors";
import { DEVICE_AUTHORIZATION_OPTION } from "./option";
import { DEVICE_CODE_TTL_MS, insertDeviceAuthorization, POLL_INTERVAL_SECONDS } from "./store";
import { formatUserCode } from "./user-code";

export const DEVICE_AUTHORIZATION_PATH = "/oauth2/device_authorization";
/** The verification page under the issuer (app/t/[tenant]/device). */
export const DEVICE_PAGE_PATH = "/device";

const PARAMETERS = new Set(["client_id", "scope", "resource"]);

/** Whether the client may use the device flow: an application of a type the option applies to that switched it on. */
export function allowsDeviceFlow(client: AuthenticatedClient["client"]): boolean {
  return applicationOptionOn(client, DEVICE_AUTHORIZATION_OPTION);
}

export const deviceAuthorizationEndpoint: Endpoint = async (request, ctx) => {
  let params: Map<string, string>;
  let authenticated: AuthenticatedClient;
  try {
    params = await readOAuthForm(request);
    authenticated = await authenticateClient(request, params, ctx);
  } catch (error) {
    return answerUnknownClientError(error, request, ctx);
  }
  const { client } = authenticated;
  try {
    for (const name of params.keys()) if (!PARAMETERS.has(name)) throw invalidRequest(`Parameter ${name} is not recognized`);
    if (!allowsDeviceFlow(client)) throw unauthorizedClient();
    const rawScope = params.get("scope");
    if (rawScope === undefined) throw invalidScope("scope is required and must include openid");
    let requested;
    try {
      requested = await checkRequestedScope(ctx, client, rawScope, params.get("resource") ?? null);
    } catch (error) {
      if (error instanceof ScopeRefused) throw invalidScope(error.message);
      throw error;
    }
    const { deviceCode, userCode } = await insertDeviceAuthorization(ctx, { clientPk: client.id, scope: requested.scope, apiId: requested.apiId });
    const shown = formatUserCode(userCode);
    const verificationUri = `${ctx.issuer}${DEVICE_PAGE_PATH}`;
    return withCors(
      json({
        device_code: deviceCode,
        user_code: shown,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(shown)}`,
        expires_in: DEVICE_CODE_TTL_MS / 1000,
        interval: POLL_INTERVAL_SECONDS,
      }),
      authenticated.corsOrigin,
    );
  } catch (error) {
    return withCors(errorToResponse(error), authenticated.corsOrigin);
  }
};
