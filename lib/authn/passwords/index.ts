/**
 * The passwords feature: the workspace's password policy, every surface of it declared here and
 * read by the registries (lib/features/registry.ts): its console operation and page (./console.ts,
 * app/console/(app)/w/[workspace]/passwords), its section of the workspace file
 * (./workspace-file.ts). Its rules are ./screening.ts (what a new password must not be),
 * ./breach-range.ts (the optional range service) and ./policy.ts (the policy, and the one call
 * every place that sets a password makes: `screenNewPassword`).
 */
import { defineFeature } from "../../surfaces/feature";
import { setPasswordReset, setPasswordScreening } from "./console";
import { PASSWORDS_SECTION } from "./workspace-file";

export const PASSWORDS_FEATURE = defineFeature({
  name: "passwords",
  operations: { setPasswordScreening, setPasswordReset },
  workspaceFile: PASSWORDS_SECTION,
  consolePage: { path: "/passwords", label: "Passwords", after: "/authentication" },
});
