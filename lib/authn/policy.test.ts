import { describe, expect, it } from "vitest";
import { evidenceFor } from "./evidence";
import { DEFAULT_POLICY, effectivePolicy, meetsPolicy, nextStep, readPolicy, type AuthPolicy, type EnrolledSummary } from "./policy";
import { NOTHING_ENROLLED } from "./factors";
import { ENROLLABLE_KINDS } from "./factors/registry";

const at = new Date("2026-11-23T10:00:00Z");
const none: EnrolledSummary = { ...NOTHING_ENROLLED, hasPassword: true, passkey: 0, security_key: 0, totp: 0, recovery_code: 0 };
const policy = (p: Partial<AuthPolicy> = {}): AuthPolicy => ({ ...DEFAULT_POLICY, ...p });
const pwd = evidenceFor("password", at);

describe("the authentication policy", () => {
  it("reads stored overrides field by field: an unreadable field is dropped, the readable ones kept", () => {
    expect(readPolicy({ mfa: "required", firstFactors: ["password", "sms"], signUp: "yes", passkeyEnrollment: "offer" })).toEqual({ mfa: "required", passkeyEnrollment: "offer" });
    expect(readPolicy(null)).toEqual({});
    expect(readPolicy({ firstFactors: [] })).toEqual({});
    expect(readPolicy({ firstFactors: ["password", "password"] })).toEqual({});
  });

  it("lets an application override the workspace field by field", () => {
    const p = effectivePolicy({ mfa: "required", signUp: true }, { mfa: "off", firstFactors: ["passkey"] });
    expect(p).toEqual({ ...DEFAULT_POLICY, mfa: "off", signUp: true, firstFactors: ["passkey"] });
    expect(effectivePolicy({}, {})).toEqual(DEFAULT_POLICY);
  });

  it("asks for a first factor until one the application allows is proved", () => {
    expect(nextStep(policy(), null, [])).toEqual({ kind: "first_factor", allowed: DEFAULT_POLICY.firstFactors });
    // A password session does not satisfy an application that accepts only passkeys: step up.
    expect(nextStep(policy({ firstFactors: ["passkey"] }), none, [pwd]).kind).toBe("first_factor");
    // Second factors never identify the user.
    expect(nextStep(policy(), none, [evidenceFor("totp", at, "t1")]).kind).toBe("first_factor");
    expect(nextStep(policy(), none, [pwd])).toEqual({ kind: "done" });
  });

  it("requires a second factor when MFA is required, offering what the user has", () => {
    const mfa = policy({ mfa: "required" });
    expect(nextStep(mfa, { ...none, totp: 1, recovery_code: 10 }, [pwd])).toEqual({ kind: "second_factor", options: ["totp", "recovery_code"] });
    expect(nextStep(mfa, { ...none, security_key: 1, passkey: 1 }, [pwd])).toEqual({ kind: "second_factor", options: ["security_key", "passkey"] });
    // Recovery codes alone are not a second factor to be asked for: the user must enrol one.
    // After a password, every kind the user can enrol (lib/authn/factors/registry.test.ts pins them and their order).
    expect(nextStep(mfa, { ...none, recovery_code: 10 }, [pwd])).toEqual({ kind: "enroll_second_factor", options: [...ENROLLABLE_KINDS] });
    expect(ENROLLABLE_KINDS).toEqual(expect.arrayContaining(["totp", "security_key", "passkey"]));
    expect(nextStep(mfa, { ...none, totp: 1 }, [pwd, evidenceFor("totp", at, "t1")])).toEqual({ kind: "done" });
    // A passkey is two factor categories by itself.
    expect(nextStep(mfa, { ...none, passkey: 1 }, [evidenceFor("passkey", at, "p1")])).toEqual({ kind: "done" });
    // An email code and a password are two categories too (knowledge + possession).
    expect(meetsPolicy(mfa, [pwd, evidenceFor("email_otp", at)])).toBe(true);
    expect(meetsPolicy(mfa, [pwd])).toBe(false);
  });

  it("after an email code, offers only what makes the sign-in multi-factor: the password or a passkey, not a second possession factor", () => {
    const mfa = policy({ mfa: "required" });
    const otp = evidenceFor("email_otp", at);
    // An authenticator app after an email code is two possession factors: not MFA, so not offered.
    expect(nextStep(mfa, { ...none, totp: 1, recovery_code: 10 }, [otp])).toEqual({ kind: "second_factor", options: ["password"] });
    expect(nextStep(mfa, { ...none, hasPassword: false, totp: 1, passkey: 1, recovery_code: 10 }, [otp])).toEqual({ kind: "second_factor", options: ["passkey"] });
    // No password and no passkey: the only enrolment that helps is a passkey.
    expect(nextStep(mfa, { ...none, hasPassword: false, totp: 1 }, [otp])).toEqual({ kind: "enroll_second_factor", options: ["passkey"] });
    // The password is offered only where the application accepts passwords.
    expect(nextStep(policy({ mfa: "required", firstFactors: ["email_otp"] }), { ...none, totp: 1 }, [otp])).toEqual({ kind: "enroll_second_factor", options: ["passkey"] });
    expect(nextStep(mfa, none, [otp, evidenceFor("password", at)])).toEqual({ kind: "done" });
  });

  it("offers a passkey to a user without one until they answer; require is not skippable by the policy", () => {
    expect(nextStep(policy({ passkeyEnrollment: "offer" }), none, [pwd])).toEqual({ kind: "passkey_offer", required: false });
    expect(nextStep(policy({ passkeyEnrollment: "require" }), none, [pwd])).toEqual({ kind: "passkey_offer", required: true });
    expect(nextStep(policy({ passkeyEnrollment: "offer" }), none, [pwd], true)).toEqual({ kind: "done" });
    expect(nextStep(policy({ passkeyEnrollment: "require" }), none, [pwd], true)).toEqual({ kind: "passkey_offer", required: true });
    expect(nextStep(policy({ passkeyEnrollment: "offer" }), { ...none, passkey: 1 }, [pwd])).toEqual({ kind: "done" });
    expect(nextStep(policy({ passkeyEnrollment: "never" }), none, [pwd])).toEqual({ kind: "done" });
  });
});
