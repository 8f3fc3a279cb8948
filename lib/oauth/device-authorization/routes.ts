/**
 * The device flow's routes (lib/surfaces/routes.ts), lean: read by the route table through the
 * route registry (lib/features/routes.ts) and by the descriptor (./index.ts). The device
 * authorization endpoint is machine-facing and limited per client as the token endpoint is; the
 * device page's form posts are hosted routes (the page itself is Next's: app/t/[tenant]/device).
 */
import { CLIENT_REQUESTS } from "../clients";
import { defineRoutes } from "../../surfaces/routes";
import { DEVICE_AUTHORIZATION_PATH, deviceAuthorizationEndpoint } from "./endpoint";
import { decisionEndpoint, DEVICE_CODE_POST, DEVICE_DECISION_POST, DEVICE_SIGN_IN_POST, enterCodeEndpoint, signInEndpoint } from "./verification";

export const DEVICE_AUTHORIZATION_ROUTES = defineRoutes({
  issuer: [
    { method: "POST", path: DEVICE_AUTHORIZATION_PATH, endpoint: deviceAuthorizationEndpoint, machine: true, limits: [CLIENT_REQUESTS] },
    { method: "POST", path: DEVICE_CODE_POST, endpoint: enterCodeEndpoint, machine: false, errors: "hosted" },
    { method: "POST", path: DEVICE_SIGN_IN_POST, endpoint: signInEndpoint, machine: false, errors: "hosted" },
    { method: "POST", path: DEVICE_DECISION_POST, endpoint: decisionEndpoint, machine: false, errors: "hosted" },
  ],
});
