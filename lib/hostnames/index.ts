/**
 * The hostnames feature: a workspace's own authentication hostnames, every surface of it declared
 * here and read by the registries (lib/features/registry.ts): its console operations (./console.ts)
 * and its section of the workspace file (./workspace-file.ts). Its rules are ./hostnames.ts (the
 * rows), ./primary.ts (which hostname is the primary one) and ./directory.ts (which workspace a
 * request's host serves).
 */
import { defineFeature } from "../surfaces/feature";
import { addHostname, makePrimaryHostname, removeHostname, setRelatedOrigins, verifyHostname } from "./console";
import { HOSTNAMES_SECTION } from "./workspace-file";

export const HOSTNAMES_FEATURE = defineFeature({
  name: "hostnames",
  operations: { addHostname, verifyHostname, makePrimaryHostname, removeHostname, setRelatedOrigins },
  workspaceFile: HOSTNAMES_SECTION,
});
