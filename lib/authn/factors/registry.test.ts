import { describe, expect, it } from "vitest";
import { DEFAULT_RATE_LIMITS } from "../../config";
import { HOSTED_ERRORS, SIGN_IN_FORM_ERRORS } from "../../hosted/errors";
import { CATALOGUES } from "../../i18n/translate";
import { limitOf, type GuessingLimits, type Rate } from "../../limits/declarations";
import { policies, summaries } from "../../../tests/helpers/factor-combinations";
import { completesMultiFactor, EVIDENCE_RULES, evidenceFor, isMultiFactor, STRENGTHS, type Evidence, type EvidenceMethod } from "../evidence";
import { hasAllowedFirstFactor, nextStep, type AuthPolicy, type EnrolledSummary, type NextStep, type SecondFactorOption } from "../policy";
import type { EvidenceRule } from "./evidence-rule";
import { FACTOR_EVIDENCE_RULES } from "./evidence-rules";
import {
  BACKUP_KINDS,
  ENROLLABLE_KINDS,
  FACTOR_METRIC_LABELS,
  FACTORS,
  FIRST_FACTORS,
  FURTHER_FIRST_FACTORS,
  HELD_KINDS,
  labelOf,
  metricLabelOf,
  PORTAL_PRIMARY_KINDS,
  roleOf,
  SECOND_FACTOR_KINDS,
  TYPED_CODE_FACTORS,
} from "./registry";

const base = DEFAULT_RATE_LIMITS;
const at = (rate: Rate | undefined) => (rate ? limitOf(rate, base) : null);
/** A declaration as the table of limits reads it: its name, and its ceilings at the default settings. */
const ceilings = (l: GuessingLimits) => ({
  name: l.name,
  perAddress: at(l.perAddress),
  unidentified: at(l.unidentified),
  perAccountAndAddress: at(l.perAccountAndAddress),
  perAccount: at(l.perAccount),
  knownDevice: l.knownDevice ? { after: [...l.knownDevice.after], rate: at(l.knownDevice.rate) } : null,
});

describe("the factors' registry", () => {
  it("lists each factor's declared guessing limits, by folder", () => {
    const none = { perAddress: null, unidentified: null };
    const guessing = { ...none, perAccountAndAddress: 10, perAccount: 30 };
    expect(Object.fromEntries(FACTORS.map((f) => [f.folder, f.limits.map(ceilings)]))).toEqual({
      password: [{ name: "password", ...guessing, knownDevice: { after: ["password", "email_otp", "passkey", "security_key", "totp", "recovery_code"], rate: 10 } }],
      "email-code": [
        { name: "email-otp", ...guessing, knownDevice: { after: ["email_otp", "passkey", "security_key"], rate: 10 } },
        { name: "email-send", perAddress: 20, unidentified: null, perAccountAndAddress: null, perAccount: 5, knownDevice: { after: ["email_otp", "passkey", "security_key"], rate: 5 } },
      ],
      webauthn: [{ name: "webauthn", perAddress: null, unidentified: 10, perAccountAndAddress: 10, perAccount: null, knownDevice: null }],
      totp: [{ name: "totp", ...guessing, knownDevice: { after: ["passkey", "security_key", "totp"], rate: 10 } }],
      "recovery-codes": [{ name: "recovery-code", ...guessing, knownDevice: { after: ["passkey", "security_key", "recovery_code"], rate: 10 } }],
    });
  });

  it("lists the audit events each factor writes, by folder: an enrolled factor records its addition wherever it is enrolled", () => {
    expect(Object.fromEntries(FACTORS.map((f) => [f.folder, [...f.events]]))).toEqual({
      password: [],
      "email-code": [],
      webauthn: ["account_security.credential_added"],
      totp: ["account_security.credential_added"],
      "recovery-codes": ["account_security.recovery_codes_generated", "recovery_code.used"],
    });
    for (const f of FACTORS) if (f.enrollable.length > 0) expect(f.events).toContain("account_security.credential_added");
  });

  it("gives every kind its evidence (amr, strength), once, as lib/authn/evidence.ts reads it", () => {
    const kinds = FACTORS.flatMap((f) => f.evidence.map((e) => e.method));
    expect(new Set(kinds).size).toBe(kinds.length);
    // The list lib/authn/evidence.ts reads holds each descriptor's rules, the same objects, in the registry's order.
    expect(FACTOR_EVIDENCE_RULES).toHaveLength(kinds.length);
    FACTORS.flatMap((f): readonly EvidenceRule[] => f.evidence).forEach((rule, i) => expect(FACTOR_EVIDENCE_RULES[i], rule.method).toBe(rule));
    // Every method the evidence knows is a factor's, but a sign-in at another identity provider.
    expect(EVIDENCE_RULES.filter((r) => !r.method.startsWith("federated")).map((r) => r.method).sort()).toEqual([...kinds].sort());
    for (const f of FACTORS) {
      for (const e of f.evidence) {
        expect(EVIDENCE_RULES).toContain(e);
        expect(e.amr.length, e.method).toBeGreaterThan(0);
        expect(STRENGTHS).toContain(e.strength);
        expect(e.categories.length, e.method).toBeGreaterThan(0);
      }
    }
    expect(Object.fromEntries(FACTORS.flatMap((f) => f.evidence.map((e) => [e.method, { amr: [...e.amr], strength: e.strength }])))).toEqual({
      password: { amr: ["pwd"], strength: "knowledge" },
      email_otp: { amr: ["otp"], strength: "possession" },
      passkey: { amr: ["hwk", "user"], strength: "phishing_resistant" },
      security_key: { amr: ["hwk"], strength: "phishing_resistant" },
      totp: { amr: ["otp"], strength: "possession" },
      recovery_code: { amr: ["otp"], strength: "possession" },
    });
  });

  it("names every kind for the console, and has the sign-in form's messages for every error code in all three catalogues", () => {
    for (const f of FACTORS) {
      for (const e of f.evidence) expect(labelOf(e.method), e.method).toMatch(/\S/);
      expect(f.errors.length, f.folder).toBeGreaterThan(0);
      for (const code of f.errors) {
        expect(SIGN_IN_FORM_ERRORS).toContain(code);
        const entry = HOSTED_ERRORS[code];
        for (const [locale, catalogue] of Object.entries(CATALOGUES)) {
          for (const key of [entry.title, entry.message]) expect(catalogue[key], `${f.folder} ${code} ${key} (${locale})`).toMatch(/\S/);
        }
      }
    }
  });

  it("has what a held factor needs: listed, removed, enrolled; enrolled kinds are its own", () => {
    for (const f of FACTORS) {
      const own = f.evidence.map((e) => e.method as string);
      for (const k of f.enrollable) expect(own).toContain(k);
      expect(f.held === null, f.folder).toBe(f.enrol === null);
      expect(typeof f.verify).toBe("function");
    }
    expect(HELD_KINDS).toEqual(["passkey", "security_key", "totp", "recovery_code"]);
    expect(ENROLLABLE_KINDS).toEqual(["totp", "security_key", "passkey"]);
  });

  it("declares every kind's role; the lists derived from the roles are the ones the sign-in and the portal offer, in their order", () => {
    for (const f of FACTORS) {
      for (const e of f.evidence) {
        const role = roleOf(e.method);
        expect(role, e.method).toBeDefined();
        // A second factor is one the user enrols; an account's own factor offered as a further one identifies the user.
        expect(role.further === "enrolled", e.method).toBe((f.enrollable as readonly string[]).includes(e.method));
        if (role.further === "first_factor") expect(e.primary, e.method).toBe(true);
        if (role.portalPrimary !== null) expect(e.primary, e.method).toBe(true);
        if (role.portalPrimary === "held" || role.further === "backup") expect(HELD_KINDS, e.method).toContain(e.method);
      }
      // A factor whose failed sign-ins are recorded names them once; the names are what audit `sign_in.failed` records.
      expect(f.failedSignIn === null || typeof f.failedSignIn === "string", f.folder).toBe(true);
    }
    expect(SECOND_FACTOR_KINDS).toEqual(["totp", "security_key", "passkey"]);
    expect(BACKUP_KINDS).toEqual(["recovery_code"]);
    expect(FURTHER_FIRST_FACTORS).toEqual(["password"]);
    expect(PORTAL_PRIMARY_KINDS).toEqual(["password", "email_otp", "passkey"]);
    expect(FACTORS.map((f) => f.failedSignIn)).toEqual(["password", null, "webauthn", "totp", "recovery_code"]);
  });

  it("declares how each factor is answered: a typed code at its own paths, under its own limits, shown as its own error", () => {
    const answers = Object.fromEntries(
      FACTORS.map((f) => [f.folder, f.answer && { kind: f.answer.kind, signInPath: f.answer.signInPath, portalPath: f.answer.portalPath, gate: f.answer.gate.name, wrong: f.answer.wrong }]),
    );
    expect(answers).toEqual({
      password: null,
      "email-code": null,
      webauthn: null,
      totp: { kind: "totp", signInPath: "/sign-in/totp", portalPath: "/account/verify/totp", gate: "totp", wrong: "invalid_code" },
      "recovery-codes": { kind: "recovery_code", signInPath: "/sign-in/recovery-code", portalPath: "/account/verify/recovery-code", gate: "recovery-code", wrong: "invalid_recovery_code" },
    });
    for (const f of TYPED_CODE_FACTORS) {
      const factor = FACTORS.find((d) => d.folder === f.folder)!;
      expect(factor.evidence.map((e) => e.method as string), f.folder).toContain(f.answer.kind);
      expect(factor.limits, f.folder).toContain(f.answer.gate);
      expect(factor.errors as readonly string[], f.folder).toContain(f.answer.wrong);
      expect(f.failedSignIn, f.folder).toBeTruthy();
      // A code is offered as a further factor: the sign-in's step and the portal's MFA offer only such kinds.
      expect(roleOf(f.answer.kind).further, f.folder).not.toBeNull();
    }
    const paths = TYPED_CODE_FACTORS.flatMap((f) => [f.answer.signInPath, f.answer.portalPath]);
    expect(new Set(paths).size).toBe(paths.length);
    expect(TYPED_CODE_FACTORS.map((f) => f.folder)).toEqual(["totp", "recovery-codes"]);
  });

  it("names each kind once for the metrics, the first factors and what an enrolment shows once, from the descriptors", () => {
    // One factor, one label where a dashboard already knows it: the email code's kind is email_otp, its label email_code.
    expect(Object.fromEntries(FACTORS.map((f) => [f.folder, f.metricLabels]))).toEqual({
      password: { password: "password" },
      "email-code": { email_otp: "email_code" },
      webauthn: { passkey: "passkey", security_key: "security_key" },
      totp: { totp: "totp" },
      "recovery-codes": { recovery_code: "recovery_code" },
    });
    for (const f of FACTORS) for (const e of f.evidence) expect(metricLabelOf(e.method), e.method).toBe((f.metricLabels as Record<string, string>)[e.method]);
    expect(FACTOR_METRIC_LABELS).toEqual(["password", "email_code", "passkey", "security_key", "webauthn", "totp", "recovery_code"]);
    // The kinds whose evidence identifies the user open a session: what a policy's first_factors name.
    expect(FIRST_FACTORS).toEqual(["password", "email_otp", "passkey"]);
    expect(FACTORS.map((f) => f.shownOnce)).toEqual([null, null, null, null, "recovery_codes"]);
  });

  it("makes nextStep offer exactly what the policy's explicit rules offered, for every held combination, policy and evidence", () => {
    const at = new Date("2026-11-23T10:00:00Z");
    const evidences: Evidence[][] = [
      [],
      [evidenceFor("password", at)],
      [evidenceFor("email_otp", at)],
      [evidenceFor("passkey", at, "p1")],
      [evidenceFor("security_key", at, "s1")],
      [evidenceFor("federated", at, "connection:c1")],
      [evidenceFor("federated_mfa", at, "connection:c1")],
      [evidenceFor("federated", at, "social:s1")],
      [evidenceFor("password", at), evidenceFor("totp", at, "t1")],
      [evidenceFor("email_otp", at), evidenceFor("password", at)],
    ];
    // Those rules named these kinds: they are compared over what a user holds of them (a kind
    // registered since, none), and over what they offered to enrol (one registered since is
    // offered too, and checked by ENROLLABLE_KINDS's own test).
    const named = ["passkey", "security_key", "totp", "recovery_code"] as const;
    const asNamed = (step: NextStep): NextStep =>
      step.kind === "enroll_second_factor" ? { ...step, options: step.options.filter((o) => (["totp", "security_key", "passkey"] as string[]).includes(o)) } : step;
    const offered = new Set<string>();
    let checked = 0;
    for (const policy of policies())
      for (const enrolled of summaries(named))
        for (const evidence of evidences)
          for (const answered of [false, true]) {
            const step = nextStep(policy, enrolled, evidence, answered);
            if (step.kind === "enroll_second_factor") for (const o of step.options) offered.add(o);
            expect(asNamed(step)).toEqual(previousNextStep(policy, enrolled, evidence, answered));
            checked++;
          }
    expect(checked).toBeGreaterThan(10_000);
    expect(ENROLLABLE_KINDS).toEqual(expect.arrayContaining([...offered]));
  });
});

/** nextStep as it was written before the factors declared their roles: every kind by name. */
function previousNextStep(policy: AuthPolicy, enrolled: EnrolledSummary, evidence: readonly Evidence[], passkeyOfferAnswered: boolean): NextStep {
  if (!hasAllowedFirstFactor(policy, evidence)) return { kind: "first_factor", allowed: [...policy.firstFactors] };
  if (policy.mfa === "required" && !isMultiFactor(evidence)) {
    const completes = (method: EvidenceMethod) => completesMultiFactor(evidence, method);
    const has: [SecondFactorOption, boolean][] = [
      ["totp", enrolled.totp > 0],
      ["security_key", enrolled.security_key > 0],
      ["passkey", enrolled.passkey > 0],
      ["password", enrolled.hasPassword && policy.firstFactors.includes("password")],
    ];
    const options = has.filter(([option, held]) => held && completes(option)).map(([option]) => option);
    if (options.length === 0) return { kind: "enroll_second_factor", options: (["totp", "security_key", "passkey"] as const).filter((f) => completes(f)) };
    if (enrolled.recovery_code > 0 && completes("recovery_code") && options.some((o) => o !== "password")) options.push("recovery_code");
    return { kind: "second_factor", options };
  }
  if (policy.passkeyEnrollment === "require" ? enrolled.passkey === 0 : policy.passkeyEnrollment === "offer" && enrolled.passkey === 0 && !passkeyOfferAnswered) {
    return { kind: "passkey_offer", required: policy.passkeyEnrollment === "require" };
  }
  return { kind: "done" };
}
