/**
 * The hostnames' routes (lib/surfaces/routes.ts), lean: read by the route table through the route
 * registry (lib/features/routes.ts) and by the descriptor (./index.ts). Which workspace a request's
 * host serves (./directory.ts), the WebAuthn relying party its hostnames share (./primary.ts), and
 * the related origins document at the root of every host (./related-origins.ts).
 */
import { defineRoutes } from "../surfaces/routes";
import { hostnameServing, hostServes, matchHost } from "./directory";
import { relatedOriginsRpId } from "./primary";
import { RELATED_ORIGINS_PATH, relatedOriginsDocument } from "./related-origins";

export const HOSTNAMES_ROUTES = defineRoutes({
  host: [{ path: RELATED_ORIGINS_PATH, method: "GET", answer: relatedOriginsDocument }],
  hosts: {
    servingHostname: async (service, headers, workspaceId) => hostnameServing(await matchHost(service, headers), workspaceId),
    serves: hostServes,
    relyingPartyId: (service, workspaceId) => relatedOriginsRpId(service.db, workspaceId),
  },
});
