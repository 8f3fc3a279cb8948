import { defineRoutes } from "../../surfaces/routes";
import { CLIENT_REQUESTS } from "../clients";
import { pushedAuthorizationEndpoint } from "./endpoint";

/** The pushed authorization request endpoint, limited per client as the token endpoint is. */
export const PUSHED_AUTHORIZATION_ROUTES = defineRoutes({
  issuer: [{ method: "POST", path: "/oauth2/par", endpoint: pushedAuthorizationEndpoint, machine: true, limits: [CLIENT_REQUESTS] }],
});
