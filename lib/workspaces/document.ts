/**
 * The declarative workspace file: its zod schema, and validation that reports every problem at
 * once with a JSON path (`$.applications[1].redirect_uris[0]`). Validation is pure: references
 * resolve within the document, never against the database, so a file that validates here means
 * the same thing wherever it is imported. See docs/workspace-file.md.
 *
 * The code is in ./document/: one file per section of the document (auth-policy, applications, apis,
 * api-grants, roles, organizations, users), each with its schema and its cross-entity checks;
 * schema.ts assembles them with the features' sections (lib/surfaces/workspace-file.ts, declared in
 * each feature's folder) and validate.ts runs them. This file is the public entry.
 */
export { WorkspaceFileError, type WorkspaceFileIssue } from "../surfaces/workspace-file/errors";
export { displayEmail, IDENTITY_SCOPES, normalizeEmail, RESERVED_WORKSPACE_IDS } from "./document/fields";
export { jsonPath } from "../surfaces/workspace-file/paths";
export { isRecord } from "../surfaces/workspace-file/checks";
export { applicationSchema, defaultIdentityScopes, MIN_PRESET_SECRET_LENGTH } from "./document/applications";
export { authPolicySchema, policyEntry, policyOverrides, type AuthPolicyEntry } from "./document/auth-policy";
export { apiSchema } from "./document/apis";
export { apiGrantSchema } from "./document/api-grants";
export { rolePermissionSchema, roleSchema } from "./document/roles";
export { organizationSchema } from "./document/organizations";
export { userSchema } from "./document/users";
export {
  workspaceDocumentSchema,
  type ApplicationEntry,
  type UserEntry,
  type UserRoleRef,
  type WorkspaceDocument,
  type WorkspaceDocumentInput,
} from "./document/schema";
export { validateWorkspaceDocument } from "./document/validate";
