/**
 * Every console operation by name: the one table the console's server action dispatches through.
 * The features' own (lib/features/registry.ts, each declared in its feature's folder) and the
 * console's, which have no feature folder yet.
 */
import { FEATURE_OPERATIONS } from "../features/registry";
import {
  createApplication,
  createSecret,
  deleteApplication,
  expireSecretNow,
  revokeSecret,
  rotateSecret,
  setApplicationActive,
  setApplicationOptions,
  setApplicationSocialProviders,
  setClientApiGrant,
  updateApplication,
} from "./applications";
import { createApi, deleteApi, setApiActive, updateApi } from "./apis";
import { removeUserFactor } from "./factors";
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

const consoleOperations = {
  createApplication,
  updateApplication,
  setApplicationActive,
  setApplicationOptions,
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
  renameWorkspace,
  deleteWorkspace,
};

for (const name of Object.keys(FEATURE_OPERATIONS)) if (Object.hasOwn(consoleOperations, name)) throw new Error(`console operation ${name} is declared twice`);

export const operations = { ...consoleOperations, ...FEATURE_OPERATIONS };

export type OperationName = keyof typeof operations;

export function isOperationName(name: string): name is OperationName {
  return Object.hasOwn(operations, name);
}
