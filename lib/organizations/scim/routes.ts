/**
 * The SCIM API's routes (lib/surfaces/routes.ts), lean: one route per method for every path below
 * `/scim/v2` (the endpoint reads the organization and the resource from the URL), machine-facing,
 * answering failures in SCIM's error shape and limited per organization directory.
 */
import { defineRoutes } from "../../surfaces/routes";
import type { Route } from "../../http/route";
import { DIRECTORY_REQUESTS, SCIM_PATH, scimEndpoint } from "./endpoint";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

export const SCIM_ROUTES = defineRoutes({
  issuer: METHODS.map((method): Route => ({ method, path: SCIM_PATH, below: true, endpoint: scimEndpoint, machine: true, errors: "scim", limits: [DIRECTORY_REQUESTS] })),
});
