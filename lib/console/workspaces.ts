/** Workspaces as operators see them: only their own, with their role; creation; the overview. */
import { and, asc, count, desc, eq, gt, isNotNull, isNull, lt, not, sql } from "drizzle-orm";
import { z } from "zod";
import {
  accessTokens,
  revokedWorkloadTokens,
  apis,
  auditEvents,
  clients,
  clientSecrets,
  grants,
  hostedSessions,
  operatorMemberships,
  organizations,
  roles,
  signingKeys,
  users,
  workspaces,
} from "../../db/schema";
import { recordAudit } from "../audit/events";
import { chains, deadLinkSql, grantSource, nowValue, sessionSource } from "../authority";
import { addMs, DAY } from "../clock";
import { newId } from "../crypto";
import type { Service } from "../service";
import { RESERVED_WORKSPACE_IDS } from "../workspaces/document";
import { expiringClientSecrets } from "./secret-expiry";
import { workspaceIssuers, type ConsoleIssuers } from "./issuers";
import { ConsoleAccessError, requireOperator, type OperatorRole, type WorkspaceAccess } from "./authz";
import { confirmField, requireConfirmation } from "./confirmation";
import { text } from "./forms";
import { isInstallationOperator } from "../operators/installation";
import { defineOperation, formError, type OperationOutcome } from "./operation";
import { SYSTEM_WORKSPACE_ID } from "./system";

export interface WorkspaceSummary {
  id: string;
  name: string;
  role: OperatorRole;
  applications: number;
  users: number;
  createdAt: Date;
}

/** The workspaces the operator is a member of, with their role; never the system workspace. */
export async function listOperatorWorkspaces(service: Service, operatorUserId: string): Promise<WorkspaceSummary[]> {
  const rows = await service.db
    .select({
      id: workspaces.id,
      name: workspaces.name,
      role: operatorMemberships.role,
      createdAt: workspaces.createdAt,
      applications: sql<number>`(select count(*)::int from ${clients} where ${clients.workspaceId} = ${workspaces.id})`,
      users: sql<number>`(select count(*)::int from ${users} where ${users.workspaceId} = ${workspaces.id})`,
    })
    .from(operatorMemberships)
    .innerJoin(workspaces, eq(workspaces.id, operatorMemberships.workspaceId))
    .where(and(eq(operatorMemberships.operatorUserId, operatorUserId), eq(workspaces.system, false)))
    .orderBy(asc(workspaces.id));
  return rows.map((r) => ({ ...r, applications: Number(r.applications), users: Number(r.users) }));
}

/**
 * Whether the operator may create workspaces: installation operators only. A workspace owner is a
 * tenant of the installation, not its operator (lib/operators/installation.ts).
 */
export function canCreateWorkspaces(service: Service, operatorUserId: string): Promise<boolean> {
  return isInstallationOperator(service.db, operatorUserId);
}

export const createWorkspaceInput = z.object({
  id: z
    .string({ error: "Enter an id" })
    .trim()
    .regex(/^[a-z0-9][a-z0-9-]{1,62}$/, "Use 2–63 characters of a–z, 0–9 and -, starting with a letter or digit")
    .refine((v) => !RESERVED_WORKSPACE_IDS.has(v), "This id is reserved"),
  name: text("a name"),
});

/** Creates a workspace; the creator becomes its owner. Installation operators only, checked here. */
export async function createWorkspace(
  service: Service,
  token: string | null | undefined,
  raw: unknown,
  meta: { ip?: string | null } = {},
): Promise<OperationOutcome<{ id: string }>> {
  const operator = await requireOperator(service, token);
  if (!(await canCreateWorkspaces(service, operator.userId))) {
    throw new ConsoleAccessError("forbidden", "Only installation operators can create workspaces.");
  }
  const parsed = createWorkspaceInput.safeParse(raw);
  if (!parsed.success) {
    const fieldErrors: Record<string, string> = {};
    for (const issue of parsed.error.issues) fieldErrors[String(issue.path[0] ?? "_form")] ??= issue.message;
    return { ok: false, fieldErrors };
  }
  const { id, name } = parsed.data;
  const created = await service.db.transaction(async (tx) => {
    const now = service.clock.now();
    const inserted = await tx.insert(workspaces).values({ id, name, system: false, createdAt: now, updatedAt: now }).onConflictDoNothing().returning({ id: workspaces.id });
    if (inserted.length === 0) return false;
    await tx.insert(operatorMemberships).values({ id: newId(), operatorUserId: operator.userId, workspaceId: id, role: "owner", createdAt: now });
    await recordAudit(tx, {
      workspaceId: id,
      type: "console.workspace.created",
      actor: operator.userId,
      subject: id,
      data: { operator: operator.email, name },
      ip: meta.ip ?? null,
      at: now,
    });
    return true;
  });
  if (!created) return { ok: false, fieldErrors: { id: "A workspace with this id already exists" } };
  return { ok: true, result: { id } };
}

export interface WorkspaceOverview {
  id: string;
  name: string;
  /** At the primary hostname, else at the default host. */
  issuer: string;
  /** The issuers the workspace answers as (./issuers.ts): `issuer` is their primary. */
  issuers: ConsoleIssuers;
  discovery: string;
  jwks: string;
  counts: { applications: number; users: number; apis: number; roles: number; organizations: number; activeSessions: number; activeGrants: number };
  /** Clients whose longest-lived live secret expires within 14 days (./secret-expiry.ts): a rotation's superseded secret is not one. */
  expiringSecrets: { clientId: string; expiresAt: Date }[];
  /** Audit events flagged as possible theft in the last 30 days. */
  flaggedEvents: number;
  activeKey: { kid: string; activatedAt: Date | null } | null;
  pendingKey: { kid: string; createdAt: Date } | null;
}

export async function workspaceOverview(service: Service, access: WorkspaceAccess): Promise<WorkspaceOverview> {
  const db = service.db;
  const wid = access.workspace.id;
  const now = service.clock.now();
  const countOf = async (table: typeof clients | typeof users | typeof apis | typeof roles | typeof organizations) =>
    Number((await db.select({ n: count() }).from(table).where(eq(table.workspaceId, wid)))[0]?.n ?? 0);
  const [applications, userCount, apiCount, roleCount, orgCount, sessions, grantCount, expiring, flagged, keys, issuers] = await Promise.all([
    countOf(clients),
    countOf(users),
    countOf(apis),
    countOf(roles),
    countOf(organizations),
    db
      .select({ n: count() })
      .from(hostedSessions)
      .where(and(eq(hostedSessions.workspaceId, wid), not(deadLinkSql("session", chains.sessionRecord, sessionSource, nowValue(now))))),
    db
      .select({ n: count() })
      .from(grants)
      .where(and(eq(grants.workspaceId, wid), not(deadLinkSql("grant", chains.grantRecord, grantSource, nowValue(now))))),
    expiringClientSecrets(db, wid, now),
    db
      .select({ n: count() })
      .from(auditEvents)
      .where(and(eq(auditEvents.workspaceId, wid), isNotNull(auditEvents.flagged), gt(auditEvents.createdAt, addMs(now, -30 * DAY)))),
    db.select().from(signingKeys).where(and(eq(signingKeys.workspaceId, wid), sql`${signingKeys.status} in ('active', 'published')`)).orderBy(desc(signingKeys.createdAt)),
    workspaceIssuers(service, wid),
  ]);
  const issuer = issuers.primary;
  const active = keys.find((k) => k.status === "active");
  const pending = keys.find((k) => k.status === "published");
  return {
    id: wid,
    name: access.workspace.name,
    issuer,
    issuers,
    discovery: `${issuer}/.well-known/openid-configuration`,
    jwks: `${issuer}/.well-known/jwks.json`,
    counts: {
      applications,
      users: userCount,
      apis: apiCount,
      roles: roleCount,
      organizations: orgCount,
      activeSessions: Number(sessions[0]?.n ?? 0),
      activeGrants: Number(grantCount[0]?.n ?? 0),
    },
    expiringSecrets: expiring,
    flaggedEvents: Number(flagged[0]?.n ?? 0),
    activeKey: active ? { kid: active.kid, activatedAt: active.activatedAt ?? active.createdAt } : null,
    pendingKey: pending ? { kid: pending.kid, createdAt: pending.createdAt } : null,
  };
}

/** Renames the workspace (the name the console and the hosted pages show; the id and issuer stay). */
export const renameWorkspace = defineOperation({
  name: "workspace.renamed",
  role: "admin",
  input: z.object({ name: text("a name") }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [row] = await ctx.db.select({ name: workspaces.name }).from(workspaces).where(and(eq(workspaces.id, wid), eq(workspaces.system, false))).for("update");
    if (!row) throw formError("This workspace no longer exists");
    if (row.name === input.name) return { result: null, audit: null };
    await ctx.db.update(workspaces).set({ name: input.name, updatedAt: ctx.now }).where(eq(workspaces.id, wid));
    return { result: null, audit: { target: wid, data: { name: input.name, previous_name: row.name } } };
  },
});

/** What deleting a workspace removes, for its confirmation. */
export async function workspaceFootprint(service: Service, workspaceId: string): Promise<{ applications: number; users: number; activeSessions: number; activeGrants: number }> {
  const db = service.db;
  const now = service.clock.now();
  const [[a], [u], [s], [g]] = await Promise.all([
    db.select({ n: count() }).from(clients).where(eq(clients.workspaceId, workspaceId)),
    db.select({ n: count() }).from(users).where(eq(users.workspaceId, workspaceId)),
    db
      .select({ n: count() })
      .from(hostedSessions)
      .where(and(eq(hostedSessions.workspaceId, workspaceId), not(deadLinkSql("session", chains.sessionRecord, sessionSource, nowValue(now))))),
    db
      .select({ n: count() })
      .from(grants)
      .where(and(eq(grants.workspaceId, workspaceId), not(deadLinkSql("grant", chains.grantRecord, grantSource, nowValue(now))))),
  ]);
  return { applications: Number(a?.n ?? 0), users: Number(u?.n ?? 0), activeSessions: Number(s?.n ?? 0), activeGrants: Number(g?.n ?? 0) };
}

/**
 * Deletes a workspace and everything in it: every table that belongs to a workspace cascades from
 * it (applications, users, sessions, grants, refresh tokens, keys, the audit log); access tokens
 * and the deny list of workload tokens, which have no foreign keys, are deleted here. Its issuer stops answering at once. Owners only,
 * confirmed by typing the workspace id; never the system workspace. The event is recorded in the
 * system workspace's audit log, since the workspace's own goes with it.
 */
export const deleteWorkspace = defineOperation({
  name: "workspace.deleted",
  role: "owner",
  input: z.object({ confirm: confirmField() }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    if (wid === SYSTEM_WORKSPACE_ID) throw formError("The console's own workspace cannot be deleted");
    requireConfirmation(input.confirm, wid, "the workspace id");
    const [row] = await ctx.db.select().from(workspaces).where(and(eq(workspaces.id, wid), eq(workspaces.system, false))).for("update");
    if (!row) throw formError("This workspace no longer exists");
    const [[apps], [people]] = await Promise.all([
      ctx.db.select({ n: count() }).from(clients).where(eq(clients.workspaceId, wid)),
      ctx.db.select({ n: count() }).from(users).where(eq(users.workspaceId, wid)),
    ]);
    await ctx.db.delete(accessTokens).where(eq(accessTokens.workspaceId, wid));
    await ctx.db.delete(revokedWorkloadTokens).where(eq(revokedWorkloadTokens.workspaceId, wid));
    await ctx.db.delete(workspaces).where(eq(workspaces.id, wid));
    await recordAudit(ctx.db, {
      workspaceId: SYSTEM_WORKSPACE_ID,
      type: "console.workspace.deleted",
      actor: ctx.access.operator.userId,
      subject: wid,
      data: { operator: ctx.access.operator.email, role: ctx.access.role, name: row.name, applications: Number(apps?.n ?? 0), users: Number(people?.n ?? 0) },
      ip: null,
      at: ctx.now,
    });
    // Recorded above, in the system workspace: the workspace's own audit log is gone with it.
    return { result: { deleted: wid }, audit: null };
  },
});
