import type { ServerAction } from "@/lib/forms/action-state";
import type { OperationName } from "@/lib/console/registry";
import { connectionAction, consoleAction } from "./actions";

/** The console action bound to an operation and workspace, for a form. */
export function actionFor(name: OperationName, workspaceId: string): ServerAction {
  return consoleAction.bind(null, name, workspaceId);
}

/** The enterprise connection form's action (saves, or fills fields in from the identity provider's metadata). */
export function connectionActionFor(workspaceId: string): ServerAction {
  return connectionAction.bind(null, workspaceId);
}
