/**
 * Users of a workspace: list (paged, searchable), create, password, email verification,
 * disable/enable, roles; their hosted sessions and grants, each of which can be ended.
 * Disabling a user ends their access at once: every token check joins the user's status, and
 * their live hosted sessions (with every grant made in them) and portal sessions are ended, so
 * enabling them again does not bring an old session back. Deleting a user removes them with
 * everything they hold.
 */
import { and, asc, count, desc, eq, gt, ilike, inArray, isNull, max, or } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { accessTokens, accountSecurityPortalSessions, clients, grants, hostedSessions, users } from "../../db/schema";
import { chains, nowValue, selectGrantChain, sessionIsLive } from "../authority";
import { FACTORS, HELD_KINDS, type HeldKind } from "../authn/factors/registry";
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../authn/password";
import { screenNewPassword } from "../authn/passwords/policy";
import { assignUserRole, removeUserRole } from "../authz/model";
import { newId } from "../crypto";
import { contextFor } from "../server/router";
import { revokeGrant } from "../oauth/grants/refresh-token";
import type { Service } from "../service";
import { confirmField, requireConfirmation } from "./confirmation";
import { checkbox, email, id, optionalText } from "./forms";
import { defineOperation, fieldError, formError, type OperationContext } from "./operation";
import { normalizeEmail } from "../authn/email-address";
import { endAccountSessions } from "../authn/hosted-session";

export const USERS_PAGE_SIZE = 25;

export type UserRow = Omit<typeof users.$inferSelect, "passwordHash" | "passwordUnproven" | "breachedPasswordHash" | "locale"> & { hasPassword: boolean };

export type FactorKind = HeldKind;

/**
 * A listed user with when they last signed in (their newest hosted session) and were last seen,
 * the kinds of factor they hold, and the user agents of their live sessions (their devices).
 */
export type UserListRow = UserRow & { lastSignInAt: Date | null; lastSeenAt: Date | null; factorKinds: FactorKind[]; deviceUserAgents: (string | null)[] };

export interface UserPage {
  rows: UserListRow[];
  total: number;
  page: number;
  pages: number;
}

const userColumns = {
  id: users.id,
  workspaceId: users.workspaceId,
  email: users.email,
  emailNormalized: users.emailNormalized,
  emailVerified: users.emailVerified,
  name: users.name,
  status: users.status,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
};

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** One page of a workspace's users, newest first, optionally filtered by email or name. */
export async function listUsers(service: Service, workspaceId: string, options: { page?: number; query?: string } = {}): Promise<UserPage> {
  const query = options.query?.trim() ?? "";
  const where = and(
    eq(users.workspaceId, workspaceId),
    query ? or(ilike(users.emailNormalized, `%${escapeLike(query.toLowerCase())}%`), ilike(users.name, `%${escapeLike(query)}%`)) : undefined,
  );
  const [{ n }] = await service.db.select({ n: count() }).from(users).where(where);
  const total = Number(n);
  const pages = Math.max(1, Math.ceil(total / USERS_PAGE_SIZE));
  const page = Math.min(Math.max(1, Math.floor(options.page ?? 1)), pages);
  const rows = await service.db
    .select({ ...userColumns, passwordHash: users.passwordHash })
    .from(users)
    .where(where)
    .orderBy(desc(users.createdAt), asc(users.id))
    .limit(USERS_PAGE_SIZE)
    .offset((page - 1) * USERS_PAGE_SIZE);
  const ids = rows.map((r) => r.id);
  const [activity, kinds, devices] = await Promise.all([lastActivity(service.db, workspaceId, ids), factorKindsOf(service.db, workspaceId, ids), liveDevicesOf(service.db, workspaceId, ids, service.clock.now())]);
  return {
    rows: rows.map(({ passwordHash, ...r }) => ({
      ...r,
      hasPassword: passwordHash !== null,
      lastSignInAt: activity.get(r.id)?.signIn ?? null,
      lastSeenAt: activity.get(r.id)?.seen ?? null,
      factorKinds: kinds.get(r.id) ?? [],
      deviceUserAgents: devices.get(r.id) ?? [],
    })),
    total,
    page,
    pages,
  };
}

/** Newest sign-in (hosted session created) and last sighting per user, one grouped query. */
async function lastActivity(db: Database, workspaceId: string, userIds: string[]): Promise<Map<string, { signIn: Date | null; seen: Date | null }>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .select({ userId: hostedSessions.userId, signIn: max(hostedSessions.createdAt), seen: max(hostedSessions.lastSeenAt) })
    .from(hostedSessions)
    .where(and(eq(hostedSessions.workspaceId, workspaceId), inArray(hostedSessions.userId, userIds)))
    .groupBy(hostedSessions.userId);
  return new Map(rows.map((r) => [r.userId, { signIn: r.signIn ? new Date(r.signIn) : null, seen: r.seen ? new Date(r.seen) : null }]));
}

/** The kinds of factor each user holds (a usable one: a confirmed authenticator app, an unused recovery code), in the registry's order. */
async function factorKindsOf(db: Database, workspaceId: string, userIds: string[]): Promise<Map<string, FactorKind[]>> {
  const out = new Map<string, FactorKind[]>();
  if (userIds.length === 0) return out;
  const held = (await Promise.all(FACTORS.map((f) => (f.held ? f.held.holders(db, workspaceId, userIds) : Promise.resolve([]))))).flat();
  for (const kind of HELD_KINDS) for (const h of held.filter((h) => h.kind === kind)) out.set(h.userId, [...(out.get(h.userId) ?? []), kind]);
  return out;
}

/** The user agents of each user's live hosted sessions, newest first. */
async function liveDevicesOf(db: Database, workspaceId: string, userIds: string[], now: Date): Promise<Map<string, (string | null)[]>> {
  const out = new Map<string, (string | null)[]>();
  if (userIds.length === 0) return out;
  const rows = await db
    .select({ userId: hostedSessions.userId, userAgent: hostedSessions.userAgent, endedAt: hostedSessions.endedAt, idleExpiresAt: hostedSessions.idleExpiresAt, absoluteExpiresAt: hostedSessions.absoluteExpiresAt })
    .from(hostedSessions)
    .where(and(eq(hostedSessions.workspaceId, workspaceId), inArray(hostedSessions.userId, userIds), isNull(hostedSessions.endedAt), gt(hostedSessions.absoluteExpiresAt, now)))
    .orderBy(desc(hostedSessions.lastSeenAt));
  for (const r of rows.filter((r) => sessionIsLive(r, now))) out.set(r.userId, [...(out.get(r.userId) ?? []), r.userAgent]);
  return out;
}

export async function userLastActivity(service: Service, workspaceId: string, userId: string): Promise<{ signIn: Date | null; seen: Date | null }> {
  return (await lastActivity(service.db, workspaceId, [userId])).get(userId) ?? { signIn: null, seen: null };
}

export async function getUser(service: Service, workspaceId: string, userId: string): Promise<UserRow | null> {
  const [row] = await service.db
    .select({ ...userColumns, passwordHash: users.passwordHash })
    .from(users)
    .where(and(eq(users.workspaceId, workspaceId), eq(users.id, userId)))
    .limit(1);
  if (!row) return null;
  const { passwordHash, ...rest } = row;
  return { ...rest, hasPassword: passwordHash !== null };
}

export interface SessionInfo {
  id: string;
  createdAt: Date;
  lastSeenAt: Date;
  idleExpiresAt: Date;
  absoluteExpiresAt: Date;
  endedAt: Date | null;
  endReason: string | null;
  amr: string[];
  ip: string | null;
  userAgent: string | null;
  live: boolean;
}

export interface GrantInfo {
  id: string;
  clientId: string;
  clientName: string;
  sessionId: string;
  scope: string[];
  createdAt: Date;
  lastUsedAt: Date;
  revokedAt: Date | null;
  revokeReason: string | null;
  live: boolean;
}

/**
 * The user's hosted sessions and grants (newest 50 each), with whether each is still live in the
 * sense an operator can end it (lib/authority `chains.sessionRecord`, `chains.grantRecord`): the
 * session's own state; the grant's own state and its session's. A disabled user or client does not
 * make a grant ended: it may come back, and stays revocable.
 */
export async function userSessionsAndGrants(service: Service, workspaceId: string, userId: string): Promise<{ sessions: SessionInfo[]; grants: GrantInfo[] }> {
  const now = service.clock.now();
  const [sessionRows, grantRows] = await Promise.all([
    service.db
      .select({
        id: hostedSessions.id,
        createdAt: hostedSessions.createdAt,
        lastSeenAt: hostedSessions.lastSeenAt,
        idleExpiresAt: hostedSessions.idleExpiresAt,
        absoluteExpiresAt: hostedSessions.absoluteExpiresAt,
        endedAt: hostedSessions.endedAt,
        endReason: hostedSessions.endReason,
        amr: hostedSessions.amr,
        ip: hostedSessions.ip,
        userAgent: hostedSessions.userAgent,
      })
      .from(hostedSessions)
      .where(and(eq(hostedSessions.workspaceId, workspaceId), eq(hostedSessions.userId, userId)))
      .orderBy(desc(hostedSessions.createdAt))
      .limit(50),
    selectGrantChain(
      service.db,
      nowValue(now),
      {
        id: grants.id,
        clientId: clients.clientId,
        clientName: clients.name,
        sessionId: grants.sessionId,
        scope: grants.scope,
        createdAt: grants.createdAt,
        lastUsedAt: grants.lastUsedAt,
        revokedAt: grants.revokedAt,
        revokeReason: grants.revokeReason,
      },
      chains.grantRecord,
    )
      .where(and(eq(grants.workspaceId, workspaceId), eq(grants.userId, userId)))
      .orderBy(desc(grants.createdAt))
      .limit(50),
  ]);
  // Loaded rows: the JS twin judges them.
  const sessions = sessionRows.map((s) => ({ ...s, live: sessionIsLive(s, now) }));
  const grantInfos = grantRows.map((g) => ({
    id: g.id,
    clientId: g.clientId,
    clientName: g.clientName,
    sessionId: g.sessionId,
    scope: g.scope,
    createdAt: g.createdAt,
    lastUsedAt: g.lastUsedAt,
    revokedAt: g.revokedAt,
    revokeReason: g.revokeReason,
    live: g.refusal === null,
  }));
  return { sessions, grants: grantInfos };
}

const password = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `Use at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `Use at most ${PASSWORD_MAX_LENGTH} characters`);

const optionalPassword = z.preprocess((v) => (v === "" ? undefined : v), password.optional());

async function targetUser(ctx: OperationContext, userId: string) {
  const [user] = await ctx.db
    .select({ id: users.id, email: users.email, status: users.status, emailVerified: users.emailVerified })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.access.workspace.id), eq(users.id, userId)))
    .limit(1);
  if (!user) throw formError("This user no longer exists");
  return user;
}

export const createUser = defineOperation({
  name: "user.created",
  role: "admin",
  input: z.object({
    email: email(),
    name: optionalText(200),
    password: optionalPassword,
    email_verified: checkbox(),
  }),
  async prepare(input, { service, access }) {
    if (!input.password) return { passwordHash: null };
    await screenNewPassword(service, access.workspace.id, input.password, { userInputs: [input.email, input.name ?? ""] });
    return { passwordHash: await hashPassword(input.password) };
  },
  async run(ctx, input, { passwordHash }) {
    const userId = newId();
    const inserted = await ctx.db
      .insert(users)
      .values({
        id: userId,
        workspaceId: ctx.access.workspace.id,
        email: input.email,
        emailNormalized: normalizeEmail(input.email)!,
        emailVerified: input.email_verified,
        name: input.name ?? null,
        passwordHash,
        status: "active",
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
      .onConflictDoNothing()
      .returning({ id: users.id });
    if (inserted.length === 0) throw fieldError("email", "A user with this email already exists");
    return { result: { id: userId }, audit: { target: input.email, data: { user_id: userId, email_verified: input.email_verified, password_set: passwordHash !== null } } };
  },
});

export const setUserPassword = defineOperation({
  name: "user.password_set",
  role: "admin",
  input: z.object({ user_id: id("user"), password }),
  async prepare(input, { service, access }) {
    const [user] = await service.db
      .select({ email: users.email, name: users.name })
      .from(users)
      .where(and(eq(users.workspaceId, access.workspace.id), eq(users.id, input.user_id)))
      .limit(1);
    await screenNewPassword(service, access.workspace.id, input.password, { userInputs: user ? [user.email, user.name ?? ""] : [] });
    return { passwordHash: await hashPassword(input.password) };
  },
  async run(ctx, input, { passwordHash }) {
    const user = await targetUser(ctx, input.user_id);
    await ctx.db.update(users).set({ passwordHash, updatedAt: ctx.now }).where(eq(users.id, user.id));
    return { result: null, audit: { target: user.email, data: { user_id: user.id } } };
  },
});

export const updateUserProfile = defineOperation({
  name: "user.updated",
  role: "admin",
  input: z.object({ user_id: id("user"), name: optionalText(200), email_verified: checkbox() }),
  async run(ctx, input) {
    const user = await targetUser(ctx, input.user_id);
    await ctx.db.update(users).set({ name: input.name ?? null, emailVerified: input.email_verified, updatedAt: ctx.now }).where(eq(users.id, user.id));
    return { result: null, audit: { target: user.email, data: { user_id: user.id, name: input.name ?? null, email_verified: input.email_verified } } };
  },
});

/** What disabling or deleting a user ends now: live hosted sessions, live grants (refresh families), open portal sessions. */
export interface UserFootprint {
  sessions: number;
  grants: number;
  portalSessions: number;
}

export async function userFootprint(db: Database, workspaceId: string, userId: string, now: Date): Promise<UserFootprint> {
  const [sessionRows, grantRows, [portal]] = await Promise.all([
    db
      .select({ endedAt: hostedSessions.endedAt, idleExpiresAt: hostedSessions.idleExpiresAt, absoluteExpiresAt: hostedSessions.absoluteExpiresAt })
      .from(hostedSessions)
      .where(and(eq(hostedSessions.workspaceId, workspaceId), eq(hostedSessions.userId, userId), isNull(hostedSessions.endedAt))),
    selectGrantChain(db, nowValue(now), { id: grants.id }, chains.grantRecord).where(and(eq(grants.workspaceId, workspaceId), eq(grants.userId, userId))),
    db
      .select({ n: count() })
      .from(accountSecurityPortalSessions)
      .where(
        and(
          eq(accountSecurityPortalSessions.workspaceId, workspaceId),
          eq(accountSecurityPortalSessions.userId, userId),
          isNull(accountSecurityPortalSessions.endedAt),
          gt(accountSecurityPortalSessions.expiresAt, now),
        ),
      ),
  ]);
  return {
    sessions: sessionRows.filter((r) => sessionIsLive(r, now)).length,
    grants: grantRows.filter((g) => g.refusal === null).length,
    portalSessions: Number(portal?.n ?? 0),
  };
}

const footprintData = (f: UserFootprint) => ({ sessions_ended: f.sessions, grants_ended: f.grants, portal_sessions_ended: f.portalSessions });

/**
 * Disables or enables a user. Disabling ends their live hosted sessions, their grants (refresh
 * tokens and access tokens fail their checks) and portal sessions (lib/authn's one rule for it);
 * the user's status alone already fails every check, ending the sessions keeps an enable from
 * reviving them.
 */
export const setUserStatus = defineOperation({
  name: "user.status_changed",
  role: "admin",
  input: z.object({ user_id: id("user"), status: z.enum(["active", "disabled"]) }),
  async run(ctx, input) {
    const user = await targetUser(ctx, input.user_id);
    if (user.status === input.status) return { result: null, audit: null };
    const wid = ctx.access.workspace.id;
    const ended = input.status === "disabled" ? await userFootprint(ctx.db, wid, user.id, ctx.now) : null;
    await ctx.db.update(users).set({ status: input.status, updatedAt: ctx.now }).where(eq(users.id, user.id));
    if (input.status === "disabled") await endAccountSessions(ctx.db, { workspaceId: wid, userId: user.id, now: ctx.now, reason: "user_disabled" });
    return { result: null, audit: { target: user.email, data: { user_id: user.id, status: input.status, ...(ended ? footprintData(ended) : {}) } } };
  },
});

/**
 * Deletes a user for good, confirmed by typing their email: their sessions, grants (refresh
 * tokens), codes, portal sessions, factors, roles, memberships and linked sign-ins go by
 * foreign-key cascade; access tokens, which have no foreign keys, are deleted here.
 */
export const deleteUser = defineOperation({
  name: "user.deleted",
  role: "admin",
  input: z.object({ user_id: id("user"), confirm: confirmField() }),
  async run(ctx, input) {
    const user = await targetUser(ctx, input.user_id);
    requireConfirmation(input.confirm, user.email, "the user's email");
    const wid = ctx.access.workspace.id;
    const ended = await userFootprint(ctx.db, wid, user.id, ctx.now);
    await ctx.db.delete(accessTokens).where(and(eq(accessTokens.workspaceId, wid), eq(accessTokens.userId, user.id)));
    await ctx.db.delete(users).where(and(eq(users.workspaceId, wid), eq(users.id, user.id)));
    return { result: null, audit: { target: user.email, data: { user_id: user.id, ...footprintData(ended) } } };
  },
});

const organizationRef = z.preprocess((v) => (v === "" || v === undefined ? null : v), z.string().nullable());

export const assignRole = defineOperation({
  name: "user.role_assigned",
  role: "admin",
  input: z.object({ user_id: id("user"), role: id("role"), organization: organizationRef }),
  async run(ctx, input) {
    const user = await targetUser(ctx, input.user_id);
    const added = await assignUserRole(ctx.db, {
      workspaceId: ctx.access.workspace.id,
      clock: ctx.service.clock,
      actor: ctx.access.operator.userId,
      userId: user.id,
      role: input.role,
      organization: input.organization,
    });
    if (!added) throw fieldError("role", "The user already holds this role there");
    return { result: null, audit: { target: user.email, data: { user_id: user.id, role: input.role, organization: input.organization } } };
  },
});

export const removeRole = defineOperation({
  name: "user.role_removed",
  role: "admin",
  input: z.object({ user_id: id("user"), role: id("role"), organization: organizationRef }),
  async run(ctx, input) {
    const user = await targetUser(ctx, input.user_id);
    await removeUserRole(ctx.db, {
      workspaceId: ctx.access.workspace.id,
      clock: ctx.service.clock,
      actor: ctx.access.operator.userId,
      userId: user.id,
      role: input.role,
      organization: input.organization,
    });
    return { result: null, audit: { target: user.email, data: { user_id: user.id, role: input.role, organization: input.organization } } };
  },
});

/** Ends a hosted session: every grant made in it stops passing the session check and refresh. */
export const endUserSession = defineOperation({
  name: "user.session_ended",
  role: "admin",
  input: z.object({ user_id: id("user"), session_id: id("session") }),
  async run(ctx, input) {
    const user = await targetUser(ctx, input.user_id);
    const ended = await ctx.db
      .update(hostedSessions)
      .set({ endedAt: ctx.now, endReason: "console" })
      .where(and(eq(hostedSessions.workspaceId, ctx.access.workspace.id), eq(hostedSessions.userId, user.id), eq(hostedSessions.id, input.session_id), isNull(hostedSessions.endedAt)))
      .returning({ id: hostedSessions.id });
    if (ended.length === 0) throw formError("This session has already ended");
    return { result: null, audit: { target: user.email, data: { user_id: user.id, session_id: input.session_id } } };
  },
});

/** Revokes a grant (refresh family) and with it every access token issued from it. */
export const revokeUserGrant = defineOperation({
  name: "user.grant_revoked",
  role: "admin",
  input: z.object({ user_id: id("user"), grant_id: id("grant") }),
  async run(ctx, input) {
    const user = await targetUser(ctx, input.user_id);
    const [grant] = await ctx.db
      .select({ id: grants.id, clientPk: grants.clientPk })
      .from(grants)
      .where(and(eq(grants.workspaceId, ctx.access.workspace.id), eq(grants.userId, user.id), eq(grants.id, input.grant_id)))
      .limit(1);
    if (!grant) throw formError("This grant does not exist");
    const endpoint = contextFor({ ...ctx.service, db: ctx.db }, ctx.access.workspace);
    if (!(await revokeGrant(endpoint, grant.id, "console"))) throw formError("This grant is already revoked");
    const [client] = await ctx.db.select({ clientId: clients.clientId }).from(clients).where(eq(clients.id, grant.clientPk)).limit(1);
    return { result: null, audit: { target: user.email, clientId: client?.clientId ?? null, data: { user_id: user.id, grant_id: grant.id } } };
  },
});
