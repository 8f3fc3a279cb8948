/**
 * The admin portal's routes (lib/surfaces/routes.ts), lean: read by the route table through the
 * route registry (lib/features/routes.ts) and by the descriptor (./index.ts). The setup link's two
 * form posts and signing out are hosted routes, limited per client address; the portal page and
 * its changes are Next's (app/t/[tenant]/organization-admin, its server actions).
 */
import { defineRoutes } from "../../surfaces/routes";
import { PORTAL_CODE_POST, PORTAL_SIGN_OUT_POST, PORTAL_START_POST, portalSignOutEndpoint, sendPortalCodeEndpoint, startPortalEndpoint } from "./entry";
import { PORTAL_ENTRY_ATTEMPTS } from "./limits";

export const ADMIN_PORTAL_ROUTES = defineRoutes({
  issuer: [
    { method: "POST", path: PORTAL_CODE_POST, endpoint: sendPortalCodeEndpoint, machine: false, errors: "hosted", limits: [PORTAL_ENTRY_ATTEMPTS] },
    { method: "POST", path: PORTAL_START_POST, endpoint: startPortalEndpoint, machine: false, errors: "hosted", limits: [PORTAL_ENTRY_ATTEMPTS] },
    { method: "POST", path: PORTAL_SIGN_OUT_POST, endpoint: portalSignOutEndpoint, machine: false, errors: "hosted" },
  ],
});
