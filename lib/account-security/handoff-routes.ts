/** The backend handoff's routes (configuration, launch, approve, and the browser's launch and completion URLs). */
import type { Route } from "../http/route";
import { CLIENT_REQUESTS } from "../oauth/clients";
import { approveEndpoint } from "./approve";
import { configurationEndpoint } from "./configuration";
import { CONTINUE_PATH, handoffCompleteEndpoint, handoffContinueEndpoint, handoffEnterEndpoint } from "./handoff-browser";
import { COMPLETION_PATH } from "./approve";
import { LAUNCH_PATH, launchEndpoint } from "./launch";

export const handoffRoutes: Route[] = [
  // Customer servers' calls: JSON, HTTP Basic, the handoff's own error shape, the per-client limit of client authentication.
  { method: "POST", path: "/auth/account/configuration", endpoint: configurationEndpoint, machine: true, errors: "account-security", limits: [CLIENT_REQUESTS] },
  { method: "POST", path: "/auth/account/launch", endpoint: launchEndpoint, machine: true, errors: "account-security", limits: [CLIENT_REQUESTS] },
  { method: "POST", path: "/auth/account/approve", endpoint: approveEndpoint, machine: true, errors: "account-security", limits: [CLIENT_REQUESTS] },
  // The browser's URLs: hosted pages.
  { method: "GET", path: LAUNCH_PATH, endpoint: handoffEnterEndpoint, machine: false, errors: "hosted" },
  { method: "GET", path: CONTINUE_PATH, endpoint: handoffContinueEndpoint, machine: false, errors: "hosted" },
  { method: "GET", path: COMPLETION_PATH, endpoint: handoffCompleteEndpoint, machine: false, errors: "hosted" },
];
