/**
 * The operators' workspace (Keycloak's master realm): operators are the users of the reserved
 * `system` workspace, and its hosted sign-in signs them in to the console. lib/console/system.ts
 * creates it with the console's own application.
 */
import { contextFor, type EndpointContext } from "../http/context";
import type { Service } from "../service";

export const SYSTEM_WORKSPACE_ID = "system";
export const SYSTEM_WORKSPACE_NAME = "Latchkey operators";

/** The system workspace's context at the default host: where an operator's codes and hosted sessions live. */
export const systemContext = (service: Service): EndpointContext => contextFor(service, { id: SYSTEM_WORKSPACE_ID, name: SYSTEM_WORKSPACE_NAME });
