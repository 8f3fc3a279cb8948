/** The portal's routes (the direct link and the portal's own form posts). */
import type { Route } from "../http/route";

export const portalRoutes: Route[] = [];
