/**
 * The console's operations on an organization's admin portal setup links (workspace
 * administrators; run by lib/console's runOperation): making one for an address (its secret shown
 * once, mailed to the address when asked) and revoking one (its sessions end at once).
 */
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../../db/client";
import { organizations } from "../../../db/schema";
import { emailAvailable, sendMail } from "../../authn/email/transport";
import { plainMessage } from "../../authn/email/plain-message";
import { normalizeEmail } from "../../authn/email-address";
import { checkbox, email, id, integer } from "../../forms/fields";
import { guard } from "../../limits/declarations";
import { utcMinute as utc } from "../../clock";
import { defineOperation, formError } from "../../surfaces/operation";
import { LINK_TTL_DEFAULT_HOURS, LINK_TTL_MAX_HOURS, PORTAL_LINKS_MADE } from "./limits";
import { makeLink, revokeLink, setupLinkUrl } from "./links";

async function activeOrganization(db: Database, workspaceId: string, organizationId: string) {
  const [org] = await db
    .select({ id: organizations.id, slug: organizations.slug, name: organizations.name, active: organizations.active })
    .from(organizations)
    .where(and(eq(organizations.workspaceId, workspaceId), eq(organizations.id, organizationId)))
    .limit(1);
  if (!org) throw formError("This organization no longer exists");
  if (!org.active) throw formError("This organization is inactive: activate it before making a setup link");
  return org;
}

/** Makes a setup link of the organization's admin portal for one address; the link is shown once (and mailed when asked). */
export const createPortalLink = defineOperation({
  name: "organization.portal_link_created",
  role: "admin",
  input: z.object({
    organization_id: id("organization"),
    email: email(),
    valid_hours: z.preprocess((v) => (v === undefined || v === "" ? String(LINK_TTL_DEFAULT_HOURS) : v), integer("the hours it is valid", 1, LINK_TTL_MAX_HOURS)),
    send: checkbox(),
  }),
  async prepare(input, { service, access }) {
    const gate = await guard(service.limiter, service.config.rateLimits, PORTAL_LINKS_MADE, { workspaceId: access.workspace.id, address: "-", account: input.organization_id });
    if (!gate.allowed) throw formError(`Too many setup links were made for this organization in the last hour. Try again in ${Math.ceil(gate.retryAfterSeconds / 60)} minutes.`);
    await gate.record();
  },
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const org = await activeOrganization(ctx.db, wid, input.organization_id);
    const emailNormalized = normalizeEmail(input.email)!;
    const { link, token } = await makeLink(ctx.db, {
      workspaceId: wid,
      organizationId: org.id,
      email: input.email,
      emailNormalized,
      ttlHours: input.valid_hours,
      createdBy: { userId: ctx.access.operator.userId, email: ctx.access.operator.email },
      now: ctx.now,
    });
    const url = setupLinkUrl(ctx.service.config.publicUrl, wid, token);
    const emailed = input.send && emailAvailable(ctx.service.config);
    if (emailed) {
      sendMail(
        { service: ctx.service, workspace: ctx.access.workspace },
        plainMessage(emailNormalized, `Set up single sign-on for ${org.name}`, [
          `${ctx.access.operator.email} invites you to set up how ${org.name} signs in to ${ctx.access.workspace.name}: single sign-on with your identity provider, your email domains, and user provisioning (SCIM).`,
          `Open this link to start. You will be asked for a code sent to this address; the link works once, until ${utc(link.expiresAt)}.`,
          url,
          "If you did not expect this message, ignore it.",
        ]),
      );
    }
    return {
      result: { url, email: link.email, expiresAt: link.expiresAt, emailed },
      audit: { target: org.slug, data: { link_id: link.id, email: link.email, expires_at: link.expiresAt.toISOString(), emailed } },
    };
  },
});

/** Revokes a setup link: it can no longer start the portal, and the session it started ends at once. */
export const revokePortalLink = defineOperation({
  name: "organization.portal_link_revoked",
  role: "admin",
  input: z.object({ organization_id: id("organization"), link_id: id("link") }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [org] = await ctx.db.select({ slug: organizations.slug }).from(organizations).where(and(eq(organizations.workspaceId, wid), eq(organizations.id, input.organization_id))).limit(1);
    if (!org) throw formError("This organization no longer exists");
    const revoked = await revokeLink(ctx.db, { workspaceId: wid, organizationId: input.organization_id, linkId: input.link_id, by: ctx.access.operator.userId, now: ctx.now });
    if (!revoked) throw formError("This link was revoked already");
    return { result: null, audit: { target: org.slug, data: { link_id: revoked.link.id, email: revoked.link.email, sessions_ended: revoked.sessionsEnded } } };
  },
});
