/**
 * Accepting an organization invitation, on the hosted page under the workspace's issuer (the page
 * is Next's, app/t/[tenant]/invitation; its form post is a route of the table, ./routes.ts).
 *
 * The link was mailed to the invited address only, so using it proves that mailbox; it is used
 * once. Opening it (GET, as mail scanners do) changes nothing: the page shows the organization and
 * a form; only the form's post, guarded same-origin and by a CSRF token bound to the invitation,
 * accepts. Accepting is one conditional UPDATE (pending, unexpired, its organization active) that
 * exactly one of parallel posts wins, in the transaction that makes the membership:
 *
 * - an account with the address joins. Its address is now proven: an unverified one is verified,
 *   and a password set before the proof is discarded and its sessions end (the one rule,
 *   lib/authn/mailbox-proof.ts). A disabled account cannot accept.
 * - no account: it is made now (never at invite time), its address verified. When the address's
 *   domain is one an organization verified and has an enabled connection for (home-realm
 *   discovery, lib/federation/home-realm.ts), it gets no password: its owner signs in through the
 *   connection, which finds this account (lib/federation/identities.ts). Otherwise the invitee
 *   chooses a password here, screened by the workspace's rules as at sign-up, or none when the
 *   workspace's sign-in accepts email codes.
 *
 * The member gets the invitation's roles in the organization and its administrator flag. A
 * withdrawn, expired, used or unknown link, or one whose organization is inactive, shows the same
 * hosted error page. The page then confirms, naming the organization, and offers the application
 * the invitation names.
 */
import { and, eq, gt, inArray, sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { clients, organizationInvitations, organizationMembers, organizations, roles, userRoles, users, workspaces } from "../../../db/schema";
import { recordAudit } from "../../audit/events";
import { EMAIL_CODE_EVIDENCE } from "../../authn/factors/email-code/evidence";
import { mailboxProven } from "../../authn/mailbox-proof";
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PasswordWorkRefused } from "../../authn/password";
import { screenNewPassword } from "../../authn/passwords/policy";
import { PasswordRefused } from "../../authn/passwords/screening";
import { effectivePolicy, policyFor, type AuthPolicy } from "../../authn/policy";
import { emailAvailable } from "../../authn/email/transport";
import { newId, sha256Hex } from "../../crypto";
import { connectionForAddress } from "../../federation/home-realm";
import { hostedError } from "../../hosted/errors";
import { hostedFormPost } from "../../hosted/form-post";
import { clientAddress, clientAddressOf } from "../../http/client-address";
import type { EndpointContext } from "../../http/context";
import { csrfToken, verifyCsrfToken } from "../../http/csrf";
import { redirect303 } from "../../http/response";
import { isStorableText } from "../../text";
import { applicationHome } from "../../uris";
import { INVITATION_PAGE_PATH } from "./invitations";
import type { InvitationTextKey } from "./messages";

export const INVITATION_ACCEPT_POST = `${INVITATION_PAGE_PATH}/accept`;

/** The page's error codes (`?error=`), each a text of ./messages.ts. */
export const INVITATION_PAGE_ERRORS = {
  weak_password: "error.weak_password",
  password_common: "error.password_common",
  password_breached: "error.password_breached",
  password_guessable: "error.password_guessable",
  busy: "error.busy",
} as const satisfies Record<string, InvitationTextKey>;
export type InvitationPageError = keyof typeof INVITATION_PAGE_ERRORS;

type Row = typeof organizationInvitations.$inferSelect;

/** Tokens are 43 characters (32 bytes, base64url); anything much longer is not one. */
const plausible = (token: string | null | undefined): token is string => typeof token === "string" && token.length > 0 && token.length <= 200 && isStorableText(token);

/** The invitation a link names, while it can be accepted: pending, unexpired, its organization active. */
async function acceptable(ctx: EndpointContext, token: string | null | undefined): Promise<(Row & { organizationName: string }) | null> {
  if (!plausible(token)) return null;
  const t = organizationInvitations;
  const [row] = await ctx.service.db
    .select({ invitation: t, organizationName: organizations.name })
    .from(t)
    .innerJoin(organizations, and(eq(organizations.id, t.organizationId), eq(organizations.active, true)))
    .where(and(eq(t.workspaceId, ctx.workspace.id), eq(t.tokenHash, sha256Hex(token)), eq(t.state, "pending"), gt(t.expiresAt, ctx.service.clock.now())))
    .limit(1);
  return row ? { ...row.invitation, organizationName: row.organizationName } : null;
}

/** The sign-in rules the new account will live under: the invitation's application's, else the workspace's. */
async function policyOf(ctx: EndpointContext, row: Row): Promise<AuthPolicy> {
  if (row.clientPk) return policyFor(ctx, row.clientPk);
  const [ws] = await ctx.service.db.select({ authPolicy: workspaces.authPolicy }).from(workspaces).where(eq(workspaces.id, ctx.workspace.id)).limit(1);
  return effectivePolicy(ws?.authPolicy, null);
}

/** How this address accepts: with its existing account, through its organization's single sign-on, or with a new password (optional when email codes sign in). */
type Way = { kind: "existing"; userId: string; active: boolean } | { kind: "sso" } | { kind: "password"; optional: boolean };

async function wayOf(ctx: EndpointContext, row: Row): Promise<Way> {
  const [account] = await ctx.service.db
    .select({ id: users.id, status: users.status })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.emailNormalized, row.emailNormalized)))
    .limit(1);
  if (account) return { kind: "existing", userId: account.id, active: account.status === "active" };
  if (await connectionForAddress(ctx, row.emailNormalized)) return { kind: "sso" };
  const policy = await policyOf(ctx, row);
  return { kind: "password", optional: policy.firstFactors.includes(EMAIL_CODE_EVIDENCE.method) && emailAvailable(ctx.service.config) };
}

/** The form's CSRF token: bound to the workspace, the invitation and its current link (a link sent again makes an old page's form dead). */
const csrfBinding = (ctx: EndpointContext, row: Row) => [ctx.workspace.id, row.id, row.tokenHash];

/** What the confirmation is reached with: signed, so only an acceptance made here leads to it. */
function doneToken(ctx: EndpointContext, invitationId: string, discarded: boolean): string {
  const flag = discarded ? "1" : "0";
  return `${invitationId}.${flag}.${csrfToken(ctx.service.config.masterKey, "organization-invitation", ["accepted", ctx.workspace.id, invitationId, flag])}`;
}

function readDone(ctx: EndpointContext, value: string): { invitationId: string; passwordDiscarded: boolean } | null {
  const [invitationId, flag, signature, ...rest] = value.split(".");
  if (rest.length || !invitationId || (flag !== "0" && flag !== "1")) return null;
  if (!verifyCsrfToken(ctx.service.config.masterKey, "organization-invitation", ["accepted", ctx.workspace.id, invitationId, flag], signature)) return null;
  return { invitationId, passwordDiscarded: flag === "1" };
}

export type InvitationView =
  | { kind: "unavailable" }
  | {
      kind: "accept";
      organization: string;
      email: string;
      administrator: boolean;
      way: "existing" | "sso" | "password";
      passwordOptional: boolean;
      passwordMinLength: number;
      token: string;
      csrf: string;
      action: string;
      error: InvitationPageError | null;
    }
  | { kind: "accepted"; organization: string; email: string; sso: boolean; passwordDiscarded: boolean; application: { name: string; url: string } | null };

/** The page's view for its query: `token` (the link), `error` (after a refused post), `done` (after accepting). Reads only. */
export async function invitationView(ctx: EndpointContext, query: { token?: string; error?: string; done?: string }): Promise<InvitationView> {
  if (query.done) return acceptedView(ctx, query.done);
  const row = await acceptable(ctx, query.token);
  if (!row) return { kind: "unavailable" };
  const way = await wayOf(ctx, row);
  if (way.kind === "existing" && !way.active) return { kind: "unavailable" };
  const error = query.error && Object.hasOwn(INVITATION_PAGE_ERRORS, query.error) ? (query.error as InvitationPageError) : null;
  return {
    kind: "accept",
    organization: row.organizationName,
    email: row.email,
    administrator: row.administrator,
    way: way.kind,
    passwordOptional: way.kind === "password" && way.optional,
    passwordMinLength: PASSWORD_MIN_LENGTH,
    token: query.token!,
    csrf: csrfToken(ctx.service.config.masterKey, "organization-invitation", csrfBinding(ctx, row)),
    action: `${ctx.basePath}${INVITATION_ACCEPT_POST}`,
    error,
  };
}

async function acceptedView(ctx: EndpointContext, done: string): Promise<InvitationView> {
  const read = readDone(ctx, done);
  if (!read) return { kind: "unavailable" };
  const t = organizationInvitations;
  const [row] = await ctx.service.db
    .select({ email: t.email, emailNormalized: t.emailNormalized, organization: organizations.name, clientPk: t.clientPk })
    .from(t)
    .innerJoin(organizations, eq(organizations.id, t.organizationId))
    .where(and(eq(t.workspaceId, ctx.workspace.id), eq(t.id, read.invitationId), eq(t.state, "accepted")))
    .limit(1);
  if (!row) return { kind: "unavailable" };
  let application: { name: string; url: string } | null = null;
  if (row.clientPk) {
    const [client] = await ctx.service.db
      .select({ name: clients.name, active: clients.active, redirectUris: clients.redirectUris, homeUri: clients.homeUri })
      .from(clients)
      .where(and(eq(clients.workspaceId, ctx.workspace.id), eq(clients.id, row.clientPk)))
      .limit(1);
    const home = client?.active ? applicationHome(client) : null;
    if (client && home) application = { name: client.name, url: home };
  }
  const sso = (await connectionForAddress(ctx, row.emailNormalized)) !== null;
  return { kind: "accepted", organization: row.organization, email: row.email, sso, passwordDiscarded: read.passwordDiscarded, application };
}

const toPage = (ctx: EndpointContext, query: Record<string, string>) => redirect303(`${ctx.basePath}${INVITATION_PAGE_PATH}?${new URLSearchParams(query).toString()}`);

class Unavailable extends Error {}

/**
 * The acceptance form's post: `token`, `csrf`, and for a new account without single sign-on its
 * `password` (empty: none, where email codes sign in). Limited per client address
 * (ACCEPTANCE_ATTEMPTS, on the route).
 */
export const acceptInvitationEndpoint = hostedFormPost(async (request, ctx, form) => {
  const token = form.get("token");
  const row = await acceptable(ctx, token);
  if (!row || !plausible(token)) return hostedError("invitation_unavailable");
  if (!verifyCsrfToken(ctx.service.config.masterKey, "organization-invitation", csrfBinding(ctx, row), form.get("csrf"))) return hostedError("form_unverified");
  const way = await wayOf(ctx, row);
  if (way.kind === "existing" && !way.active) return hostedError("invitation_unavailable");

  let passwordHash: string | null = null;
  if (way.kind === "password") {
    const password = form.get("password") ?? "";
    const back = (error: InvitationPageError) => toPage(ctx, { token, error });
    if (password !== "" || !way.optional) {
      if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH || !isStorableText(password)) return back("weak_password");
      // The workspace's screening, as at sign-up and reset (lib/authn/passwords).
      try {
        await screenNewPassword(ctx.service, ctx.workspace.id, password, { userInputs: [row.emailNormalized] });
      } catch (error) {
        if (!(error instanceof PasswordRefused)) throw error;
        return back(error.code);
      }
      try {
        passwordHash = await hashPassword(password, clientAddress(request, ctx.service.config.trustProxy));
      } catch (error) {
        if (!(error instanceof PasswordWorkRefused)) throw error;
        return back("busy"); // the hashing queue is full: nothing was consumed
      }
    }
  }

  const ip = clientAddressOf(request.headers, ctx.service.config.trustProxy);
  const accepted = await ctx.service.db
    .transaction((tx) => accept(tx, ctx, row, passwordHash, ip))
    .catch((error: unknown) => {
      if (error instanceof Unavailable) return null;
      throw error;
    });
  if (!accepted) return hostedError("invitation_unavailable");
  return toPage(ctx, { done: doneToken(ctx, row.id, accepted.passwordDiscarded) });
});

/**
 * Consumes the invitation (one conditional UPDATE: of parallel accepts exactly one wins) and makes
 * the membership, within `tx`. Throws Unavailable (rolling everything back) when the link is no
 * longer acceptable or the account is disabled.
 */
async function accept(tx: Database, ctx: EndpointContext, row: Row, passwordHash: string | null, ip: string | null): Promise<{ userId: string; passwordDiscarded: boolean }> {
  const wid = ctx.workspace.id;
  const now = ctx.service.clock.now();
  const t = organizationInvitations;
  const [consumed] = await tx
    .update(t)
    .set({ state: "accepted", acceptedAt: now })
    .where(
      and(
        eq(t.workspaceId, wid),
        eq(t.id, row.id),
        eq(t.tokenHash, row.tokenHash),
        eq(t.state, "pending"),
        gt(t.expiresAt, now),
        // Its organization still active (named in full: a correlated subquery).
        sql`exists (select 1 from "organizations" o where o.id = "organization_invitations"."organization_id" and o.active)`,
      ),
    )
    .returning();
  if (!consumed) throw new Unavailable();

  // Two invitations of one address (two organizations) accepted at once make one account.
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`latchkey:account-email:${wid}:${consumed.emailNormalized}`}))`);
  const [account] = await tx
    .select({ id: users.id, status: users.status })
    .from(users)
    .where(and(eq(users.workspaceId, wid), eq(users.emailNormalized, consumed.emailNormalized)))
    .limit(1);
  let userId: string;
  let passwordDiscarded = false;
  if (account) {
    if (account.status !== "active") throw new Unavailable();
    userId = account.id;
    // The link proved the mailbox: the one rule of credentials set before that proof.
    passwordDiscarded = await mailboxProven(tx, { workspaceId: wid, userId }, now, "user.password_discarded");
  } else {
    userId = newId();
    await tx.insert(users).values({
      id: userId,
      workspaceId: wid,
      email: consumed.email,
      emailNormalized: consumed.emailNormalized,
      emailVerified: true,
      name: null,
      passwordHash,
      status: "active",
      createdAt: now,
      updatedAt: now,
    });
    await recordAudit(tx, { workspaceId: wid, type: "user.created", subject: userId, data: { email: consumed.emailNormalized, via: "organization_invitation", source: consumed.id }, ip, at: now });
  }

  const m = organizationMembers;
  const added = await tx
    .insert(m)
    .values({ id: newId(), workspaceId: wid, organizationId: consumed.organizationId, userId, origin: "invitation", administrator: consumed.administrator, createdAt: now })
    .onConflictDoNothing()
    .returning({ id: m.id });
  // Already a member (added since the invitation): the invitation still makes them an administrator when it says so.
  if (added.length === 0 && consumed.administrator) {
    await tx.update(m).set({ administrator: true }).where(and(eq(m.workspaceId, wid), eq(m.organizationId, consumed.organizationId), eq(m.userId, userId)));
  }
  const held = consumed.roleIds.length ? await tx.select({ id: roles.id }).from(roles).where(and(eq(roles.workspaceId, wid), inArray(roles.id, consumed.roleIds))) : [];
  if (held.length) {
    await tx
      .insert(userRoles)
      .values(held.map((r) => ({ id: newId(), workspaceId: wid, userId, roleId: r.id, organizationId: consumed.organizationId, createdAt: now })))
      .onConflictDoNothing();
  }
  await tx.update(t).set({ acceptedBy: userId }).where(eq(t.id, consumed.id));
  if (added.length > 0) {
    await recordAudit(tx, {
      workspaceId: wid,
      type: "authz.organization.member_added",
      subject: userId,
      data: { organization_id: consumed.organizationId, user_id: userId, via: "invitation", roles: held.map((r) => r.id) },
      ip,
      at: now,
    });
  }
  await recordAudit(tx, {
    workspaceId: wid,
    type: "organization.invitation_accepted",
    actor: userId,
    subject: userId,
    data: {
      organization_id: consumed.organizationId,
      invitation_id: consumed.id,
      account: account ? "existing" : "created",
      roles: held.map((r) => r.id),
      administrator: consumed.administrator,
      password_discarded: passwordDiscarded,
    },
    ip,
    at: now,
  });
  return { userId, passwordDiscarded };
}
