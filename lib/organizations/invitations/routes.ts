/**
 * The invitations' routes (lib/surfaces/routes.ts), lean: read by the route table through the
 * route registry (lib/features/routes.ts) and by the descriptor (./index.ts). The acceptance page's
 * form post is a hosted route, limited per client address (the page itself is Next's:
 * app/t/[tenant]/invitation).
 */
import { defineRoutes } from "../../surfaces/routes";
import { acceptInvitationEndpoint, INVITATION_ACCEPT_POST } from "./acceptance";
import { ACCEPTANCE_ATTEMPTS } from "./limits";

export const ORGANIZATION_INVITATIONS_ROUTES = defineRoutes({
  issuer: [{ method: "POST", path: INVITATION_ACCEPT_POST, endpoint: acceptInvitationEndpoint, machine: false, errors: "hosted", limits: [ACCEPTANCE_ATTEMPTS] }],
});
