/**
 * Client credentials of WEB_CONFIDENTIAL and M2M clients (SPEC.md "Client credentials"):
 * a secret is shown once and only its SHA-256 is kept; lifetime 1–365 days (default 90, or the
 * client's configured lifetime); rotation replaces immediately or overlaps for up to 24 hours;
 * never more than two active at a time. Active means not revoked and not yet expired.
 *
 * Every change runs in a transaction that first locks the client row, so concurrent rotations
 * of one client cannot leave three secrets active.
 */
import { and, asc, desc, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { clients, clientSecrets } from "../../db/schema";
import { addMs, DAY, HOUR, type Clock } from "../clock";
import { newId, randomToken, sha256Hex } from "../crypto";
import { CodedError } from "../coded-error";
import type { AuditData, AuditEventType } from "../audit/catalogue";
import { recordAudit } from "../audit/events";
import { isActiveSecret } from "../authority/client-secret";

export { isActiveSecret };

export const SECRET_PREFIX = "lks_";
export const DEFAULT_SECRET_LIFETIME_DAYS = 90;
export const MAX_SECRET_LIFETIME_DAYS = 365;
export const MAX_ROTATION_OVERLAP_HOURS = 24;
export const MAX_ACTIVE_SECRETS = 2;

export type ClientSecretErrorCode =
  | "client_not_found"
  | "client_has_no_secrets"
  | "secret_not_found"
  | "too_many_active_secrets"
  | "invalid_argument";

export class ClientSecretError extends CodedError<ClientSecretErrorCode> {
  constructor(
    readonly code: ClientSecretErrorCode,
    message: string,
  ) {
    super(code, message, { status: code.endsWith("not_found") ? 404 : code === "too_many_active_secrets" ? 409 : 400 });
    this.name = "ClientSecretError";
  }
}

export type ClientSecretStatus = "active" | "expired" | "revoked";

/** A secret as listed: never the secret or its hash. */
export interface ClientSecretInfo {
  id: string;
  status: ClientSecretStatus;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

export interface NewClientSecret {
  id: string;
  /** Shown once; only its hash is stored. */
  secret: string;
  expiresAt: Date;
}

type SecretRow = typeof clientSecrets.$inferSelect;
type ClientRow = typeof clients.$inferSelect;

interface ClientRef {
  workspaceId: string;
  /** The public OAuth client_id. */
  clientId: string;
  clock: Clock;
  /** Who made the change, for the audit log (console operator user id); null for the CLI. */
  actor?: string | null;
}

export function secretStatus(row: Pick<SecretRow, "revokedAt" | "expiresAt">, now: Date): ClientSecretStatus {
  if (isActiveSecret(row, now)) return "active";
  return row.revokedAt !== null ? "revoked" : "expired";
}

function toInfo(row: SecretRow, now: Date): ClientSecretInfo {
  return {
    id: row.id,
    status: secretStatus(row, now),
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
    lastUsedAt: row.lastUsedAt,
  };
}

function checkLifetimeDays(days: number): void {
  if (!Number.isInteger(days) || days < 1 || days > MAX_SECRET_LIFETIME_DAYS) {
    throw new ClientSecretError("invalid_argument", `The secret lifetime must be a whole number of days from 1 to ${MAX_SECRET_LIFETIME_DAYS} (got ${days})`);
  }
}

export function generateClientSecret(): string {
  return SECRET_PREFIX + randomToken(32);
}

/** Loads the client and locks its row for the rest of the transaction. */
async function lockClient(tx: Database, workspaceId: string, clientId: string): Promise<ClientRow> {
  const [client] = await tx
    .select()
    .from(clients)
    .where(and(eq(clients.workspaceId, workspaceId), eq(clients.clientId, clientId)))
    .for("update");
  if (!client) throw new ClientSecretError("client_not_found", `No client "${clientId}" in workspace "${workspaceId}"`);
  if (client.type === "PUBLIC") {
    throw new ClientSecretError("client_has_no_secrets", `Client "${clientId}" is a PUBLIC client; only WEB_CONFIDENTIAL and M2M clients have secrets`);
  }
  return client;
}

async function lockClientByPk(tx: Database, clientPk: string): Promise<ClientRow> {
  const [client] = await tx.select().from(clients).where(eq(clients.id, clientPk)).for("update");
  if (!client) throw new ClientSecretError("client_not_found", `No client with id ${clientPk}`);
  return client;
}

async function secretsOf(tx: Database, client: ClientRow): Promise<SecretRow[]> {
  return tx
    .select()
    .from(clientSecrets)
    .where(and(eq(clientSecrets.workspaceId, client.workspaceId), eq(clientSecrets.clientPk, client.id)))
    .orderBy(desc(clientSecrets.createdAt), desc(clientSecrets.expiresAt), asc(clientSecrets.id));
}

async function insertSecret(tx: Database, client: ClientRow, secret: string, lifetimeDays: number, now: Date): Promise<NewClientSecret> {
  const row = {
    id: newId(),
    workspaceId: client.workspaceId,
    clientPk: client.id,
    secretHash: sha256Hex(secret),
    createdAt: now,
    expiresAt: addMs(now, lifetimeDays * DAY),
  };
  await tx.insert(clientSecrets).values(row);
  return { id: row.id, secret, expiresAt: row.expiresAt };
}

async function audit<T extends AuditEventType>(tx: Database, client: ClientRow, type: T, actor: string | null | undefined, now: Date, data: AuditData<T>) {
  await recordAudit(tx, { workspaceId: client.workspaceId, type, actor: actor ?? null, clientId: client.clientId, data, at: now });
}

/**
 * Adds a secret to a confidential or M2M client. Refused when two are already active: replace
 * one with rotateClientSecret, or revoke one first.
 */
export async function createClientSecret(
  db: Database,
  options: ClientRef & { lifetimeDays?: number },
): Promise<NewClientSecret> {
  if (options.lifetimeDays !== undefined) checkLifetimeDays(options.lifetimeDays);
  return db.transaction(async (tx) => {
    const now = options.clock.now();
    const client = await lockClient(tx, options.workspaceId, options.clientId);
    const active = (await secretsOf(tx, client)).filter((s) => isActiveSecret(s, now));
    if (active.length >= MAX_ACTIVE_SECRETS) {
      throw new ClientSecretError(
        "too_many_active_secrets",
        `Client "${client.clientId}" already has ${active.length} active secrets (at most ${MAX_ACTIVE_SECRETS}); rotate or revoke one instead`,
      );
    }
    const created = await insertSecret(tx, client, generateClientSecret(), options.lifetimeDays ?? client.secretLifetimeDays, now);
    await audit(tx, client, "client.secret.created", options.actor, now, { secret_id: created.id, expires_at: created.expiresAt.toISOString() });
    return created;
  });
}

/**
 * Issues a new secret and retires the old ones. With `overlapHours` 0 every previously active
 * secret is revoked now; with 1–24 hours the most recent one stays valid until
 * min(its expiry, now + overlap) and any other is revoked now, so at most two are active.
 */
export async function rotateClientSecret(
  db: Database,
  options: ClientRef & { overlapHours: number; lifetimeDays?: number },
): Promise<NewClientSecret & { previous: ClientSecretInfo[] }> {
  const overlap = options.overlapHours;
  if (!Number.isFinite(overlap) || overlap < 0 || overlap > MAX_ROTATION_OVERLAP_HOURS) {
    throw new ClientSecretError("invalid_argument", `The rotation overlap must be from 0 to ${MAX_ROTATION_OVERLAP_HOURS} hours (got ${overlap})`);
  }
  if (options.lifetimeDays !== undefined) checkLifetimeDays(options.lifetimeDays);
  return db.transaction(async (tx) => {
    const now = options.clock.now();
    const client = await lockClient(tx, options.workspaceId, options.clientId);
    const active = (await secretsOf(tx, client)).filter((s) => isActiveSecret(s, now));
    const previous: SecretRow[] = [];
    for (const [i, old] of active.entries()) {
      // `active` is newest first: only the newest may overlap.
      if (overlap > 0 && i === 0) {
        const until = addMs(now, overlap * HOUR);
        const expiresAt = old.expiresAt.getTime() < until.getTime() ? old.expiresAt : until;
        await tx.update(clientSecrets).set({ expiresAt }).where(eq(clientSecrets.id, old.id));
        previous.push({ ...old, expiresAt });
      } else {
        await tx.update(clientSecrets).set({ revokedAt: now }).where(eq(clientSecrets.id, old.id));
        previous.push({ ...old, revokedAt: now });
      }
    }
    const created = await insertSecret(tx, client, generateClientSecret(), options.lifetimeDays ?? client.secretLifetimeDays, now);
    await audit(tx, client, "client.secret.rotated", options.actor, now, {
      secret_id: created.id,
      overlap_hours: overlap,
      previous: previous.map((p) => p.id),
    });
    return { ...created, previous: previous.map((p) => toInfo(p, now)) };
  });
}

/** Revokes one secret now. Revoking an already revoked secret changes nothing. */
export async function revokeClientSecret(
  db: Database,
  options: ClientRef & { secretId: string },
): Promise<ClientSecretInfo> {
  return db.transaction(async (tx) => {
    const now = options.clock.now();
    const client = await lockClient(tx, options.workspaceId, options.clientId);
    const row = (await secretsOf(tx, client)).find((s) => s.id === options.secretId);
    if (!row) throw new ClientSecretError("secret_not_found", `Client "${client.clientId}" has no secret ${options.secretId}`);
    if (row.revokedAt !== null) return toInfo(row, now);
    await tx.update(clientSecrets).set({ revokedAt: now }).where(eq(clientSecrets.id, row.id));
    await audit(tx, client, "client.secret.revoked", options.actor, now, { secret_id: row.id });
    return toInfo({ ...row, revokedAt: now }, now);
  });
}

/** The client's secrets, newest first, without hashes. */
export async function listClientSecrets(db: Database, options: Omit<ClientRef, "actor">): Promise<ClientSecretInfo[]> {
  const now = options.clock.now();
  const [client] = await db
    .select()
    .from(clients)
    .where(and(eq(clients.workspaceId, options.workspaceId), eq(clients.clientId, options.clientId)));
  if (!client) throw new ClientSecretError("client_not_found", `No client "${options.clientId}" in workspace "${options.workspaceId}"`);
  if (client.type === "PUBLIC") {
    throw new ClientSecretError("client_has_no_secrets", `Client "${options.clientId}" is a PUBLIC client; only WEB_CONFIDENTIAL and M2M clients have secrets`);
  }
  return (await secretsOf(db, client)).map((row) => toInfo(row, now));
}

/**
 * Makes a known (preset) secret active, for development fixtures in the workspace file: kept as
 * is when an active secret with the same hash exists; otherwise added, revoking the oldest
 * active secrets beyond two.
 */
export async function ensurePresetClientSecret(
  db: Database,
  options: { clientPk: string; secret: string; lifetimeDays: number; clock: Clock },
): Promise<{ id: string; created: boolean; revoked: string[] }> {
  checkLifetimeDays(options.lifetimeDays);
  return db.transaction(async (tx) => {
    const now = options.clock.now();
    const client = await lockClientByPk(tx, options.clientPk);
    if (client.type === "PUBLIC") throw new ClientSecretError("client_has_no_secrets", `Client "${client.clientId}" is a PUBLIC client`);
    const hash = sha256Hex(options.secret);
    const active = (await secretsOf(tx, client)).filter((s) => isActiveSecret(s, now));
    const same = active.find((s) => s.secretHash === hash);
    if (same) return { id: same.id, created: false, revoked: [] };
    const created = await insertSecret(tx, client, options.secret, options.lifetimeDays, now);
    // `active` is newest first; keep the newest MAX_ACTIVE_SECRETS - 1 beside the new one.
    const revoked = active.slice(MAX_ACTIVE_SECRETS - 1).map((s) => s.id);
    for (const id of revoked) await tx.update(clientSecrets).set({ revokedAt: now }).where(eq(clientSecrets.id, id));
    return { id: created.id, created: true, revoked };
  });
}

/** Revokes every active secret of a client (used when a client stops being confidential). */
export async function revokeAllClientSecrets(db: Database, options: { clientPk: string; clock: Clock }): Promise<string[]> {
  const now = options.clock.now();
  const client = await lockClientByPk(db, options.clientPk);
  const active = (await secretsOf(db, client)).filter((s) => isActiveSecret(s, now));
  for (const s of active) await db.update(clientSecrets).set({ revokedAt: now }).where(eq(clientSecrets.id, s.id));
  return active.map((s) => s.id);
}
