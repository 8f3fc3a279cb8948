/**
 * A workspace's authentication hostnames (its own sign-in domains): added, verified by a DNS TXT
 * record (`_latchkey.<hostname>` carrying `latchkey-hostname-verification=<token>`, looked up
 * through the same resolver seam as organization domains), made primary, removed. Only a verified
 * hostname serves anything (./directory.ts); a verified hostname belongs to one workspace.
 *
 * These functions change rows only; who did it is recorded by the caller (a console operation's
 * audit event, or the workspace import's), which also announces the change to every process
 * (lib/service.ts `announceChange`), so that each reloads its directory at once.
 */
import { and, asc, eq, isNotNull, isNull, ne } from "drizzle-orm";
import type { Database } from "../../db/client";
import { grants, hostedSessions, workspaceHostnames, workspaces } from "../../db/schema";
import { newId, randomToken } from "../crypto";
import { CodedError } from "../coded-error";
import { DomainError, normalizeDomain } from "../federation/domains";
import { lookupVerificationRecords, proofRecord, recordDnsProof, recordOperatorMark, type DnsProof, type ProofKind, type TxtLookup, type TxtResolver } from "../federation/dns-proof";
import { issuerFor } from "../http/context";
import { isUniqueViolation } from "../http/errors";
import { isPrimaryHostname, primaryHostname } from "./primary";

export { primaryHostname, relatedOriginsRpId } from "./primary";

/** A hostname's DNS ownership proof (lib/federation/dns-proof.ts): its claims, and the record's prefix. */
const HOSTNAME_PROOF: ProofKind = { table: workspaceHostnames, name: workspaceHostnames.hostname, prefix: "latchkey-hostname-verification=" };
/** Hostnames one workspace may hold (verified or not). */
export const MAX_HOSTNAMES = 20;

export type HostnameErrorCode = "invalid" | "taken" | "already_added" | "not_found" | "not_verified" | "too_many";

export class HostnameError extends CodedError<HostnameErrorCode> {
  constructor(
    readonly code: HostnameErrorCode,
    message: string,
  ) {
    super(code, message, { status: code === "not_found" ? 404 : code === "invalid" ? 400 : 409 });
    this.name = "HostnameError";
  }
}

export interface HostnameInfo {
  id: string;
  hostname: string;
  verificationToken: string;
  verifiedAt: Date | null;
  /** `dns`: the TXT record was found; `operator`: the installation's operator vouched for it. */
  verificationMethod: "dns" | "operator" | null;
  primary: boolean;
  createdAt: Date;
}

type Row = typeof workspaceHostnames.$inferSelect;
const info = (r: Row): HostnameInfo => ({
  id: r.id,
  hostname: r.hostname,
  verificationToken: r.verificationToken,
  verifiedAt: r.verifiedAt,
  verificationMethod: r.verificationMethod,
  primary: r.primary,
  createdAt: r.createdAt,
});

/**
 * A hostname as stored: lower-case ASCII (an internationalized name in punycode), no trailing dot,
 * at least two labels, not an address, not a public suffix, not the installation's default host.
 */
export function normalizeHostname(input: string, publicUrl?: string): string {
  const trimmed = input.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) || /[/:]/.test(trimmed)) {
    throw new HostnameError("invalid", `${JSON.stringify(trimmed)} is not a hostname (give only the name, such as login.example.com: no scheme, port or path)`);
  }
  let name: string;
  try {
    name = normalizeDomain(trimmed);
  } catch (error) {
    if (error instanceof DomainError) throw new HostnameError("invalid", error.message.replace(/domain name/g, "hostname"));
    throw error;
  }
  if (publicUrl !== undefined && name === new URL(publicUrl).hostname) throw new HostnameError("invalid", `${name} is the installation's own host: it serves every workspace already`);
  return name;
}

/** The TXT record that proves control of a hostname, for the console and the workspace file to show. */
export function hostnameTxtRecord(h: { hostname: string; verificationToken: string }): { name: string; value: string } {
  return proofRecord(HOSTNAME_PROOF, { name: h.hostname, verificationToken: h.verificationToken });
}

export async function listHostnames(db: Database, workspaceId: string): Promise<HostnameInfo[]> {
  const rows = await db.select().from(workspaceHostnames).where(eq(workspaceHostnames.workspaceId, workspaceId)).orderBy(asc(workspaceHostnames.hostname));
  return rows.map(info);
}

/** The workspace's verified hostnames, primary first. */
export async function verifiedHostnames(db: Database, workspaceId: string): Promise<string[]> {
  const rows = await db
    .select({ hostname: workspaceHostnames.hostname, primary: workspaceHostnames.primary, verifiedAt: workspaceHostnames.verifiedAt })
    .from(workspaceHostnames)
    .where(and(eq(workspaceHostnames.workspaceId, workspaceId), isNotNull(workspaceHostnames.verifiedAt)))
    .orderBy(asc(workspaceHostnames.hostname));
  return [...rows.filter(isPrimaryHostname), ...rows.filter((r) => !isPrimaryHostname(r))].map((r) => r.hostname);
}

/** The issuer the console shows for a workspace: at its primary hostname, or at the default host. */
export async function primaryIssuer(db: Database, publicUrl: string, workspaceId: string): Promise<string> {
  return issuerFor(publicUrl, workspaceId, await primaryHostname(db, workspaceId));
}

/** One of the workspace's hostnames by id, or null. */
export async function getHostname(db: Database, workspaceId: string, id: string): Promise<HostnameInfo | null> {
  const [row] = await db
    .select()
    .from(workspaceHostnames)
    .where(and(eq(workspaceHostnames.workspaceId, workspaceId), eq(workspaceHostnames.id, id)))
    .limit(1);
  return row ? info(row) : null;
}


async function verifiedElsewhere(db: Database, workspaceId: string, hostname: string): Promise<boolean> {
  const [row] = await db
    .select({ id: workspaceHostnames.id })
    .from(workspaceHostnames)
    .where(and(eq(workspaceHostnames.hostname, hostname), isNotNull(workspaceHostnames.verifiedAt), ne(workspaceHostnames.workspaceId, workspaceId)))
    .limit(1);
  return row !== undefined;
}

const TAKEN = (hostname: string) => new HostnameError("taken", `${hostname} is verified for another workspace`);

/** Claims a hostname for the workspace, unverified, with a new TXT token. */
export async function addHostname(db: Database, input: { workspaceId: string; hostname: string; publicUrl?: string; now: Date }): Promise<HostnameInfo> {
  const hostname = normalizeHostname(input.hostname, input.publicUrl);
  const held = await listHostnames(db, input.workspaceId);
  if (held.some((h) => h.hostname === hostname)) throw new HostnameError("already_added", `${hostname} is already a hostname of this workspace`);
  if (held.length >= MAX_HOSTNAMES) throw new HostnameError("too_many", `A workspace has at most ${MAX_HOSTNAMES} hostnames: remove one first`);
  if (await verifiedElsewhere(db, input.workspaceId, hostname)) throw TAKEN(hostname);
  const [row] = await db
    .insert(workspaceHostnames)
    .values({ id: newId(), workspaceId: input.workspaceId, hostname, verificationToken: randomToken(24), createdAt: input.now })
    .onConflictDoNothing()
    .returning();
  if (!row) throw new HostnameError("already_added", `${hostname} is already a hostname of this workspace`);
  return info(row);
}

export type HostnameVerification = { verified: true; hostname: HostnameInfo; changed: boolean } | { verified: false; hostname: HostnameInfo; reason: string };

/**
 * Records a DNS verification given the records found (lib/federation/dns-proof.ts
 * `lookupVerificationRecords`), so the lookup can happen before a transaction opens: the shared
 * DNS proof (lib/federation/dns-proof.ts), which also upgrades the installation operator's mark to
 * `dns` when the record appears.
 */
export async function applyHostnameVerification(db: Database, input: { workspaceId: string; id: string; now: Date; lookup: TxtLookup }): Promise<HostnameVerification> {
  return proveHostname(db, input, await claimedHostname(db, input), input.lookup);
}

/** Looks up the TXT record and records the verification when it is there, for the claim as read before the lookup. */
export async function verifyHostnameByDns(db: Database, input: { workspaceId: string; id: string; now: Date; resolveTxt?: TxtResolver }): Promise<HostnameVerification> {
  const current = await claimedHostname(db, input);
  return proveHostname(db, input, current, await lookupVerificationRecords(current.hostname, input.resolveTxt));
}

async function claimedHostname(db: Database, input: { workspaceId: string; id: string }): Promise<HostnameInfo> {
  const current = await getHostname(db, input.workspaceId, input.id);
  if (!current) throw new HostnameError("not_found", "This hostname is no longer claimed");
  return current;
}

async function proveHostname(db: Database, input: { workspaceId: string; now: Date }, current: HostnameInfo, lookup: TxtLookup): Promise<HostnameVerification> {
  const proof = await verifiedHereOnly(current.hostname, () =>
    recordDnsProof(db, HOSTNAME_PROOF, {
      workspaceId: input.workspaceId,
      claim: { ...current, name: current.hostname },
      lookup,
      now: input.now,
      beforeWrite: async () => {
        if (await verifiedElsewhere(db, input.workspaceId, current.hostname)) throw TAKEN(current.hostname);
      },
    }),
  );
  return afterProof(db, input.workspaceId, current, proof);
}

async function afterProof(db: Database, workspaceId: string, current: HostnameInfo, proof: DnsProof): Promise<HostnameVerification> {
  if ("gone" in proof) throw new HostnameError("not_found", "This hostname is no longer claimed");
  if (!proof.proved) return { verified: false, hostname: current, reason: proof.reason };
  const after = proof.changed ? await getHostname(db, workspaceId, current.id) : current;
  if (!after) throw new HostnameError("not_found", "This hostname is no longer claimed");
  return { verified: true, hostname: after, changed: proof.changed };
}

/**
 * The installation operator's word that the workspace controls the hostname (a workspace file
 * imported from the command line): never offered to workspace administrators, since a verified
 * hostname is the workspace's alone across the installation.
 */
export async function markHostnameVerifiedByOperator(db: Database, input: { workspaceId: string; id: string; now: Date }): Promise<HostnameVerification> {
  const current = await claimedHostname(db, input);
  if (current.verifiedAt !== null) return { verified: true, hostname: current, changed: false };
  if (await verifiedElsewhere(db, input.workspaceId, current.hostname)) throw TAKEN(current.hostname);
  const marked = await verifiedHereOnly(current.hostname, () => recordOperatorMark(db, HOSTNAME_PROOF, input));
  return afterProof(db, input.workspaceId, current, marked ? { proved: true, changed: marked.changed } : { proved: false, gone: true });
}

/** Runs a write that verifies `hostname`: another workspace verifying it at the same moment loses to the partial unique index. */
async function verifiedHereOnly<T>(hostname: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw TAKEN(hostname);
    throw error;
  }
}

/**
 * Makes a verified hostname the workspace's primary one (`id` null: none, the default host is the
 * primary address again). `changed` is false when it already was.
 */
export async function makePrimaryHostname(db: Database, input: { workspaceId: string; id: string | null }): Promise<{ hostname: HostnameInfo | null; changed: boolean }> {
  const target = input.id === null ? null : await getHostname(db, input.workspaceId, input.id);
  if (input.id !== null && !target) throw new HostnameError("not_found", "This hostname is no longer claimed");
  if (target && target.verifiedAt === null) throw new HostnameError("not_verified", `${target.hostname} is not verified yet: only a verified hostname can be primary`);
  if (target?.primary) return { hostname: target, changed: false };
  const current = (await listHostnames(db, input.workspaceId)).find((h) => h.primary);
  if (!target && !current) return { hostname: null, changed: false };
  await db.update(workspaceHostnames).set({ primary: false }).where(and(eq(workspaceHostnames.workspaceId, input.workspaceId), eq(workspaceHostnames.primary, true)));
  if (!target) return { hostname: null, changed: true };
  const [row] = await db
    .update(workspaceHostnames)
    .set({ primary: true })
    .where(and(eq(workspaceHostnames.workspaceId, input.workspaceId), eq(workspaceHostnames.id, target.id)))
    .returning();
  if (!row) throw new HostnameError("not_found", "This hostname is no longer claimed");
  return { hostname: info(row), changed: true };
}

/**
 * Removes a hostname. What it served ends with it: its hosted sessions end and the grants made
 * under its issuer are revoked (`hostname_removed`), so adding the name back later revives none
 * of them. Null when there was no such hostname.
 */
export async function removeHostname(
  db: Database,
  input: { workspaceId: string; id: string; now: Date },
): Promise<{ hostname: HostnameInfo; sessionsEnded: number; grantsRevoked: number } | null> {
  const [row] = await db
    .delete(workspaceHostnames)
    .where(and(eq(workspaceHostnames.workspaceId, input.workspaceId), eq(workspaceHostnames.id, input.id)))
    .returning();
  if (!row) return null;
  const ended = await db
    .update(hostedSessions)
    .set({ endedAt: input.now, endReason: "hostname_removed" })
    .where(and(eq(hostedSessions.workspaceId, input.workspaceId), eq(hostedSessions.hostname, row.hostname), isNull(hostedSessions.endedAt)))
    .returning({ id: hostedSessions.id });
  const revoked = await db
    .update(grants)
    .set({ revokedAt: input.now, revokeReason: "hostname_removed" })
    .where(and(eq(grants.workspaceId, input.workspaceId), eq(grants.hostname, row.hostname), isNull(grants.revokedAt)))
    .returning({ id: grants.id });
  return { hostname: info(row), sessionsEnded: ended.length, grantsRevoked: revoked.length };
}

/** WebAuthn related origins for the workspace's hostnames (off by default). `changed` is false when it already was so. */
export async function setRelatedOrigins(db: Database, input: { workspaceId: string; on: boolean; now: Date }): Promise<{ changed: boolean }> {
  const changed = await db
    .update(workspaces)
    .set({ relatedOrigins: input.on, updatedAt: input.now })
    .where(and(eq(workspaces.id, input.workspaceId), ne(workspaces.relatedOrigins, input.on)))
    .returning({ id: workspaces.id });
  return { changed: changed.length > 0 };
}

export async function relatedOriginsOn(db: Database, workspaceId: string): Promise<boolean> {
  const [row] = await db.select({ on: workspaces.relatedOrigins }).from(workspaces).where(eq(workspaces.id, workspaceId)).limit(1);
  return row?.on === true;
}
