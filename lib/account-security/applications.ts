/**
 * Application sessions in the portal: each application holding an active grant for the user (a
 * sign-in of the user to it, with its refresh family), when it was last used, and the address and
 * device of the browser that signed in; and "sign out of this application", which revokes that
 * grant and its tokens, so the application's next session check answers inactive and its refresh
 * fails.
 *
 * "Active" is the authority chain's verdict (lib/authority, `chains.grant`): the grant, the client
 * secret it was last used with, the hosted session it came from, the user, the client, its API,
 * organization and connection all live. The revocation is POST /oauth2/revoke's
 * (`revokeGrantAndTokens`).
 */
import { and, desc, eq } from "drizzle-orm";
import { clients, grants, hostedSessions } from "../../db/schema";
import { chains, grantSource, liveSql, nowValue, selectGrantChain } from "../authority";
import type { EndpointContext } from "../http/context";
import { recordAudit } from "../audit/events";
import { inTransaction } from "../http/transaction";
import { revokeGrantAndTokens } from "../oauth/revoke";
import { parseUserAgent, type Device, type DeviceWords } from "../user-agent";
import type { Translate } from "../i18n/translate";
import type { ActionSource, PortalActor } from "./credentials";

/** At most this many sign-ins are listed (newest use first). */
export const APPLICATION_SESSIONS_LISTED = 50;

export interface ApplicationSession {
  grantId: string;
  clientId: string;
  applicationName: string;
  signedInAt: Date;
  /** The last time the application obtained tokens with this sign-in (its code exchange or a refresh). */
  lastUsedAt: Date;
  /** The address and the device (browser and system, from its user agent: lib/user-agent.ts, as the console reads it) that signed in; null when unknown. */
  address: string | null;
  device: Device | null;
  /** The sign-in the portal was opened from (a handoff): signing out of it ends this visit too. */
  current: boolean;
}

/** The user's live grants, newest use first. `currentGrantId`: the grant the portal session stands on, if any. */
export async function listApplicationSessions(ctx: EndpointContext, userId: string, currentGrantId: string | null = null): Promise<ApplicationSession[]> {
  const now = nowValue(ctx.service.clock.now());
  const rows = await selectGrantChain(ctx.service.db, now, {
    grantId: grants.id,
    clientId: clients.clientId,
    applicationName: clients.name,
    signedInAt: grants.createdAt,
    lastUsedAt: grants.lastUsedAt,
    address: hostedSessions.ip,
    userAgent: hostedSessions.userAgent,
  })
    .where(and(eq(grants.workspaceId, ctx.workspace.id), eq(grants.userId, userId), liveSql(chains.grant, grantSource, now)))
    .orderBy(desc(grants.lastUsedAt), desc(grants.id))
    .limit(APPLICATION_SESSIONS_LISTED);
  return rows.map((r) => ({
    grantId: r.grantId,
    clientId: r.clientId,
    applicationName: r.applicationName,
    signedInAt: r.signedInAt,
    lastUsedAt: r.lastUsedAt,
    address: r.address,
    device: r.userAgent ? parseUserAgent(r.userAgent) : null,
    current: r.grantId === currentGrantId,
  }));
}

/** lib/user-agent.ts's words for a device's name, in the portal page's language. */
export const deviceWords = (t: Translate): DeviceWords => ({
  on: (browser, system) => t("portal.sessions.device", { browser, system }),
  unknownBrowser: t("portal.sessions.unknownBrowser"),
  unknownDevice: t("portal.sessions.unknownDevice"),
});

export type SignOutResult = { ok: true; clientId: string } | { ok: false; reason: "not_found" };

/**
 * "Sign out of this application": revokes the user's grant `grantId` and its tokens, with the
 * audit event, in one transaction. A grant of another user, or one already ended, is `not_found`.
 */
export async function signOutOfApplication(ctx: EndpointContext, actor: PortalActor, grantId: string, source: ActionSource): Promise<SignOutResult> {
  return inTransaction(ctx, async (tx) => {
    const [grant] = await tx.service.db
      .select({ id: grants.id, clientId: clients.clientId })
      .from(grants)
      .innerJoin(clients, eq(clients.id, grants.clientPk))
      .where(and(eq(grants.workspaceId, ctx.workspace.id), eq(grants.userId, actor.userId), eq(grants.id, grantId)))
      .limit(1);
    if (!grant || !(await revokeGrantAndTokens(tx, grant.id, "account_security_portal"))) return { ok: false, reason: "not_found" } as const;
    await recordAudit(tx.service.db, {
      workspaceId: ctx.workspace.id,
      type: "account_security.application_signed_out",
      actor: actor.userId,
      subject: actor.userId,
      clientId: grant.clientId,
      reason: "account_security_portal",
      data: { grant_id: grant.id, portal_session: actor.id },
      ip: source.ip,
      at: ctx.service.clock.now(),
    });
    return { ok: true, clientId: grant.clientId } as const;
  });
}
