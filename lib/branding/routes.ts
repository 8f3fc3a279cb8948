/**
 * The branding's routes (lib/surfaces/routes.ts), lean: read by the route table through the route
 * registry (lib/features/routes.ts) and by the descriptor (./index.ts). The workspace's logo at its
 * content address, `/t/{workspace}/branding/logo/{digest}`: one route of the table answers every
 * path below `/branding/logo` (`below`), so the route table's edge rule answers its other methods
 * (405 with Allow), HEAD and OPTIONS, its failures and its limits as it does every route's.
 */
import type { Endpoint } from "../http/context";
import { defineRoutes } from "../surfaces/routes";
import { LOGO_PATH } from "./logo";
import { logoResponse } from "./store";

/** The digest the request's path names below the issuer's `/branding/logo/` ("" for none, answered 404 by `logoResponse`). */
const logoEndpoint: Endpoint = async (request, ctx) => {
  const { pathname } = new URL(request.url);
  const prefix = `${ctx.basePath}${LOGO_PATH}/`;
  const digest = pathname.startsWith(prefix) ? pathname.slice(prefix.length) : "";
  return logoResponse(ctx.service.db, ctx.workspace.id, digest, request.method);
};

export const BRANDING_ROUTES = defineRoutes({
  issuer: [{ method: "GET", path: LOGO_PATH, below: true, endpoint: logoEndpoint, machine: false }],
});
