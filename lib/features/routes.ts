/**
 * The route registry: every feature's routes (lib/surfaces/routes.ts), each the same lean value its
 * descriptor's `routes` holds (./routes.test.ts holds them equal), read by the route table
 * (lib/server/router.ts), which names no feature. Lean on purpose: unlike ./registry.ts, it loads no
 * console operation nor workspace-file section, only the routes' own modules. A feature with
 * routes is one line here and one in ./registry.ts.
 */
import { BRANDING_ROUTES } from "../branding/routes";
import { HOSTNAMES_ROUTES } from "../hostnames/routes";
import { PUSHED_AUTHORIZATION_ROUTES } from "../oauth/pushed-authorization/routes";
import { DEVICE_AUTHORIZATION_ROUTES } from "../oauth/device-authorization/routes";
import { SCIM_ROUTES } from "../organizations/scim/routes";
import { ORGANIZATION_INVITATIONS_ROUTES } from "../organizations/invitations/routes";
import { ADMIN_PORTAL_ROUTES } from "../organizations/admin-portal/routes";
import { declaredOnce } from "../surfaces/feature";
import type { FeatureRoutes, HostResolution, HostRoute } from "../surfaces/routes";
import type { Route } from "../http/route";

export const FEATURE_ROUTES: readonly FeatureRoutes[] = [DEVICE_AUTHORIZATION_ROUTES, ORGANIZATION_INVITATIONS_ROUTES, HOSTNAMES_ROUTES, PUSHED_AUTHORIZATION_ROUTES, SCIM_ROUTES, ADMIN_PORTAL_ROUTES, BRANDING_ROUTES];

/** The features' entries of the issuer's table, in the registry's order. */
export const FEATURE_ISSUER_ROUTES: readonly Route[] = FEATURE_ROUTES.flatMap((r) => r.issuer ?? []);

/** The features' paths at the root of every host. */
export const FEATURE_HOST_ROUTES: readonly HostRoute[] = FEATURE_ROUTES.flatMap((r) => r.host ?? []);


/** How a request's host resolves to a workspace, when a feature declares it (null: the default host only). */
export const FEATURE_HOST_RESOLUTION: HostResolution | null =
  declaredOnce(FEATURE_ROUTES.map((r) => r.hosts), "how a request's host resolves to a workspace") ?? null;
