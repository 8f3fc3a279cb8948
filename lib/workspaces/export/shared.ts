// What the sections' exports share: sorting by natural key, the stored values a file leaves out, and the ids other sections' rows are named by.
import { eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { apis, clients, organizations, roles, users } from "../../../db/schema";
import { policyEntry } from "../document";

export const byKey =
  <T>(key: (v: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;

/** A stored string a file would say, or nothing (absent, not a string, empty). */
export const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);

/** A policy appears only where it overrides something, as a file would say it. */
export function policyField(stored: unknown) {
  const entry = policyEntry(stored);
  return entry ? { auth_policy: entry } : {};
}

/** Natural keys by primary key, for the sections whose rows refer to other sections' rows. */
export const namesById = {
  clients: async (db: Database, wid: string) => new Map((await db.select({ id: clients.id, key: clients.clientId }).from(clients).where(eq(clients.workspaceId, wid))).map((r) => [r.id, r.key])),
  apis: async (db: Database, wid: string) => new Map((await db.select({ id: apis.id, key: apis.audience }).from(apis).where(eq(apis.workspaceId, wid))).map((r) => [r.id, r.key])),
  roles: async (db: Database, wid: string) => new Map((await db.select({ id: roles.id, key: roles.name }).from(roles).where(eq(roles.workspaceId, wid))).map((r) => [r.id, r.key])),
  organizations: async (db: Database, wid: string) =>
    new Map((await db.select({ id: organizations.id, key: organizations.slug }).from(organizations).where(eq(organizations.workspaceId, wid))).map((r) => [r.id, r.key])),
  users: async (db: Database, wid: string) => new Map((await db.select({ id: users.id, key: users.email }).from(users).where(eq(users.workspaceId, wid))).map((r) => [r.id, r.key])),
};
