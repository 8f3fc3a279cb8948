import type { ServerAction } from "@/lib/forms/action-state";
import type { OperationName } from "@/lib/console/registry";
import { consoleAction } from "./actions";

/** The console action bound to an operation and workspace, for a form. */
export function actionFor(name: OperationName, workspaceId: string): ServerAction {
  return consoleAction.bind(null, name, workspaceId);
}
