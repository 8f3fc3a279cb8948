/**
 * The audit event of a completed enrolment, written by the factor's own enrolment function, so a
 * factor added during the sign-in and one added in the portal are recorded alike.
 */
import { recordAudit } from "../../audit/events";
import type { EndpointContext } from "../../http/context";
import type { EvidenceMethod } from "../evidence";
import type { EnrolmentSource } from "./contract";

export const CREDENTIAL_ADDED = "account_security.credential_added";

export async function recordCredentialAdded(
  ctx: Pick<EndpointContext, "service" | "workspace">,
  userId: string,
  added: { kind: EvidenceMethod; factorId: string },
  source: EnrolmentSource,
): Promise<void> {
  await recordAudit(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    type: CREDENTIAL_ADDED,
    actor: userId,
    subject: userId,
    data: { kind: added.kind, factor_id: added.factorId, ...source.context },
    ip: source.ip,
    at: ctx.service.clock.now(),
  });
}
