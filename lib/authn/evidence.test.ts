import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ACR,
  acrOf,
  amrOf,
  authTime,
  EVIDENCE_METHODS,
  EVIDENCE_REUSE_MS,
  EVIDENCE_RULES,
  evidenceFor,
  evidenceSince,
  readEvidence,
  sessionClaims,
  withEvidence,
  type Evidence,
  type EvidenceMethod,
} from "./evidence";

const T0 = new Date("2026-11-21T12:00:00.000Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const ev = (method: EvidenceMethod, seconds = 0, factorId: string | null = null) => evidenceFor(method, at(seconds), factorId);

describe("the evidence record", () => {
  it("fixes amr and strength per method (the table docs/security.md publishes)", () => {
    const table = Object.fromEntries(EVIDENCE_METHODS.map((m) => [m, (({ amr, strength }) => ({ amr, strength }))(ev(m))]));
    // These methods' values are published; a factor registered since adds its own (its row in docs/security.md's table of evidence methods, checked below).
    expect(table).toMatchObject({
      password: { amr: ["pwd"], strength: "knowledge" },
      email_otp: { amr: ["otp"], strength: "possession" },
      passkey: { amr: ["hwk", "user"], strength: "phishing_resistant" },
      security_key: { amr: ["hwk"], strength: "phishing_resistant" },
      totp: { amr: ["otp"], strength: "possession" },
      recovery_code: { amr: ["otp"], strength: "possession" },
      federated: { amr: ["fed"], strength: "knowledge" },
      federated_mfa: { amr: ["fed", "mfa"], strength: "possession" },
    });
  });

  it("is published for every method in docs/security.md's table of evidence methods (which docs/sessions.md links to): its amr, strength and whether it is primary", () => {
    const doc = readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "security.md"), "utf8");
    const rows = doc.slice(doc.indexOf("### Evidence methods")).split("\n\n")[2].split("\n").slice(2);
    expect(readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "sessions.md"), "utf8")).toContain("(security.md#evidence-methods)");
    const published = Object.fromEntries(
      rows.map((row) => {
        const [method, amr, strength, , primary] = row.split(" | ").map((cell) => cell.replace(/^\| /, "").replace(/ \|$/, ""));
        const words = (cell: string) => [...cell.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
        return [words(method)[0], { amr: words(amr), strength: words(strength)[0], primary: primary === "yes" }];
      }),
    );
    expect(Object.keys(published).sort()).toEqual([...EVIDENCE_METHODS].sort());
    for (const rule of EVIDENCE_RULES) expect(published[rule.method], rule.method).toEqual({ amr: [...rule.amr], strength: rule.strength, primary: rule.primary });
  });

  it("records the time as ISO 8601 UTC and the factor used", () => {
    expect(evidenceFor("totp", T0, "totp_1")).toEqual({ method: "totp", amr: ["otp"], strength: "possession", factorId: "totp_1", at: "2026-11-21T12:00:00.000Z" });
    expect(ev("password").factorId).toBeNull();
  });

  it("does not share the method table's amr array with the record", () => {
    const first = ev("password");
    first.amr.push("tampered");
    expect(ev("password").amr).toEqual(["pwd"]);
  });
});

describe("a password sign-in gives exactly today's values", () => {
  it("amr [pwd], acr urn:latchkey:loa:1, auth_time the password check", () => {
    const evidence = [ev("password")];
    expect(amrOf(evidence)).toEqual(["pwd"]);
    expect(acrOf(evidence)).toBe("urn:latchkey:loa:1");
    expect(sessionClaims(evidence)).toEqual({ authTime: T0, amr: ["pwd"], acr: "urn:latchkey:loa:1" });
  });
});

describe("amrOf", () => {
  it("adds mfa for two factor categories (password and an authenticator app)", () => {
    expect(amrOf([ev("password"), ev("totp", 5, "t1")])).toEqual(["pwd", "otp", "mfa"]);
  });

  it("counts categories, not methods: an email code and an authenticator app are both possession", () => {
    expect(amrOf([ev("email_otp"), ev("totp", 5, "t1")])).toEqual(["otp"]);
    expect(amrOf([ev("password"), ev("password", 60)])).toEqual(["pwd"]);
    expect(amrOf([ev("totp", 0, "t1"), ev("security_key", 5, "k1")])).toEqual(["otp", "hwk"]);
  });

  it("counts a passkey as two categories (the authenticator verifies the user itself)", () => {
    expect(amrOf([ev("passkey", 0, "pk1")])).toEqual(["hwk", "user", "mfa"]);
  });

  it("counts a federated sign-in as one category (knowledge): a code after it is MFA, a password is not", () => {
    expect(amrOf([ev("federated", 0, "conn1")])).toEqual(["fed"]);
    expect(amrOf([ev("federated", 0, "conn1"), ev("totp", 5, "t1")])).toEqual(["fed", "otp", "mfa"]);
    expect(amrOf([ev("federated", 0, "conn1"), ev("password", 5)])).toEqual(["fed", "pwd"]);
    expect(amrOf([ev("federated", 0, "conn1"), ev("password", 5), ev("totp", 9, "t1")])).toEqual(["fed", "pwd", "otp", "mfa"]);
  });

  it("counts a trusted upstream MFA (federated_mfa) as two categories, never phishing-resistant", () => {
    expect(amrOf([ev("federated_mfa", 0, "conn1")])).toEqual(["fed", "mfa"]);
    expect(acrOf([ev("federated_mfa", 0, "conn1")])).toBe(ACR.multiFactor);
  });

  it("is the union in order of first appearance, each value once, mfa last and once", () => {
    expect(amrOf([ev("password"), ev("totp", 5, "t1"), ev("recovery_code", 9), ev("security_key", 12, "k1")])).toEqual(["pwd", "otp", "hwk", "mfa"]);
    const recorded: Evidence = { ...ev("password"), amr: ["pwd", "mfa"] };
    expect(amrOf([recorded, ev("totp", 5, "t1")])).toEqual(["pwd", "mfa", "otp"]);
  });
});

describe("acrOf", () => {
  it("loa:2 for multi-factor without a phishing-resistant event", () => {
    expect(acrOf([ev("password"), ev("totp", 5, "t1")])).toBe(ACR.multiFactor);
    expect(acrOf([ev("password"), ev("email_otp", 5)])).toBe(ACR.multiFactor);
    expect(acrOf([ev("password"), ev("recovery_code", 5)])).toBe("urn:latchkey:loa:2");
  });

  it("loa:3 for multi-factor with a phishing-resistant event", () => {
    expect(acrOf([ev("passkey", 0, "pk1")])).toBe("urn:latchkey:loa:3");
    expect(acrOf([ev("password"), ev("security_key", 5, "k1")])).toBe(ACR.phishingResistant);
  });

  it("loa:1 for one category, even with a phishing-resistant event", () => {
    expect(acrOf([ev("totp", 0, "t1"), ev("security_key", 5, "k1")])).toBe(ACR.singleFactor);
    expect(acrOf([ev("email_otp")])).toBe(ACR.singleFactor);
    expect(acrOf([ev("federated", 0, "conn1")])).toBe(ACR.singleFactor);
  });
});

describe("authTime", () => {
  it("is the most recent primary authentication", () => {
    expect(authTime([ev("password"), ev("password", 600)])).toEqual(at(600));
    expect(authTime([ev("email_otp", 30), ev("password", 10)])).toEqual(at(30));
  });

  it("is not moved by a later second factor", () => {
    expect(authTime([ev("password"), ev("totp", 3600, "t1"), ev("security_key", 7200, "k1"), ev("recovery_code", 9000)])).toEqual(T0);
  });

  it("is null without a primary event, and such evidence gives no claims", () => {
    expect(authTime([])).toBeNull();
    expect(authTime([ev("totp", 0, "t1")])).toBeNull();
    expect(() => sessionClaims([ev("totp", 0, "t1")])).toThrow(/primary/);
    expect(() => sessionClaims([])).toThrow(/primary/);
  });
});

describe("evidenceSince", () => {
  const evidence = [ev("password", 0), ev("totp", 300, "t1")];
  it("keeps the events younger than the reuse window (ten minutes, SPEC)", () => {
    expect(EVIDENCE_REUSE_MS).toBe(10 * 60 * 1000);
    expect(evidenceSince(evidence, at(599.999), EVIDENCE_REUSE_MS)).toEqual(evidence);
    expect(evidenceSince(evidence, at(899.999), EVIDENCE_REUSE_MS)).toEqual([evidence[1]]);
    expect(evidenceSince(evidence, at(3600), EVIDENCE_REUSE_MS)).toEqual([]);
  });

  it("drops an event exactly at the end of its window", () => {
    expect(evidenceSince(evidence, at(600), EVIDENCE_REUSE_MS)).toEqual([evidence[1]]);
    expect(evidenceSince(evidence, at(900), EVIDENCE_REUSE_MS)).toEqual([]);
  });
});

describe("withEvidence", () => {
  it("appends a new method or factor", () => {
    expect(withEvidence([ev("password")], ev("totp", 5, "t1"))).toEqual([ev("password"), ev("totp", 5, "t1")]);
    expect(withEvidence([ev("totp", 0, "t1")], ev("totp", 5, "t2"))).toEqual([ev("totp", 0, "t1"), ev("totp", 5, "t2")]);
  });

  it("updates a repeated factor in place, so the list stays bounded by the user's factors", () => {
    let evidence = [ev("password"), ev("totp", 5, "t1")];
    for (let i = 1; i <= 50; i++) evidence = withEvidence(withEvidence(evidence, ev("password", i * 60)), ev("totp", i * 60 + 5, "t1"));
    expect(evidence).toEqual([ev("password", 3000), ev("totp", 3005, "t1")]);
    expect(sessionClaims(evidence)).toEqual({ authTime: at(3000), amr: ["pwd", "otp", "mfa"], acr: ACR.multiFactor });
  });

  it("does not change the list it is given", () => {
    const evidence = [ev("password")];
    withEvidence(evidence, ev("password", 60));
    expect(evidence).toEqual([ev("password")]);
  });
});

describe("readEvidence", () => {
  it("reads back what the database stored", () => {
    const evidence = [ev("password"), ev("passkey", 5, "pk1")];
    expect(readEvidence(JSON.parse(JSON.stringify(evidence)))).toEqual(evidence);
  });

  it("refuses what this module did not write", () => {
    const good = ev("password");
    for (const bad of [
      { ...good, method: "sms" },
      { ...good, strength: "strong" },
      { ...good, at: "yesterday" },
      { ...good, amr: "pwd" },
      { ...good, amr: [1] },
      { ...good, factorId: 7 },
      { ...good, method: "toString" },
    ]) {
      expect(() => readEvidence([bad as never])).toThrow(/unreadable/);
    }
  });
});
