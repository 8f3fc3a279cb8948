/**
 * Who is in an organization's admin portal, for one request: the one answer every page and change
 * of the portal asks (./operations.ts), never cached.
 *
 * - A setup link's holder: a live portal session (./links.ts `liveSession`), whose organization
 *   is the link's. Their address is what the link named and they proved.
 * - An organization administrator: a live hosted session of the workspace (lib/authn
 *   hosted-session.ts; signed in as its sign-in rules require) whose account is an administrator
 *   of the organization (lib/organizations/invitations `isOrganizationAdministrator`, an active
 *   account). One who administers several organizations chooses one (`organization`, a slug).
 *
 * Nothing else reaches it: no operator's console session, no other organization.
 */
import { and, asc, eq } from "drizzle-orm";
import { organizationMembers, organizations, users } from "../../../db/schema";
import { getLiveSession } from "../../authn/hosted-session";
import { parseCookieHeader } from "../../http/cookies";
import type { EndpointContext } from "../../http/context";
import { isOrganizationAdministrator } from "../invitations";
import { liveSession, PORTAL_COOKIE } from "./links";

export type PortalPerson =
  | { via: "setup_link"; email: string; sessionId: string; linkId: string }
  | { via: "organization_administrator"; email: string; userId: string; hostedSessionId: string };

export interface PortalAccess {
  workspace: { id: string; name: string };
  organization: { id: string; slug: string; name: string };
  person: PortalPerson;
}

/** What the request's cookies allow: the portal of one organization, a choice among several (an administrator of more than one), or nothing. */
export type PortalEntry = { kind: "portal"; access: PortalAccess } | { kind: "choose"; organizations: { slug: string; name: string }[]; email: string } | { kind: "none" };

async function organizationById(ctx: EndpointContext, id: string) {
  const [org] = await ctx.service.db
    .select({ id: organizations.id, slug: organizations.slug, name: organizations.name })
    .from(organizations)
    .where(and(eq(organizations.workspaceId, ctx.workspace.id), eq(organizations.id, id), eq(organizations.active, true)))
    .limit(1);
  return org ?? null;
}

/** The active organizations the account administers, by slug. */
async function administered(ctx: EndpointContext, userId: string) {
  const m = organizationMembers;
  return ctx.service.db
    .select({ id: organizations.id, slug: organizations.slug, name: organizations.name })
    .from(m)
    .innerJoin(organizations, and(eq(organizations.id, m.organizationId), eq(organizations.active, true)))
    .innerJoin(users, and(eq(users.id, m.userId), eq(users.status, "active")))
    .where(and(eq(m.workspaceId, ctx.workspace.id), eq(m.userId, userId), eq(m.administrator, true)))
    .orderBy(asc(organizations.slug));
}

/**
 * The portal this request may enter. A setup link's session wins over a hosted session (it is the
 * portal's own cookie); `chosen` picks among an administrator's organizations.
 */
export async function portalEntry(ctx: EndpointContext, cookieHeader: string | null, chosen?: string | null): Promise<PortalEntry> {
  const now = ctx.service.clock.now();
  const workspace = { id: ctx.workspace.id, name: ctx.workspace.name };
  const session = await liveSession(ctx.service.db, ctx.workspace.id, parseCookieHeader(cookieHeader).get(PORTAL_COOKIE), now);
  if (session) {
    const organization = await organizationById(ctx, session.organizationId);
    if (organization) return { kind: "portal", access: { workspace, organization, person: { via: "setup_link", email: session.email, sessionId: session.id, linkId: session.linkId } } };
  }
  const hosted = await getLiveSession(ctx, cookieHeader);
  if (!hosted) return { kind: "none" };
  const [account] = await ctx.service.db.select({ email: users.emailNormalized }).from(users).where(and(eq(users.id, hosted.userId), eq(users.workspaceId, ctx.workspace.id))).limit(1);
  if (!account) return { kind: "none" };
  const orgs = await administered(ctx, hosted.userId);
  // A chosen organization it does not administer is as none chosen.
  const pick = (chosen ? orgs.find((o) => o.slug === chosen) : undefined) ?? (orgs.length === 1 ? orgs[0] : undefined);
  if (pick) return { kind: "portal", access: { workspace, organization: pick, person: { via: "organization_administrator", email: account.email, userId: hosted.userId, hostedSessionId: hosted.id } } };
  if (orgs.length === 0) return { kind: "none" };
  return { kind: "choose", organizations: orgs.map((o) => ({ slug: o.slug, name: o.name })), email: account.email };
}

/** Whether the access still holds, within a change's transaction: an administrator still administers (the session's checks ran for the request). */
export async function stillAuthorized(db: Parameters<typeof isOrganizationAdministrator>[0], access: PortalAccess): Promise<boolean> {
  if (access.person.via === "setup_link") return true;
  return isOrganizationAdministrator(db, access.workspace.id, access.organization.id, access.person.userId);
}
