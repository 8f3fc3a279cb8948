/**
 * `/Groups`: create, get, list with a filter, replace, patch and delete an organization directory's
 * groups, and their members (the directory's users, by their SCIM ids). Members are rows of their
 * own, so that adding one member to a group of thousands neither reads nor rewrites the others;
 * the directory's mapping from groups to roles (./accounts.ts `syncRoles`) follows every change.
 */
import { and, asc, count, eq, inArray, notInArray, sql } from "drizzle-orm";
import type { Filter } from "scim2-parse-filter";
import { scimGroupMembers, scimGroups, scimUsers } from "../../../db/schema";
import { recordAudit } from "../../audit/events";
import type { Database } from "../../../db/client";
import type { EndpointContext } from "../../http/context";
import { isStorableText } from "../../text";
import { newId } from "../../crypto";
import { syncRoles } from "./accounts";
import { canonicalize, GROUP_SCHEMA, isObject, keyOf } from "./attributes";
import type { DirectoryAccess } from "./directory";
import { badRequest, conflict, notFound, scimJson } from "./errors";
import { filterSql } from "./filter";
import { applyPatch, readOperations, type PatchOperation } from "./patch";
import { checkIfMatch, etagOf, inScimTransaction, listed, listResponse, meta, notModifiedAnswer, projection, readScimBody, resourceResponse, type ScimCall } from "./resources";

type Row = typeof scimGroups.$inferSelect;

const MAX_NAME = 256;
/** At most this many member ids are named in one audit event (the counts are exact). */
const AUDITED_MEMBERS = 100;

const inDirectory = (access: DirectoryAccess) => and(eq(scimGroups.workspaceId, access.directory.workspaceId), eq(scimGroups.directoryId, access.directory.id));

interface GroupInput {
  attributes: Record<string, unknown>;
  displayName: string;
  externalId: string | null;
}

function readGroup(body: Record<string, unknown>): { input: GroupInput; members: string[] | null } {
  const attributes = canonicalize("Group", body);
  const members = attributes.members === undefined ? null : memberIds(attributes.members);
  for (const name of ["id", "meta", "schemas", "members"]) delete attributes[name];
  const displayName = attributes.displayName;
  if (typeof displayName !== "string" || displayName.trim() === "" || displayName.length > MAX_NAME || !isStorableText(displayName)) {
    throw badRequest("invalidValue", `displayName is required: a string of at most ${MAX_NAME} characters`);
  }
  const externalId = attributes.externalId;
  if (externalId !== undefined && externalId !== null && (typeof externalId !== "string" || externalId.length > MAX_NAME)) throw badRequest("invalidValue", "externalId must be a string");
  return { input: { attributes, displayName, externalId: typeof externalId === "string" && externalId !== "" ? externalId : null }, members };
}

/** The member ids of a `members` value: a list of `{ value }` (a single one is accepted as a list of one). */
function memberIds(value: unknown): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map((m) => {
    const key = isObject(m) ? keyOf(m, "value") : undefined;
    const id = key === undefined ? undefined : (m as Record<string, unknown>)[key];
    if (typeof id !== "string" || id === "" || id.length > 64) throw badRequest("invalidValue", "Each member is an object whose value is a user's id");
    return id;
  });
}

async function loadGroup(ctx: EndpointContext, access: DirectoryAccess, id: string): Promise<Row> {
  const [row] = await ctx.service.db
    .select()
    .from(scimGroups)
    .where(and(inDirectory(access), eq(scimGroups.id, id)))
    .limit(1);
  if (!row) throw notFound(`No group ${id} in this directory`);
  return row;
}

/** The members of groups, by group id. */
async function membersOf(ctx: EndpointContext, groupIds: string[]): Promise<Map<string, { id: string; display: string }[]>> {
  const out = new Map<string, { id: string; display: string }[]>(groupIds.map((g) => [g, []]));
  if (groupIds.length === 0) return out;
  const rows = await ctx.service.db
    .select({ groupId: scimGroupMembers.groupId, id: scimUsers.id, userName: scimUsers.userName, displayName: scimUsers.displayName })
    .from(scimGroupMembers)
    .innerJoin(scimUsers, eq(scimUsers.id, scimGroupMembers.scimUserId))
    .where(inArray(scimGroupMembers.groupId, groupIds))
    .orderBy(asc(scimUsers.userNameKey));
  for (const r of rows) out.get(r.groupId)!.push({ id: r.id, display: r.displayName ?? r.userName });
  return out;
}

function renderGroup(call: Pick<ScimCall, "base">, row: Row, members: { id: string; display: string }[] | null): Record<string, unknown> {
  const location = `${call.base}/Groups/${row.id}`;
  return {
    schemas: [GROUP_SCHEMA],
    id: row.id,
    ...row.attributes,
    displayName: row.displayName,
    ...(members ? { members: members.map((m) => ({ value: m.id, display: m.display, $ref: `${call.base}/Users/${m.id}` })) } : {}),
    meta: meta("Group", location, row),
  };
}

async function withMembers(call: ScimCall, row: Row): Promise<Record<string, unknown>> {
  return renderGroup(call, row, (await membersOf(call.ctx, [row.id])).get(row.id)!);
}

/** What a change does to a group's members: start from its current members or from none, then add and remove. */
interface MemberChange {
  fromNone: boolean;
  add: Set<string>;
  remove: Set<string>;
}

const noChange = (): MemberChange => ({ fromNone: false, add: new Set(), remove: new Set() });

function addMembers(change: MemberChange, ids: string[]) {
  for (const id of ids) {
    change.remove.delete(id);
    change.add.add(id);
  }
}

function removeMembers(change: MemberChange, ids: string[]) {
  for (const id of ids) {
    change.add.delete(id);
    change.remove.add(id);
  }
}

function replaceMembers(change: MemberChange, ids: string[]) {
  change.fromNone = true;
  change.add = new Set(ids);
  change.remove.clear();
}

/** The member a filter on `members` selects (`members[value eq "…"]`); anything else selects nothing this service can name. */
function memberOfFilter(filter: Filter, raw: string): string {
  if (filter.op === "eq" && filter.attrPath.toLowerCase() === "value" && typeof filter.compValue === "string") return filter.compValue;
  throw badRequest("noTarget", `${raw}: members are selected by value eq "<id>"`);
}

/** Splits a PATCH into its member changes and the operations on the group's other attributes. */
function splitOperations(operations: PatchOperation[]): { members: MemberChange; others: PatchOperation[] } {
  const members = noChange();
  const others: PatchOperation[] = [];
  for (const op of operations) {
    const onMembers = op.path !== null && op.path.schema === null && op.path.attribute === "members";
    if (onMembers) {
      const path = op.path!;
      if (path.sub !== null) throw badRequest("invalidPath", `${op.rawPath}: a member's attributes cannot be changed`);
      if (op.op === "remove") {
        if (path.filter) removeMembers(members, [memberOfFilter(path.filter, op.rawPath!)]);
        else if (op.value === undefined || op.value === null) replaceMembers(members, []);
        else removeMembers(members, memberIds(op.value));
      } else if (op.op === "add") addMembers(members, memberIds(op.value));
      else replaceMembers(members, memberIds(op.value));
      continue;
    }
    if (op.path === null && isObject(op.value)) {
      const key = keyOf(op.value, "members");
      if (key !== undefined) {
        const ids = memberIds(op.value[key]);
        if (op.op === "add") addMembers(members, ids);
        else replaceMembers(members, ids);
        const rest = { ...op.value };
        delete rest[key];
        if (Object.keys(rest).length) others.push({ ...op, value: rest });
        continue;
      }
    }
    others.push(op);
  }
  return { members, others };
}

/** Applies a member change; returns the SCIM ids added and removed. Unknown users are refused (400). */
async function applyMembers(db: Database, access: DirectoryAccess, groupId: string, change: MemberChange): Promise<{ added: string[]; removed: string[] }> {
  const wanted = [...change.add];
  if (wanted.length) {
    const known = await db
      .select({ id: scimUsers.id })
      .from(scimUsers)
      .where(and(eq(scimUsers.workspaceId, access.directory.workspaceId), eq(scimUsers.directoryId, access.directory.id), inArray(scimUsers.id, wanted)));
    const knownIds = new Set(known.map((k) => k.id));
    const unknown = wanted.filter((id) => !knownIds.has(id));
    if (unknown.length) throw badRequest("invalidValue", `No user ${unknown.slice(0, 5).join(", ")} in this directory`);
  }
  const where = and(eq(scimGroupMembers.workspaceId, access.directory.workspaceId), eq(scimGroupMembers.groupId, groupId));
  let removed: { id: string }[] = [];
  if (change.fromNone) {
    removed = await db
      .delete(scimGroupMembers)
      .where(and(where, wanted.length ? notInArray(scimGroupMembers.scimUserId, wanted) : undefined))
      .returning({ id: scimGroupMembers.scimUserId });
  } else if (change.remove.size) {
    removed = await db
      .delete(scimGroupMembers)
      .where(and(where, inArray(scimGroupMembers.scimUserId, [...change.remove])))
      .returning({ id: scimGroupMembers.scimUserId });
  }
  const added = wanted.length
    ? await db
        .insert(scimGroupMembers)
        .values(wanted.map((scimUserId) => ({ workspaceId: access.directory.workspaceId, groupId, scimUserId })))
        .onConflictDoNothing()
        .returning({ id: scimGroupMembers.scimUserId })
    : [];
  return { added: added.map((a) => a.id), removed: removed.map((r) => r.id) };
}

/** Whether the directory's role mapping names a group (by display name, without regard to case). */
const mapped = (access: DirectoryAccess, ...names: string[]) => access.directory.groupRoles.some((m) => names.some((n) => m.group.toLowerCase() === n.toLowerCase()));

async function allMembers(db: Database, groupId: string): Promise<string[]> {
  return (await db.select({ id: scimGroupMembers.scimUserId }).from(scimGroupMembers).where(eq(scimGroupMembers.groupId, groupId))).map((r) => r.id);
}

const change = <T>(call: ScimCall, work: (ctx: EndpointContext) => Promise<T>) => inScimTransaction(call, "A group with this displayName exists", work);

async function audit(db: Database, call: ScimCall, group: { id: string; displayName: string }, what: string, added: string[], removed: string[]) {
  await recordAudit(db, {
    workspaceId: call.access.directory.workspaceId,
    type: "scim.group.changed",
    subject: group.displayName,
    data: { organization: call.access.organization.slug, group_id: group.id, change: what, members_added: added.slice(0, AUDITED_MEMBERS), members_removed: removed.slice(0, AUDITED_MEMBERS) },
    at: call.now,
  });
}

async function checkUniqueName(db: Database, access: DirectoryAccess, displayName: string, except: string | null) {
  const [other] = await db
    .select({ id: scimGroups.id })
    .from(scimGroups)
    .where(and(inDirectory(access), eq(scimGroups.displayNameKey, displayName.toLowerCase()), except ? sql`${scimGroups.id} <> ${except}` : undefined))
    .limit(1);
  if (other) throw conflict(`A group named ${displayName} exists`);
}

export async function createGroup(call: ScimCall): Promise<Response> {
  const { input, members } = readGroup(await readScimBody(call.request));
  const { access, now } = call;
  const row = await change(call, async (ctx) => {
    const db = ctx.service.db;
    await checkUniqueName(db, access, input.displayName, null);
    const [created] = await db
      .insert(scimGroups)
      .values({
        id: newId(),
        workspaceId: access.directory.workspaceId,
        directoryId: access.directory.id,
        displayName: input.displayName,
        displayNameKey: input.displayName.toLowerCase(),
        externalId: input.externalId,
        attributes: input.attributes,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    const { added } = members?.length ? await applyMembers(db, access, created.id, { fromNone: false, add: new Set(members), remove: new Set() }) : { added: [] };
    if (mapped(access, input.displayName)) await syncRoles(db, access, added, now);
    await audit(db, call, created, "created", added, []);
    return created;
  });
  return resourceResponse((await withMembers(call, row)) as { meta: { location: string; version: string } }, 201);
}

export async function getGroup(call: ScimCall, id: string): Promise<Response> {
  const row = await loadGroup(call.ctx, call.access, id);
  const unchanged = notModifiedAnswer(call.request, row.version);
  if (unchanged) return unchanged;
  const { wants, project } = projection(new URL(call.request.url).searchParams);
  const resource = wants("members") ? await withMembers(call, row) : renderGroup(call, row, null);
  return scimJson(project(resource), 200, { ETag: etagOf(row.version) });
}

export async function listGroups(call: ScimCall): Promise<Response> {
  const query = new URL(call.request.url).searchParams;
  const filter = query.get("filter");
  const where = and(inDirectory(call.access), filter ? filterSql("Group", filter) : undefined);
  const db = call.ctx.service.db;
  const { rows, total, offset } = await listed(
    query,
    () => db.select({ total: count() }).from(scimGroups).where(where),
    (skip, limit) => db.select().from(scimGroups).where(where).orderBy(asc(scimGroups.createdAt), asc(scimGroups.id)).limit(limit).offset(skip),
  );
  const { wants, project } = projection(query);
  const members = wants("members") ? await membersOf(call.ctx, rows.map((r) => r.id)) : null;
  return listResponse(
    rows.map((r) => project(renderGroup(call, r, members?.get(r.id) ?? null))),
    total,
    offset,
  );
}

/** Writes a group's new attributes and member change (PUT, PATCH). */
async function writeGroup(call: ScimCall, row: Row, input: GroupInput, members: MemberChange): Promise<Row> {
  const { access, now } = call;
  return change(call, async (ctx) => {
    const db = ctx.service.db;
    await checkUniqueName(db, access, input.displayName, row.id);
    const [updated] = await db
      .update(scimGroups)
      .set({
        displayName: input.displayName,
        displayNameKey: input.displayName.toLowerCase(),
        externalId: input.externalId,
        attributes: input.attributes,
        version: sql`${scimGroups.version} + 1`,
        updatedAt: now,
      })
      .where(and(inDirectory(access), eq(scimGroups.id, row.id), eq(scimGroups.version, row.version)))
      .returning();
    if (!updated) throw conflict("The group changed meanwhile; read it again and retry");
    const { added, removed } = await applyMembers(db, access, row.id, members);
    const renamed = updated.displayNameKey !== row.displayNameKey;
    if (mapped(access, row.displayName, updated.displayName)) {
      // A rename moves every member between mappings; otherwise only those who came or went.
      await syncRoles(db, access, renamed ? [...new Set([...(await allMembers(db, row.id)), ...removed])] : [...added, ...removed], now);
    }
    await audit(db, call, updated, renamed ? "renamed" : "changed", added, removed);
    return updated;
  });
}

export async function replaceGroup(call: ScimCall, id: string): Promise<Response> {
  const body = await readScimBody(call.request);
  const row = await loadGroup(call.ctx, call.access, id);
  checkIfMatch(call.request, row.version);
  const { input, members } = readGroup(body);
  const change: MemberChange = { fromNone: true, add: new Set(members ?? []), remove: new Set() };
  return resourceResponse((await withMembers(call, await writeGroup(call, row, input, change))) as { meta: { location: string; version: string } });
}

export async function patchGroup(call: ScimCall, id: string): Promise<Response> {
  const body = await readScimBody(call.request);
  const operations = readOperations("Group", body);
  const row = await loadGroup(call.ctx, call.access, id);
  checkIfMatch(call.request, row.version);
  const { members, others } = splitOperations(operations);
  const patched = others.length ? applyPatch("Group", { ...row.attributes, displayName: row.displayName }, others) : { ...row.attributes, displayName: row.displayName };
  const { input } = readGroup(patched);
  const updated = await writeGroup(call, row, input, members);
  // Entra and Okta read nothing back from a group PATCH: 204, as RFC 7644 §3.5.2 allows, unless the members are asked for.
  const wanted = new URL(call.request.url).searchParams.get("attributes");
  if (!wanted) return new Response(null, { status: 204, headers: { ETag: `W/"${updated.version}"` } });
  return resourceResponse((await withMembers(call, updated)) as { meta: { location: string; version: string } });
}

export async function deleteGroup(call: ScimCall, id: string): Promise<Response> {
  const { access, now } = call;
  const row = await loadGroup(call.ctx, access, id);
  checkIfMatch(call.request, row.version);
  await change(call, async (ctx) => {
    const db = ctx.service.db;
    const former = await allMembers(db, row.id);
    const removed = await db.delete(scimGroups).where(and(inDirectory(access), eq(scimGroups.id, row.id))).returning({ id: scimGroups.id });
    if (removed.length === 0) throw notFound(`No group ${id} in this directory`);
    if (mapped(access, row.displayName)) await syncRoles(db, access, former, now);
    await audit(db, call, row, "deleted", [], former);
  });
  return new Response(null, { status: 204 });
}
