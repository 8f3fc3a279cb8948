/**
 * The authorization model as the console reads and changes it: APIs and their permissions, API
 * grants of clients, roles, users' roles (workspace level or per organization) and organization
 * members. Entities are named by their natural keys, as in the workspace file (client_id, API
 * audience, role name, organization slug), and users by id. Every change is written at once and
 * is seen by the very next permission check: nothing here is cached.
 *
 * The code is in ./model/, one file per entity (apis, api-grants, roles, user-roles,
 * organizations) plus shared lookups; this file is the public entry.
 */
export { AuthzModelError, type AuthzModelErrorCode } from "./model/errors";
export type { Change } from "./model/change";
export { listApis, setApiPermissions, type ApiInfo } from "./model/apis";
export { listApiGrants, removeApiGrant, setApiGrant, type ApiGrantInfo } from "./model/api-grants";
export { listRoles, setRolePermissions, type RoleInfo } from "./model/roles";
export { assignUserRole, listUserRoles, removeUserRole, type UserRoleInfo } from "./model/user-roles";
export {
  addOrganizationMember,
  listOrganizations,
  organizationIds,
  removeOrganizationMember,
  type OrganizationInfo,
  type OrganizationRef,
} from "./model/organizations";
