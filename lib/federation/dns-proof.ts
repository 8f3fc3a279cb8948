/**
 * The DNS ownership proof, one rule for everything a workspace claims by a TXT record: an
 * organization's email domains (./domains.ts) and whatever else a feature claims so (its
 * `ProofKind`: the workspace's authentication hostnames). It owns:
 *
 * - the lookup: the TXT records at `_latchkey.<name>`, through a resolver seam tests replace,
 *   bounded in time; a DNS failure of any kind is an answer ("not found yet"), never an exception;
 * - the record: `<prefix><token>`, found among the records by exact value (surrounding spaces
 *   aside), never at another name;
 * - the write: one conditional UPDATE that records `dns` only while the claim is still the one
 *   the records were judged against (same row, same name, same token): a claim removed, or given
 *   another challenge, while DNS was asked is not verified; concurrent proofs record one change;
 * - the mark: an operator's word (`operator`) is upgraded to `dns` when the record appears, and
 *   never overwrites a DNS proof.
 */
import { Resolver } from "node:dns/promises";
import { and, eq, isNull, or, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import { organizationDomains } from "../../db/schema";

export const TXT_RECORD_LABEL = "_latchkey";
/** A DNS answer slower than this counts as "not found yet". */
export const DNS_TIMEOUT_MS = 5_000;

export type TxtResolver = (name: string) => Promise<string[][]>;

/** The system resolver, one try, bounded by DNS_TIMEOUT_MS. */
export const systemResolveTxt: TxtResolver = (name) => {
  const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: 1 });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      resolver.cancel();
      reject(Object.assign(new Error("DNS lookup timed out"), { code: "ETIMEOUT" }));
    }, DNS_TIMEOUT_MS);
  });
  return Promise.race([resolver.resolveTxt(name), timeout]).finally(() => clearTimeout(timer));
};

/**
 * Where a proof asked from the console looks for TXT records; tests replace it. The lookup runs
 * before the operation's transaction opens (a slow DNS server must not hold the database).
 */
export const proofDns: { resolveTxt: TxtResolver } = { resolveTxt: systemResolveTxt };

export type TxtLookup = { ok: true; records: string[] } | { ok: false; reason: string };

/**
 * The TXT records at `_latchkey.<name>` (each record's strings joined, as DNS splits long
 * ones). A DNS failure of any kind is an answer ("not found yet"), never an exception.
 */
export async function lookupVerificationRecords(name: string, resolveTxt: TxtResolver = systemResolveTxt): Promise<TxtLookup> {
  const at = `${TXT_RECORD_LABEL}.${name}`;
  try {
    const answer = await resolveTxt(at);
    return { ok: true, records: answer.map((chunks) => chunks.join("")) };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const reason =
      code === "ENOTFOUND" || code === "ENODATA" ? `no TXT record at ${at}` : code === "ETIMEOUT" ? "DNS did not answer in time" : `DNS lookup failed (${typeof code === "string" ? code : "error"})`;
    return { ok: false, reason };
  }
}

/** A table of claims proved by DNS: each row a name claimed by a workspace, with its challenge and how it was verified. */
export type ProofTable = PgTable & {
  id: PgColumn;
  workspaceId: PgColumn;
  verificationToken: PgColumn;
  verifiedAt: PgColumn;
  verificationMethod: PgColumn;
};

/** What is proved by DNS, declared by whoever owns the claims: its table, the column holding its name, and the record's prefix. */
export interface ProofKind {
  table: ProofTable;
  name: PgColumn;
  prefix: string;
}

/** An organization's email domain (./domains.ts). */
export const DOMAIN_PROOF: ProofKind = { table: organizationDomains, name: organizationDomains.domain, prefix: "latchkey-domain-verification=" };

export const DOMAIN_TXT_PREFIX = DOMAIN_PROOF.prefix;

/** A claim as read before its records are judged. */
export interface DnsClaim {
  id: string;
  /** The domain or hostname, normalized. */
  name: string;
  verificationToken: string;
  verifiedAt: Date | null;
  verificationMethod: "dns" | "operator" | null;
}

/** The TXT record that proves a claim, for the console and the workspace file to show. */
export function proofRecord(kind: ProofKind, claim: { name: string; verificationToken: string }): { name: string; value: string } {
  return { name: `${TXT_RECORD_LABEL}.${claim.name}`, value: `${kind.prefix}${claim.verificationToken}` };
}

export type DnsProof =
  /** Verified by DNS; `changed` when this proof recorded it (false: it was already, or a concurrent proof recorded it). */
  | { proved: true; changed: boolean }
  | { proved: false; reason: string }
  /** The claim no longer exists. */
  | { proved: false; gone: true };

/**
 * Judges the records found for `claim` and, when they carry its record, records the DNS proof
 * with one conditional write (see above). `beforeWrite` runs once the records are found and the
 * claim is not yet proved by DNS (a hostname checks no other workspace verified it).
 */
export async function recordDnsProof(
  db: Database,
  kind: ProofKind,
  input: { workspaceId: string; claim: DnsClaim; lookup: TxtLookup; now: Date; beforeWrite?: () => Promise<void> },
): Promise<DnsProof> {
  const { claim, lookup } = input;
  const { name, value } = proofRecord(kind, claim);
  if (!lookup.ok) return { proved: false, reason: lookup.reason };
  if (!lookup.records.some((r) => r.trim() === value)) {
    return { proved: false, reason: lookup.records.length ? `the TXT records at ${name} do not include ${value}` : `no TXT record at ${name}` };
  }
  if (claim.verificationMethod === "dns") return { proved: true, changed: false };
  await input.beforeWrite?.();
  const { table, name: nameColumn } = kind;
  const written = await db
    .update(table)
    .set({ verifiedAt: input.now, verificationMethod: "dns" } as never)
    .where(
      and(
        eq(table.workspaceId, input.workspaceId),
        eq(table.id, claim.id),
        eq(nameColumn, claim.name),
        eq(table.verificationToken, claim.verificationToken),
        or(isNull(table.verificationMethod), sql`${table.verificationMethod} <> 'dns'`),
      ),
    )
    .returning({ id: table.id });
  if (written.length > 0) return { proved: true, changed: true };
  // Nothing written: the claim is gone, was given another challenge, or a concurrent proof won.
  const [now] = await db
    .select({ name: nameColumn, token: table.verificationToken, method: table.verificationMethod })
    .from(table)
    .where(and(eq(table.workspaceId, input.workspaceId), eq(table.id, claim.id)))
    .limit(1);
  if (!now) return { proved: false, gone: true };
  if (now.name !== claim.name || now.token !== claim.verificationToken) return { proved: false, reason: `the challenge for ${claim.name} changed while DNS was asked: check again` };
  return { proved: true, changed: false };
}

/**
 * An operator's word that the workspace controls the name (`operator`), recorded only while the
 * claim is unverified: never over a DNS proof, also when one is recorded at the same moment.
 * `changed` is false when it was verified already; null when the claim no longer exists.
 */
export async function recordOperatorMark(db: Database, kind: ProofKind, input: { workspaceId: string; id: string; now: Date }): Promise<{ changed: boolean } | null> {
  const { table } = kind;
  const written = await db
    .update(table)
    .set({ verifiedAt: input.now, verificationMethod: "operator" } as never)
    .where(and(eq(table.workspaceId, input.workspaceId), eq(table.id, input.id), isNull(table.verifiedAt)))
    .returning({ id: table.id });
  if (written.length > 0) return { changed: true };
  const [row] = await db.select({ id: table.id }).from(table).where(and(eq(table.workspaceId, input.workspaceId), eq(table.id, input.id))).limit(1);
  return row ? { changed: false } : null;
}
