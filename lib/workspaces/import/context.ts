// What every import step shares (lib/surfaces/workspace-file/context.ts, where a feature's section reaches it), for the whole document.
import type { ImportContext as SectionImportContext } from "../../surfaces/workspace-file/context";
import type { WorkspaceDocument } from "../document";

export { chunks, differs, type GeneratedSecret, type ImportIds, type ImportOptions, type ImportResult, type MembershipChange } from "../../surfaces/workspace-file/context";

/** One import, as the steps of lib/workspaces see it: the whole validated document. */
export type ImportContext = SectionImportContext<WorkspaceDocument>;

/** One section of the workspace file written by lib/workspaces, within the import's transaction. */
export type ImportStep = (ctx: ImportContext) => Promise<void>;
