/**
 * `/Users` (RFC 7644 §3.3–§3.6): create, get, list with a filter, replace, patch and delete the
 * users of an organization's directory. A user's attributes are kept as the directory sent them
 * (names in their canonical spelling), so what it writes it reads back; the ones rules read are
 * columns too. What the account is (matching, addresses, activation, deprovisioning) is
 * ./accounts.ts's.
 */
import { and, asc, count, eq, inArray, or, sql } from "drizzle-orm";
import { scimUsers, users } from "../../../db/schema";
import { recordAudit } from "../../audit/events";
import { parseEmail, type EmailAddress } from "../../authn/email-address";
import type { EndpointContext } from "../../http/context";
import { isStorableText } from "../../text";
import { newId } from "../../crypto";
import { accountFor, applyActive, deleteManagedAccount, moveSubject, updateManagedAccount } from "./accounts";
import { canonicalize, ENTERPRISE_USER_SCHEMA, isObject, keyOf, USER_SCHEMA } from "./attributes";
import type { DirectoryAccess } from "./directory";
import { badRequest, conflict, notFound, scimJson } from "./errors";
import { filterSql } from "./filter";
import { applyPatch, readOperations } from "./patch";
import { checkIfMatch, etagOf, inScimTransaction, listed, listResponse, meta, notModifiedAnswer, projection, readScimBody, resourceResponse, type ScimCall } from "./resources";

type Row = typeof scimUsers.$inferSelect;

/** The longest userName, externalId or displayName accepted. */
const MAX_NAME = 256;

/** What a user resource says, read and checked. */
interface UserInput {
  attributes: Record<string, unknown>;
  userName: string;
  externalId: string | null;
  displayName: string | null;
  active: boolean;
  email: EmailAddress;
  /** The account's name: displayName, name.formatted, or given and family names. */
  accountName: string | null;
}

function optionalString(attributes: Record<string, unknown>, name: string): string | null {
  const value = attributes[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value.length > MAX_NAME || !isStorableText(value)) throw badRequest("invalidValue", `${name} must be a string of at most ${MAX_NAME} characters`);
  return value.trim() === "" ? null : value;
}

/** The address the account gets: the primary email, else a work one, else the first, else a userName that is an address. */
function emailOf(attributes: Record<string, unknown>, userName: string): EmailAddress {
  const emails = attributes.emails;
  if (emails !== undefined && !Array.isArray(emails)) throw badRequest("invalidValue", "emails must be a list");
  const values = (emails ?? []).filter(isObject);
  const chosen = values.find((e) => e.primary === true || e.primary === "True" || e.primary === "true") ?? values.find((e) => typeof e.type === "string" && e.type.toLowerCase() === "work") ?? values[0];
  const email = parseEmail(typeof chosen?.value === "string" ? chosen.value : userName);
  if (!email) throw badRequest("invalidValue", "The user needs an email address: in emails, or as its userName");
  return email;
}

function accountNameOf(attributes: Record<string, unknown>, displayName: string | null): string | null {
  if (displayName) return displayName;
  const name = isObject(attributes.name) ? attributes.name : {};
  if (typeof name.formatted === "string" && name.formatted.trim()) return name.formatted.trim().slice(0, MAX_NAME);
  const parts = [name.givenName, name.familyName].filter((p): p is string => typeof p === "string" && p.trim() !== "");
  return parts.length ? parts.join(" ").slice(0, MAX_NAME) : null;
}

/** Reads a user resource as sent (a POST's or PUT's body, or a resource after a PATCH). */
export function readUser(body: Record<string, unknown>): UserInput {
  const attributes = canonicalize("User", body);
  for (const name of ["id", "meta", "schemas", "groups", "password"]) delete attributes[name];
  const userName = optionalString(attributes, "userName");
  if (!userName) throw badRequest("invalidValue", "userName is required");
  const activeValue = attributes.active;
  const active = activeValue === undefined || activeValue === null ? true : typeof activeValue === "string" ? activeValue.toLowerCase() !== "false" : activeValue !== false;
  if (activeValue !== undefined && typeof activeValue !== "boolean" && !(typeof activeValue === "string" && /^(true|false)$/i.test(activeValue))) {
    throw badRequest("invalidValue", "active must be true or false");
  }
  attributes.active = active;
  const displayName = optionalString(attributes, "displayName");
  return {
    attributes,
    userName,
    externalId: optionalString(attributes, "externalId"),
    displayName,
    active,
    email: emailOf(attributes, userName),
    accountName: accountNameOf(attributes, displayName),
  };
}

/** The subject the organization's connection knows this user by (the attribute the directory's settings name). */
function subjectOf(access: DirectoryAccess, input: Pick<UserInput, "userName" | "externalId">): string | null {
  return access.directory.subjectAttribute === "userName" ? input.userName : input.externalId;
}

export function renderUser(call: Pick<ScimCall, "base">, row: Row): Record<string, unknown> {
  const { attributes } = row;
  const schemas = [USER_SCHEMA, ...(keyOf(attributes, ENTERPRISE_USER_SCHEMA) ? [ENTERPRISE_USER_SCHEMA] : [])];
  const location = `${call.base}/Users/${row.id}`;
  return { schemas, id: row.id, ...attributes, userName: row.userName, active: row.active, meta: meta("User", location, row) };
}

const inDirectory = (access: DirectoryAccess) => and(eq(scimUsers.workspaceId, access.directory.workspaceId), eq(scimUsers.directoryId, access.directory.id));

async function loadUser(ctx: EndpointContext, access: DirectoryAccess, id: string): Promise<Row> {
  const [row] = await ctx.service.db
    .select()
    .from(scimUsers)
    .where(and(inDirectory(access), eq(scimUsers.id, id)))
    .limit(1);
  if (!row) throw notFound(`No user ${id} in this directory`);
  return row;
}

/** Refuses a userName or externalId another user of the directory has (409 uniqueness). */
async function checkUnique(ctx: EndpointContext, access: DirectoryAccess, input: UserInput, except: string | null): Promise<void> {
  const [other] = await ctx.service.db
    .select({ id: scimUsers.id, userNameKey: scimUsers.userNameKey })
    .from(scimUsers)
    .where(
      and(
        inDirectory(access),
        or(eq(scimUsers.userNameKey, input.userName.toLowerCase()), input.externalId === null ? undefined : eq(scimUsers.externalId, input.externalId)),
        except ? sql`${scimUsers.id} <> ${except}` : undefined,
      ),
    )
    .limit(1);
  if (other) throw conflict(other.userNameKey === input.userName.toLowerCase() ? `A user with userName ${input.userName} exists` : `A user with externalId ${input.externalId} exists`);
}

const change = <T>(call: ScimCall, work: (ctx: EndpointContext) => Promise<T>) => inScimTransaction(call, "The user exists: another request created it first", work);

const columns = (input: UserInput) => ({
  userName: input.userName,
  userNameKey: input.userName.toLowerCase(),
  externalId: input.externalId,
  displayName: input.displayName,
  emailKey: input.email.normalized,
  active: input.active,
  attributes: input.attributes,
});

export async function createUser(call: ScimCall): Promise<Response> {
  const input = readUser(await readScimBody(call.request));
  const { access, now } = call;
  const subject = subjectOf(access, input);
  if (access.directory.connectionId && !subject) {
    throw badRequest("invalidValue", `${access.directory.subjectAttribute} is required: it is how the organization's connection knows the user`);
  }
  const row = await change(call, async (ctx) => {
    const db = ctx.service.db;
    await checkUnique(ctx, access, input, null);
    const account = await accountFor(db, access, { subject, email: input.email, name: input.accountName, active: input.active, now });
    const [created] = await db
      .insert(scimUsers)
      .values({ id: newId(), workspaceId: access.directory.workspaceId, directoryId: access.directory.id, userId: account.userId, managed: account.managed, ...columns(input), createdAt: now, updatedAt: now })
      .returning();
    await applyActive(db, access, { scimUserId: created.id, userId: account.userId, managed: account.managed, active: input.active, now });
    await recordAudit(db, {
      workspaceId: access.directory.workspaceId,
      type: "scim.user.provisioned",
      subject: account.userId,
      data: { organization: access.organization.slug, scim_id: created.id, user_name: input.userName, managed: account.managed, active: input.active },
      at: now,
    });
    return created;
  });
  return resourceResponse(renderUser(call, row) as { meta: { location: string; version: string } }, 201);
}

export async function getUser(call: ScimCall, id: string): Promise<Response> {
  const row = await loadUser(call.ctx, call.access, id);
  const unchanged = notModifiedAnswer(call.request, row.version);
  if (unchanged) return unchanged;
  const resource = projection(new URL(call.request.url).searchParams).project(renderUser(call, row));
  return scimJson(resource, 200, { ETag: etagOf(row.version) });
}

export async function listUsers(call: ScimCall): Promise<Response> {
  const query = new URL(call.request.url).searchParams;
  const filter = query.get("filter");
  const where = and(inDirectory(call.access), filter ? filterSql("User", filter) : undefined);
  const db = call.ctx.service.db;
  const { rows, total, offset } = await listed(
    query,
    () => db.select({ total: count() }).from(scimUsers).where(where),
    (skip, limit) => db.select().from(scimUsers).where(where).orderBy(asc(scimUsers.createdAt), asc(scimUsers.id)).limit(limit).offset(skip),
  );
  const { project } = projection(query);
  return listResponse(
    rows.map((r) => project(renderUser(call, r))),
    total,
    offset,
  );
}

/** The attribute names whose values differ between two resources (for the audit log). */
function changedNames(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].filter((n) => JSON.stringify(before[n]) !== JSON.stringify(after[n])).sort();
}

/** Makes a user what `input` says (PUT, and PATCH once applied). */
async function writeUser(call: ScimCall, row: Row, input: UserInput): Promise<Row> {
  const { access, now } = call;
  const before = readUser({ ...row.attributes, userName: row.userName, active: row.active });
  const beforeSubject = subjectOf(access, before);
  const subject = subjectOf(access, input);
  if (access.directory.connectionId && !subject) {
    throw badRequest("invalidValue", `${access.directory.subjectAttribute} is required: it is how the organization's connection knows the user`);
  }
  return change(call, async (ctx) => {
    const db = ctx.service.db;
    await checkUnique(ctx, access, input, row.id);
    const [updated] = await db
      .update(scimUsers)
      .set({ ...columns(input), version: sql`${scimUsers.version} + 1`, updatedAt: now })
      .where(and(inDirectory(access), eq(scimUsers.id, row.id), eq(scimUsers.version, row.version)))
      .returning();
    // Another change came first: the client retries on the version it reads again.
    if (!updated) throw conflict("The user changed meanwhile; read it again and retry");
    if (row.managed) await updateManagedAccount(db, access, { userId: row.userId, email: input.email, name: input.accountName, now });
    await moveSubject(db, access, { userId: row.userId, from: beforeSubject, to: subject, email: input.email, name: input.accountName, now });
    const wid = access.directory.workspaceId;
    const base = { organization: access.organization.slug, scim_id: row.id };
    if (input.active !== row.active) {
      const ended = await applyActive(db, access, { scimUserId: row.id, userId: row.userId, managed: row.managed, active: input.active, now });
      if (input.active) await recordAudit(db, { workspaceId: wid, type: "scim.user.reactivated", subject: row.userId, data: base, at: now });
      else {
        await recordAudit(db, {
          workspaceId: wid,
          type: "scim.user.deactivated",
          subject: row.userId,
          data: { ...base, managed: row.managed, sessions_ended: ended?.sessions ?? 0, grants_ended: ended?.grants ?? 0 },
          at: now,
        });
      }
    }
    const changed = changedNames(before.attributes, input.attributes).filter((n) => n !== "active");
    if (changed.length) await recordAudit(db, { workspaceId: wid, type: "scim.user.updated", subject: row.userId, data: { ...base, changed }, at: now });
    return updated;
  });
}

export async function replaceUser(call: ScimCall, id: string): Promise<Response> {
  const body = await readScimBody(call.request);
  const row = await loadUser(call.ctx, call.access, id);
  checkIfMatch(call.request, row.version);
  const input = readUser(body);
  return resourceResponse(renderUser(call, await writeUser(call, row, input)) as { meta: { location: string; version: string } });
}

export async function patchUser(call: ScimCall, id: string): Promise<Response> {
  const body = await readScimBody(call.request);
  const operations = readOperations("User", body);
  const row = await loadUser(call.ctx, call.access, id);
  checkIfMatch(call.request, row.version);
  const patched = applyPatch("User", { ...row.attributes, userName: row.userName, active: row.active }, operations);
  const input = readUser(patched);
  return resourceResponse(renderUser(call, await writeUser(call, row, input)) as { meta: { location: string; version: string } });
}

export async function deleteUser(call: ScimCall, id: string): Promise<Response> {
  const { access, now } = call;
  const row = await loadUser(call.ctx, access, id);
  checkIfMatch(call.request, row.version);
  await change(call, async (ctx) => {
    const db = ctx.service.db;
    const removed = await db.delete(scimUsers).where(and(inDirectory(access), eq(scimUsers.id, row.id))).returning({ id: scimUsers.id });
    if (removed.length === 0) throw notFound(`No user ${id} in this directory`);
    const ended = await applyActive(db, access, { scimUserId: row.id, userId: row.userId, managed: row.managed, active: false, now });
    if (row.managed) await deleteManagedAccount(db, access.directory.workspaceId, row.userId);
    await recordAudit(db, {
      workspaceId: access.directory.workspaceId,
      type: "scim.user.deleted",
      subject: row.userId,
      data: { organization: access.organization.slug, scim_id: row.id, account_deleted: row.managed, sessions_ended: ended?.sessions ?? 0, grants_ended: ended?.grants ?? 0 },
      at: now,
    });
  });
  return new Response(null, { status: 204 });
}

/** The accounts of a directory's users, by SCIM id (groups name their members by it). */
export async function usersById(ctx: EndpointContext, access: DirectoryAccess, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return ctx.service.db
    .select({ id: scimUsers.id, userName: scimUsers.userName, displayName: scimUsers.displayName, userId: scimUsers.userId, email: users.email })
    .from(scimUsers)
    .innerJoin(users, eq(users.id, scimUsers.userId))
    .where(and(inDirectory(access), inArray(scimUsers.id, [...ids])));
}
