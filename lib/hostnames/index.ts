/**
 * The hostnames feature: a workspace's own authentication hostnames, every surface of it declared
 * here and read by the registries (lib/features/registry.ts): its console operations, its page in
 * the console's side navigation and the workspace's issuers the console shows (./console.ts), its
 * section of the workspace file (./workspace-file.ts) and its routes (./routes.ts, which the route
 * table reads through the lean lib/features/routes.ts). Its rules are ./hostnames.ts (the rows),
 * ./primary.ts (which hostname is the primary one) and ./directory.ts (which workspace a request's
 * host serves).
 */
import { defineFeature } from "../surfaces/feature";
import { addHostname, makePrimaryHostname, removeHostname, setRelatedOrigins, verifyHostname, workspaceIssuers } from "./console";
import { HOSTNAMES_ROUTES } from "./routes";
import { HOSTNAMES_SECTION } from "./workspace-file";

export const HOSTNAMES_FEATURE = defineFeature({
  name: "hostnames",
  operations: { addHostname, verifyHostname, makePrimaryHostname, removeHostname, setRelatedOrigins },
  workspaceFile: HOSTNAMES_SECTION,
  routes: HOSTNAMES_ROUTES,
  consolePage: { path: "/hostnames", label: "Hostnames", after: "/branding" },
  issuers: workspaceIssuers,
});
