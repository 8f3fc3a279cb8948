/** Every console operation by name: the one table the console's server action dispatches through. */
import {
  createApplication,
  createSecret,
  deleteApplication,
  expireSecretNow,
  revokeSecret,
  rotateSecret,
  setApplicationActive,
  setApplicationSocialProviders,
  setClientApiGrant,
  updateApplication,
} from "./applications";
import { createApi, deleteApi, setApiActive, updateApi } from "./apis";
import { removeUserFactor } from "./factors";
import { OPERATORS_FEATURE } from "../operators";
import { addHostname, makePrimaryHostname, removeHostname, setRelatedOrigins, verifyHostname } from "./hostnames";
import { unlinkUserIdentity } from "./identities";
import { activateKey, publishKey } from "./keys";
import {
  addDomain,
  addMember,
  checkDomainDns,
  createOrganization,
  markDomainVerifiedByOperator,
  removeDomain,
  removeMember,
  saveConnection,
  updateOrganization,
} from "./organizations";
import { setApplicationPolicy, setWorkspacePolicy } from "./policy";
import { createRole, deleteRole, setRoleApiPermissions, updateRole } from "./roles";
import { createSocialProvider, moveSocialProvider, removeSocialProvider, updateSocialProvider } from "./social-providers";
import { deleteWorkspace, renameWorkspace } from "./workspaces";
import { assignRole, createUser, deleteUser, endUserSession, removeRole, revokeUserGrant, setUserPassword, setUserStatus, updateUserProfile } from "./users";

export const operations = {
  createApplication,
  updateApplication,
  setApplicationActive,
  deleteApplication,
  createSecret,
  rotateSecret,
  revokeSecret,
  expireSecretNow,
  setClientApiGrant,
  setApplicationSocialProviders,
  setWorkspacePolicy,
  setApplicationPolicy,
  createApi,
  updateApi,
  setApiActive,
  deleteApi,
  createRole,
  updateRole,
  setRoleApiPermissions,
  deleteRole,
  createUser,
  setUserPassword,
  updateUserProfile,
  setUserStatus,
  deleteUser,
  assignRole,
  removeRole,
  endUserSession,
  revokeUserGrant,
  removeUserFactor,
  unlinkUserIdentity,
  createOrganization,
  updateOrganization,
  addMember,
  removeMember,
  saveConnection,
  addDomain,
  checkDomainDns,
  markDomainVerified: markDomainVerifiedByOperator,
  removeDomain,
  createSocialProvider,
  updateSocialProvider,
  moveSocialProvider,
  removeSocialProvider,
  publishKey,
  activateKey,
  ...OPERATORS_FEATURE.operations,
  renameWorkspace,
  deleteWorkspace,
  addHostname,
  verifyHostname,
  makePrimaryHostname,
  removeHostname,
  setRelatedOrigins,
};

export type OperationName = keyof typeof operations;

export function isOperationName(name: string): name is OperationName {
  return Object.hasOwn(operations, name);
}
