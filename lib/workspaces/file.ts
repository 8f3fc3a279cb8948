/**
 * Import and export of the declarative workspace file (docs/workspace-file.md).
 *
 * Import validates the whole document first (every problem, with JSON paths), then writes in one
 * transaction: all or nothing. It is idempotent: entities are matched by natural key (workspace
 * id; client_id; API audience; role name; lower-cased user email; organization slug), updated in
 * place only when they differ, and never duplicated. Import never deletes an entity the file
 * does not mention; the lists inside an entity (redirect URIs, an API's permissions, a role's
 * permissions, a grant's permissions, a user's roles, an organization's members, domains and
 * connections, an application's social providers) are replaced by what the file says. Import is
 * written one step per section of the file, in ./import/, and export one function per section, in
 * ./export/; a feature's section (lib/surfaces/workspace-file.ts) is declared in its own folder.
 */
export {
  validateWorkspaceDocument,
  workspaceDocumentSchema,
  WorkspaceFileError,
  type WorkspaceDocument,
  type WorkspaceDocumentInput,
  type WorkspaceFileIssue,
} from "./document";
export { importWorkspace, type GeneratedSecret, type ImportOptions, type ImportResult, type MembershipChange } from "./import";
export { exportWorkspace } from "./export";
