/** The device flow's OAuth errors (RFC 8628 §3.5, RFC 6749 §5.2), in the OAuthError family. */
import { OAuthError } from "../errors";

export const unauthorizedClient = () => new OAuthError(400, "unauthorized_client", "This application does not allow the device authorization grant");
export const authorizationPending = () => new OAuthError(400, "authorization_pending", "The user has not yet approved or denied the request");
export const slowDown = (interval: number) => new OAuthError(400, "slow_down", `Polling too fast: wait at least ${interval} seconds between requests`);
export const accessDenied = () => new OAuthError(400, "access_denied", "The user denied the request");
export const expiredToken = () => new OAuthError(400, "expired_token", "The device code has expired; start a new device authorization");
