/**
 * Organization email domains (lib/federation/domains.ts) against the database: one organization
 * per domain per workspace, DNS verification with an injected resolver, an operator's mark that
 * never downgrades DNS, removal, and the home-realm lookup that sees verified domains only.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { organizationDomains, organizations } from "../../../db/schema";
import {
  applyDnsVerification,
  claimDomain,
  getDomain,
  listDomains,
  markDomainVerified,
  removeDomain,
  txtRecordFor,
  verifiedDomainForEmail,
  verifyDomainByDns,
  type TxtResolver,
} from "../../../lib/federation/domains";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";

let h: Harness;
const W = uniqueWorkspaceId("dom");
const OTHER = uniqueWorkspaceId("dom-other");
let acme: string;
let globex: string;
let otherAcme: string;

const orgId = async (workspaceId: string, slug: string) =>
  (await h.service.db.select({ id: organizations.id }).from(organizations).where(and(eq(organizations.workspaceId, workspaceId), eq(organizations.slug, slug))))[0].id;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, { id: W, name: "Domains", organizations: [{ slug: "acme", name: "Acme" }, { slug: "globex", name: "Globex" }] });
  await seed(h, { id: OTHER, name: "Other", organizations: [{ slug: "acme", name: "Acme elsewhere" }] });
  acme = await orgId(W, "acme");
  globex = await orgId(W, "globex");
  otherAcme = await orgId(OTHER, "acme");
});

const now = () => h.clock.now();
const records =
  (answer: Record<string, string[][]>): TxtResolver =>
  async (name) => {
    if (answer[name]) return answer[name];
    throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
  };

describe("claiming", () => {
  it("stores the normalized domain, unverified, with its own token", async () => {
    const d = await claimDomain(h.service.db, { workspaceId: W, organizationId: acme, domain: "Acme.Example.", now: now() });
    expect(d).toMatchObject({ organizationId: acme, domain: "acme.example", verifiedAt: null, verificationMethod: null });
    expect(d.verificationToken).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const e = await claimDomain(h.service.db, { workspaceId: W, organizationId: acme, domain: "acme-two.example", now: now() });
    expect(e.verificationToken).not.toBe(d.verificationToken);
    expect((await listDomains(h.service.db, W, acme)).map((x) => x.domain)).toEqual(["acme-two.example", "acme.example"]);
  });

  it("refuses a domain another organization of the workspace claims, naming it", async () => {
    await expect(claimDomain(h.service.db, { workspaceId: W, organizationId: globex, domain: "ACME.example", now: now() })).rejects.toMatchObject({
      code: "taken",
      message: expect.stringContaining("organization acme"),
    });
    await expect(claimDomain(h.service.db, { workspaceId: W, organizationId: acme, domain: "acme.example", now: now() })).rejects.toMatchObject({ code: "already_claimed" });
    expect(await listDomains(h.service.db, W, globex)).toEqual([]);
  });

  it("lets another workspace claim the same domain", async () => {
    const d = await claimDomain(h.service.db, { workspaceId: OTHER, organizationId: otherAcme, domain: "acme.example", now: now() });
    expect(d.domain).toBe("acme.example");
  });

  it("refuses what is not a claimable domain", async () => {
    await expect(claimDomain(h.service.db, { workspaceId: W, organizationId: globex, domain: "com", now: now() })).rejects.toMatchObject({ code: "invalid" });
    await expect(claimDomain(h.service.db, { workspaceId: W, organizationId: globex, domain: "co.uk", now: now() })).rejects.toMatchObject({ code: "invalid" });
  });
});

describe("DNS verification", () => {
  it("is not found until the TXT record carries this domain's token, then verified by DNS", async () => {
    const d = await claimDomain(h.service.db, { workspaceId: W, organizationId: globex, domain: "globex.example", now: now() });
    const txt = txtRecordFor(d);
    const missing = await verifyDomainByDns(h.service.db, { workspaceId: W, domainId: d.id, now: now(), resolveTxt: records({}) });
    expect(missing).toMatchObject({ verified: false, reason: "no TXT record at _latchkey.globex.example" });
    const wrong = await verifyDomainByDns(h.service.db, {
      workspaceId: W,
      domainId: d.id,
      now: now(),
      resolveTxt: records({ [txt.name]: [["latchkey-domain-verification=someone-elses-token"]] }),
    });
    expect(wrong.verified).toBe(false);
    // The record at the domain itself is not the one asked for.
    const elsewhere = await verifyDomainByDns(h.service.db, { workspaceId: W, domainId: d.id, now: now(), resolveTxt: records({ "globex.example": [[txt.value]] }) });
    expect(elsewhere.verified).toBe(false);
    expect((await getDomain(h.service.db, W, d.id))?.verifiedAt).toBeNull();
    expect(await verifiedDomainForEmail(h.service.db, W, "hank@globex.example")).toBeNull();

    const found = await verifyDomainByDns(h.service.db, { workspaceId: W, domainId: d.id, now: now(), resolveTxt: records({ [txt.name]: [["v=spf1 -all"], [txt.value]] }) });
    expect(found).toMatchObject({ verified: true, changed: true, domain: { verificationMethod: "dns", verifiedAt: now() } });
    expect(await verifiedDomainForEmail(h.service.db, W, "Hank@GLOBEX.example")).toEqual({ organizationId: globex, domainId: d.id, domain: "globex.example" });
    expect(await verifiedDomainForEmail(h.service.db, OTHER, "hank@globex.example")).toBeNull();

    // An operator's mark afterwards changes nothing.
    const marked = await markDomainVerified(h.service.db, { workspaceId: W, domainId: d.id, now: now(), method: "operator" });
    expect(marked).toMatchObject({ changed: false, domain: { verificationMethod: "dns" } });
  });

  it("treats a DNS failure as not found yet", async () => {
    const [d] = await listDomains(h.service.db, W, acme);
    const result = await verifyDomainByDns(h.service.db, {
      workspaceId: W,
      domainId: d.id,
      now: now(),
      resolveTxt: async () => {
        throw Object.assign(new Error("timeout"), { code: "ETIMEOUT" });
      },
    });
    expect(result).toMatchObject({ verified: false, reason: "DNS did not answer in time" });
  });

  it("only verifies a domain of the workspace asked about", async () => {
    const [d] = await listDomains(h.service.db, W, acme);
    await expect(verifyDomainByDns(h.service.db, { workspaceId: OTHER, domainId: d.id, now: now(), resolveTxt: records({}) })).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("the DNS proof's write", () => {
  it("records many proofs of one domain at once as one change, and an operator's mark at the same moment never overwrites it", async () => {
    const d = await claimDomain(h.service.db, { workspaceId: W, organizationId: globex, domain: "at-once.example", now: now() });
    const found = { ok: true as const, records: [txtRecordFor(d).value] };
    const results = await Promise.all([
      ...Array.from({ length: 8 }, () => applyDnsVerification(h.service.db, { workspaceId: W, domainId: d.id, now: now(), lookup: found })),
      markDomainVerified(h.service.db, { workspaceId: W, domainId: d.id, now: now(), method: "operator" }).then((m) => ({ ...m, verified: true as const })),
    ]);
    const proofs = results.slice(0, 8);
    expect(proofs.every((r) => r.verified)).toBe(true);
    expect(proofs.filter((r) => r.verified && r.changed)).toHaveLength(1);
    expect((await getDomain(h.service.db, W, d.id))?.verificationMethod).toBe("dns");
  });

  it("a domain removed, or given another challenge, while DNS is asked is not verified by that answer", async () => {
    const d = await claimDomain(h.service.db, { workspaceId: W, organizationId: globex, domain: "asked.example", now: now() });
    const stale = txtRecordFor(d);
    const rechallenging: TxtResolver = async () => {
      await h.service.db.update(organizationDomains).set({ verificationToken: "another-challenge-0123456789" }).where(eq(organizationDomains.id, d.id));
      return [[stale.value]];
    };
    expect(await verifyDomainByDns(h.service.db, { workspaceId: W, domainId: d.id, now: now(), resolveTxt: rechallenging })).toMatchObject({ verified: false, reason: expect.stringContaining("changed") });
    expect((await getDomain(h.service.db, W, d.id))?.verifiedAt).toBeNull();
    const removing: TxtResolver = async () => {
      await removeDomain(h.service.db, { workspaceId: W, domainId: d.id });
      return [[txtRecordFor({ domain: d.domain, verificationToken: "another-challenge-0123456789" }).value]];
    };
    await expect(verifyDomainByDns(h.service.db, { workspaceId: W, domainId: d.id, now: now(), resolveTxt: removing })).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("operator verification and removal", () => {
  it("marks verified by operator, which DNS later upgrades", async () => {
    const d = (await listDomains(h.service.db, W, acme)).find((x) => x.domain === "acme.example")!;
    const marked = await markDomainVerified(h.service.db, { workspaceId: W, domainId: d.id, now: now(), method: "operator" });
    expect(marked).toMatchObject({ changed: true, domain: { verificationMethod: "operator" } });
    expect(await verifiedDomainForEmail(h.service.db, W, "wile@acme.example")).toMatchObject({ organizationId: acme });
    const again = await markDomainVerified(h.service.db, { workspaceId: W, domainId: d.id, now: now(), method: "operator" });
    expect(again.changed).toBe(false);
    const upgraded = await verifyDomainByDns(h.service.db, { workspaceId: W, domainId: d.id, now: now(), resolveTxt: records({ [txtRecordFor(d).name]: [[txtRecordFor(d).value]] }) });
    expect(upgraded).toMatchObject({ verified: true, changed: true, domain: { verificationMethod: "dns" } });
  });

  it("removes a claim only through its organization, and frees the domain", async () => {
    const d = (await listDomains(h.service.db, W, acme)).find((x) => x.domain === "acme.example")!;
    expect(await removeDomain(h.service.db, { workspaceId: W, domainId: d.id, organizationId: globex })).toBeNull();
    expect(await removeDomain(h.service.db, { workspaceId: W, domainId: d.id, organizationId: acme })).toMatchObject({ domain: "acme.example" });
    expect(await verifiedDomainForEmail(h.service.db, W, "wile@acme.example")).toBeNull();
    const reclaimed = await claimDomain(h.service.db, { workspaceId: W, organizationId: globex, domain: "acme.example", now: now() });
    expect(reclaimed).toMatchObject({ organizationId: globex, verifiedAt: null });
  });
});
