/**
 * The changes an organization's admin portal makes: a few of the console's organization
 * operations, run through the same path (lib/surfaces/operation.ts `executeOperation`: the input
 * checked, the change and its audit event in one transaction), under the portal's authority
 * instead of an operator's:
 *
 * - only the operations named here (the connection, domains by DNS, the directory and its tokens;
 *   invitations for an organization's administrators only), never an application, key, role,
 *   setting or member of the workspace;
 * - the organization a change applies to is always the portal's: the form's organization field
 *   is overwritten with it before the input is read, and each operation's own rules find what
 *   it names (a connection, a domain, a token, an invitation) only in that organization;
 * - the person is checked for this request (./access.ts), and an administrator's authority again
 *   inside an invitation's transaction (lib/organizations/invitations);
 * - the event is `organization_portal.<change>` (lib/audit/catalogue.ts `PORTAL_CHANGES`) with the
 *   person's address as `data.operator` and how they entered as `data.role`.
 *
 * The operations are passed in by name from the console's table (the caller, a surface above
 * lib/console, looks them up): this folder names them, it does not import them.
 */
import { PORTAL_CHANGES, type PortalChange } from "../../audit/catalogue";
import { executeOperation, type AnyOperation, type OperationOutcome, type WorkspaceAccess } from "../../surfaces/operation";
import type { Service } from "../../service";
import type { PortalAccess } from "./access";
import { portalHomeUrl } from "./links";

/** Who in the portal may run an operation: anyone who entered it, or its organization's administrators only. */
type Who = "anyone" | "administrators";

/** The console operations the portal runs, by the console's name: the field naming the organization, the event, and who may. */
export const PORTAL_OPERATIONS = {
  saveConnection: { organizationField: "organization_id", change: "connection_saved", who: "anyone" },
  addDomain: { organizationField: "organization_id", change: "domain_claimed", who: "anyone" },
  checkDomainDns: { organizationField: "organization_id", change: "domain_verified", who: "anyone" },
  removeDomain: { organizationField: "organization_id", change: "domain_removed", who: "anyone" },
  saveDirectorySettings: { organizationField: "organization_id", change: "directory_saved", who: "anyone" },
  issueScimToken: { organizationField: "organization_id", change: "directory_token_issued", who: "anyone" },
  revokeScimToken: { organizationField: "organization_id", change: "directory_token_revoked", who: "anyone" },
  inviteOrganizationMember: { organizationField: "organization_id", change: "member_invited", who: "administrators" },
  resendOrganizationInvitation: { organizationField: "organization_id", change: "invitation_resent", who: "administrators" },
  withdrawOrganizationInvitation: { organizationField: "organization_id", change: "invitation_withdrawn", who: "administrators" },
  testConnection: { organizationField: "organization_id", change: "connection_test_started", who: "anyone" },
} as const satisfies Record<string, { organizationField: string; change: PortalChange; who: Who }>;
export type PortalOperationName = keyof typeof PORTAL_OPERATIONS;

export function isPortalOperationName(name: string): name is PortalOperationName {
  return Object.hasOwn(PORTAL_OPERATIONS, name);
}

/** Whether the person may run the operation (an administrator's authority is checked again by the rules that need it). */
export function mayRun(access: PortalAccess, name: PortalOperationName): boolean {
  return PORTAL_OPERATIONS[name].who === "anyone" || access.person.via === "organization_administrator";
}

/** How the portal's person appears to an operation: the workspace, the person as the actor, their role in the event. */
function operationAccess(service: Service, access: PortalAccess): WorkspaceAccess {
  const p = access.person;
  const administrator = p.via === "organization_administrator";
  return {
    workspace: access.workspace,
    // The operations' role check is the console's; here PORTAL_OPERATIONS and mayRun decide.
    role: "admin",
    operator: {
      userId: administrator ? p.userId : `portal:${p.sessionId}`,
      email: p.email,
      name: null,
      sessionId: administrator ? p.hostedSessionId : p.sessionId,
      grantId: "",
      hostedSessionId: administrator ? p.hostedSessionId : "",
    },
    portal: { administrator, home: portalHomeUrl(service.config.publicUrl, access.workspace.id, access.organization.slug) },
  };
}

/** The role the event records: how the person entered the portal. */
export const portalRole = (access: PortalAccess) => (access.person.via === "setup_link" ? "admin portal (setup link)" : "organization administrator");

/**
 * Runs a console operation `name` (`op`, the console's) in the portal of `access`: refused unless
 * the portal runs it and the person may; the organization field set to the portal's.
 */
export async function runPortalOperation<R>(service: Service, access: PortalAccess, name: string, op: AnyOperation, raw: Record<string, unknown>, meta: { ip: string | null }): Promise<OperationOutcome<R>> {
  if (!isPortalOperationName(name) || !PORTAL_CHANGES.includes(PORTAL_OPERATIONS[name].change) || !mayRun(access, name)) {
    return { ok: false, fieldErrors: {}, formError: "This change is not available in the admin portal" };
  }
  const declared = PORTAL_OPERATIONS[name];
  // The caller looked the operation up by name: it must be the one this name declares.
  if (op.name !== `organization.${declared.change}`) throw new TypeError(`${name} is not the operation named organization.${declared.change}`);
  const input = { ...raw, [declared.organizationField]: access.organization.id };
  const acting = operationAccess(service, access);
  return executeOperation(service, acting, op, input, {
    ip: meta.ip,
    type: `organization_portal.${declared.change}`,
    actor: acting.operator.userId,
    data: { operator: access.person.email, role: portalRole(access) },
  }) as Promise<OperationOutcome<R>>;
}
