/**
 * The email domains an organization claims. A claimed domain does nothing until it is verified:
 * by a DNS TXT record (`_latchkey.<domain>` carrying `latchkey-domain-verification=<token>`), or
 * by an operator's audited word. A verified domain sends its addresses to the organization's
 * connection (home-realm discovery). One organization per domain per workspace.
 *
 * These functions change rows only; who did it is recorded by the caller (a console operation's
 * audit event, or the workspace import's).
 */
import { domainToASCII } from "node:url";
import { and, asc, eq, isNotNull } from "drizzle-orm";
import type { Database } from "../../db/client";
import { organizationDomains, organizations } from "../../db/schema";
import { newId, randomToken } from "../crypto";
import { CodedError } from "../coded-error";
import { DOMAIN_PROOF, DOMAIN_TXT_PREFIX, lookupVerificationRecords, proofRecord, recordDnsProof, recordOperatorMark, type TxtLookup, type TxtResolver } from "./dns-proof";

// The DNS proof (its lookup, record and write) is ./dns-proof.ts's, shared with every name a workspace claims by DNS.
export { DNS_TIMEOUT_MS, lookupVerificationRecords, systemResolveTxt, TXT_RECORD_LABEL, type TxtLookup, type TxtResolver } from "./dns-proof";
export const TXT_RECORD_PREFIX = DOMAIN_TXT_PREFIX;

export type DomainErrorCode = "invalid" | "taken" | "already_claimed" | "not_found";

export class DomainError extends CodedError<DomainErrorCode> {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
  ) {
    // The domain's own faults are shown beside the form's domain field; a missing one over the form.
    super(code, message, { status: code === "not_found" ? 404 : code === "invalid" ? 400 : 409, field: code === "not_found" ? undefined : "domain" });
    this.name = "DomainError";
  }
}

export type VerificationMethod = "dns" | "operator";

export interface DomainInfo {
  id: string;
  organizationId: string;
  domain: string;
  verificationToken: string;
  verifiedAt: Date | null;
  verificationMethod: VerificationMethod | null;
  createdAt: Date;
}

type DomainRow = typeof organizationDomains.$inferSelect;

const info = (r: DomainRow): DomainInfo => ({
  id: r.id,
  organizationId: r.organizationId,
  domain: r.domain,
  verificationToken: r.verificationToken,
  verifiedAt: r.verifiedAt,
  verificationMethod: r.verificationMethod,
  createdAt: r.createdAt,
});

/**
 * Registrable suffixes under which anyone may register a name: claiming one would send strangers'
 * addresses to one organization. Not the whole Public Suffix List, the common second-level ones.
 */
const PUBLIC_SUFFIXES = new Set([
  "co.uk", "org.uk", "ac.uk", "gov.uk", "me.uk", "ltd.uk", "plc.uk", "net.uk",
  "com.au", "net.au", "org.au", "edu.au", "gov.au",
  "co.nz", "org.nz", "net.nz",
  "co.jp", "ne.jp", "or.jp", "ac.jp", "go.jp",
  "co.kr", "or.kr",
  "com.br", "net.br", "org.br",
  "com.cn", "net.cn", "org.cn",
  "com.mx", "com.ar", "com.tr", "com.tw", "com.hk", "com.sg", "com.my",
  "co.in", "net.in", "org.in", "co.za", "org.za", "co.il",
  "github.io", "herokuapp.com", "vercel.app", "netlify.app", "pages.dev", "web.app", "firebaseapp.com",
  "blogspot.com", "azurewebsites.net", "cloudfront.net", "appspot.com",
]);

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * The canonical form of a domain (lower case, no trailing dot, internationalized names as
 * punycode), or DomainError("invalid") saying why it is not one an organization can claim.
 */
export function normalizeDomain(input: string): string {
  const trimmed = input.trim().toLowerCase().replace(/\.$/, "");
  if (trimmed === "") throw new DomainError("invalid", "Enter a domain name");
  if (/[@/:\s]/.test(trimmed)) throw new DomainError("invalid", `${JSON.stringify(input.trim())} is not a domain name (give only the part after @, such as example.com)`);
  const ascii = domainToASCII(trimmed);
  if (ascii === "" || ascii.length > 253) throw new DomainError("invalid", `${JSON.stringify(input.trim())} is not a domain name`);
  const labels = ascii.split(".");
  if (labels.some((l) => !LABEL.test(l))) throw new DomainError("invalid", `${JSON.stringify(input.trim())} is not a domain name`);
  if (labels.length < 2) throw new DomainError("invalid", `${JSON.stringify(ascii)} is a top-level domain: claim a name under it, such as example.${ascii}`);
  if (/^[0-9]+$/.test(labels[labels.length - 1])) throw new DomainError("invalid", `${JSON.stringify(ascii)} is an address, not a domain name`);
  if (PUBLIC_SUFFIXES.has(ascii)) throw new DomainError("invalid", `${JSON.stringify(ascii)} is a public suffix (anyone can register names under it): claim your own name under it`);
  return ascii;
}

/** The TXT record that proves control of a claimed domain, for the console to show. */
export function txtRecordFor(claim: { domain: string; verificationToken: string }): { name: string; value: string } {
  return proofRecord(DOMAIN_PROOF, { name: claim.domain, verificationToken: claim.verificationToken });
}

export async function listDomains(db: Database, workspaceId: string, organizationId: string): Promise<DomainInfo[]> {
  const rows = await db
    .select()
    .from(organizationDomains)
    .where(and(eq(organizationDomains.workspaceId, workspaceId), eq(organizationDomains.organizationId, organizationId)))
    .orderBy(asc(organizationDomains.domain));
  return rows.map(info);
}

export async function getDomain(db: Database, workspaceId: string, domainId: string): Promise<DomainInfo | null> {
  const [row] = await db
    .select()
    .from(organizationDomains)
    .where(and(eq(organizationDomains.workspaceId, workspaceId), eq(organizationDomains.id, domainId)))
    .limit(1);
  return row ? info(row) : null;
}

/**
 * Claims `domain` for an organization, unverified, with a fresh verification token. Refused
 * (DomainError) when it is not a claimable domain, or when an organization of the workspace
 * (this one: "already_claimed"; another: "taken") claims it already.
 */
export async function claimDomain(db: Database, input: { workspaceId: string; organizationId: string; domain: string; now: Date }): Promise<DomainInfo> {
  const domain = normalizeDomain(input.domain);
  const inserted = await db
    .insert(organizationDomains)
    .values({
      id: newId(),
      workspaceId: input.workspaceId,
      organizationId: input.organizationId,
      domain,
      verificationToken: randomToken(24),
      verifiedAt: null,
      verificationMethod: null,
      createdAt: input.now,
    })
    .onConflictDoNothing()
    .returning();
  if (inserted.length === 1) return info(inserted[0]);
  const [holder] = await db
    .select({ organizationId: organizationDomains.organizationId, slug: organizations.slug })
    .from(organizationDomains)
    .innerJoin(organizations, eq(organizations.id, organizationDomains.organizationId))
    .where(and(eq(organizationDomains.workspaceId, input.workspaceId), eq(organizationDomains.domain, domain)))
    .limit(1);
  if (holder?.organizationId === input.organizationId) throw new DomainError("already_claimed", `This organization already claims ${domain}`);
  throw new DomainError("taken", `${domain} is claimed by organization ${holder?.slug ?? "(another)"}: remove it there first`);
}

export type DnsVerification =
  | { verified: true; domain: DomainInfo; changed: boolean }
  | { verified: false; domain: DomainInfo; reason: string };

/**
 * Records a DNS verification given the records found (see lookupVerificationRecords), so the
 * lookup can happen before a transaction opens. A domain an operator marked becomes DNS-verified
 * when the record appears; one already verified by DNS is left as it is.
 */
export async function applyDnsVerification(
  db: Database,
  input: { workspaceId: string; domainId: string; now: Date; lookup: TxtLookup; organizationId?: string },
): Promise<DnsVerification> {
  return proveDomain(db, input, await claimed(db, input), input.lookup);
}

/** Looks up the TXT record and records the verification when it is there, for the claim as read before the lookup. */
export async function verifyDomainByDns(
  db: Database,
  input: { workspaceId: string; domainId: string; now: Date; resolveTxt?: TxtResolver; organizationId?: string },
): Promise<DnsVerification> {
  const current = await claimed(db, input);
  return proveDomain(db, input, current, await lookupVerificationRecords(current.domain, input.resolveTxt));
}

/** The claimed domain (of the organization, when named), or DomainError("not_found"). */
async function claimed(db: Database, input: { workspaceId: string; domainId: string; organizationId?: string }): Promise<DomainInfo> {
  const current = await getDomain(db, input.workspaceId, input.domainId);
  if (!current || (input.organizationId !== undefined && current.organizationId !== input.organizationId)) {
    throw new DomainError("not_found", "This domain is no longer claimed");
  }
  return current;
}

async function proveDomain(db: Database, input: { workspaceId: string; now: Date }, current: DomainInfo, lookup: TxtLookup): Promise<DnsVerification> {
  const proof = await recordDnsProof(db, DOMAIN_PROOF, { workspaceId: input.workspaceId, claim: { ...current, name: current.domain }, lookup, now: input.now });
  if ("gone" in proof) throw new DomainError("not_found", "This domain is no longer claimed");
  if (!proof.proved) return { verified: false, domain: current, reason: proof.reason };
  if (!proof.changed) return { verified: true, domain: current, changed: false };
  const proved = await getDomain(db, input.workspaceId, current.id);
  if (!proved) throw new DomainError("not_found", "This domain is no longer claimed");
  return { verified: true, domain: proved, changed: true };
}

/**
 * An operator's word that the organization controls the domain. Never downgrades a DNS
 * verification; `changed` is false when the domain was verified already.
 */
export async function markDomainVerified(
  db: Database,
  input: { workspaceId: string; domainId: string; now: Date; method: "operator"; organizationId?: string },
): Promise<{ domain: DomainInfo; changed: boolean }> {
  const current = await claimed(db, input);
  if (current.verifiedAt !== null) return { domain: current, changed: false };
  const marked = await recordOperatorMark(db, DOMAIN_PROOF, { workspaceId: input.workspaceId, id: current.id, now: input.now });
  const after = marked && (await getDomain(db, input.workspaceId, current.id));
  if (!marked || !after) throw new DomainError("not_found", "This domain is no longer claimed");
  return { domain: after, changed: marked.changed };
}

/** Removes a claim; null when there was none. Its addresses stop going to the organization's connection. */
export async function removeDomain(db: Database, input: { workspaceId: string; domainId: string; organizationId?: string }): Promise<DomainInfo | null> {
  const conditions = [eq(organizationDomains.workspaceId, input.workspaceId), eq(organizationDomains.id, input.domainId)];
  if (input.organizationId !== undefined) conditions.push(eq(organizationDomains.organizationId, input.organizationId));
  const [row] = await db.delete(organizationDomains).where(and(...conditions)).returning();
  return row ? info(row) : null;
}

/**
 * The organization whose verified domain an email address is in (home-realm discovery), or
 * null: unclaimed, unverified, or not an address.
 */
export async function verifiedDomainForEmail(db: Database, workspaceId: string, email: string): Promise<{ organizationId: string; domainId: string; domain: string } | null> {
  const at = email.lastIndexOf("@");
  if (at < 1) return null;
  let domain: string;
  try {
    domain = normalizeDomain(email.slice(at + 1));
  } catch {
    return null;
  }
  const [row] = await db
    .select({ organizationId: organizationDomains.organizationId, domainId: organizationDomains.id, domain: organizationDomains.domain })
    .from(organizationDomains)
    .where(and(eq(organizationDomains.workspaceId, workspaceId), eq(organizationDomains.domain, domain), isNotNull(organizationDomains.verifiedAt)))
    .limit(1);
  return row ?? null;
}
