/** The backend handoff's routes (configuration, launch, approve, and the browser's launch and completion URLs). */
import type { Route } from "../http/route";

export const handoffRoutes: Route[] = [];
