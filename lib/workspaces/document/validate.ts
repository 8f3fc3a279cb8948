// Validation of a whole document: zod's problems plus the cross-entity checks of each section, deduplicated and sorted by path.
import { checkApiGrants } from "./api-grants";
import { checkApis } from "./apis";
import { checkApplications } from "./applications";
import { checkAuthPolicies } from "./auth-policy";
import { WORKSPACE_SECTIONS } from "../../features/registry";
import { isRecord, startCrossCheck } from "../../surfaces/workspace-file/checks";
import { WorkspaceFileError, type WorkspaceFileIssue } from "../../surfaces/workspace-file/errors";
import { checkOrganizations } from "./organizations";
import { comparePaths } from "../../surfaces/workspace-file/paths";
import { checkRoles } from "./roles";
import { workspaceDocumentSchema, type WorkspaceDocument } from "./schema";
import { checkUsers, indexUsers } from "./users";
import { describeType, errorMap, zodIssues } from "./zod-issues";

/**
 * Rules across fields and entities, run on the raw document so that problems are found even
 * where zod already rejected a neighbouring field: type-specific client rules, URI rules,
 * uniqueness of natural keys and references between entities.
 */
function crossCheck(doc: Record<string, unknown>): WorkspaceFileIssue[] {
  const c = startCrossCheck(doc);
  const apps = checkApplications(c);
  checkAuthPolicies(c);
  const apiRefs = checkApis(c);
  checkApiGrants(c, apps, apiRefs);
  const roles = checkRoles(c, apiRefs);
  const users = indexUsers(c);
  const orgRefs = checkOrganizations(c, users);
  checkUsers(c, roles, orgRefs);
  // The features' sections (their order does not matter: problems are sorted by path).
  for (const section of WORKSPACE_SECTIONS) section.check?.(c);
  return c.issues;
}

/**
 * Validates a parsed JSON value as a workspace document. Returns it with defaults applied, or
 * throws WorkspaceFileError listing every problem, sorted by path.
 */
export function validateWorkspaceDocument(input: unknown): WorkspaceDocument {
  if (!isRecord(input)) {
    throw new WorkspaceFileError([{ path: "$", message: `must be a JSON object (got ${describeType(input)})` }]);
  }
  const parsed = workspaceDocumentSchema.safeParse(input, { error: errorMap });
  const issues = [...(parsed.success ? [] : zodIssues(parsed.error.issues)), ...crossCheck(input)];
  if (issues.length > 0 || !parsed.success) {
    const unique = new Map<string, WorkspaceFileIssue>();
    for (const issue of issues) unique.set(`${issue.path}\u0000${issue.message}`, issue);
    throw new WorkspaceFileError([...unique.values()].sort((a, b) => comparePaths(a.path, b.path)));
  }
  return parsed.data;
}
