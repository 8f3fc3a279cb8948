import { describe, expect, it } from "vitest";
import { policies, summaries } from "../../tests/helpers/factor-combinations";
import type { AuthPolicy, EnrolledSummary } from "../authn/policy";
import { isLastRequiredFactor, verifyMethods, type RemovableFactor, type VerifyMethods } from "./evidence";

/** verifyMethods as it was written before the factors declared their roles: every kind by name. */
function previousVerifyMethods(policy: AuthPolicy, enrolled: EnrolledSummary, emailUsable: boolean): VerifyMethods {
  const primary: VerifyMethods["primary"] = [];
  if (enrolled.hasPassword && policy.firstFactors.includes("password")) primary.push("password");
  if (emailUsable && policy.firstFactors.includes("email_otp")) primary.push("email_otp");
  if (enrolled.passkey > 0) primary.push("passkey");
  const mfa: VerifyMethods["mfa"] = [];
  if (enrolled.totp > 0) mfa.push("totp");
  if (enrolled.security_key > 0) mfa.push("security_key");
  if (enrolled.passkey > 0) mfa.push("passkey");
  if (enrolled.recovery_code > 0 && (enrolled.totp > 0 || enrolled.security_key > 0)) mfa.push("recovery_code");
  return { primary, mfa, hasSecondFactor: enrolled.totp + enrolled.security_key + enrolled.passkey > 0 };
}

/** The kinds those rules named: they are compared over what a user holds of these (a kind registered since, none). */
const NAMED = ["passkey", "security_key", "totp", "recovery_code"] as const;

/** isLastRequiredFactor as it was written before the factors declared their roles. */
function previousIsLastRequiredFactor(policy: AuthPolicy, enrolled: EnrolledSummary, kind: Extract<RemovableFactor, "totp" | "security_key" | "passkey">): boolean {
  const after = { totp: enrolled.totp, security_key: enrolled.security_key, passkey: enrolled.passkey };
  after[kind] -= 1;
  if (policy.mfa === "required" && after.totp + after.security_key + after.passkey <= 0) return true;
  const passkeysRequired = policy.passkeyEnrollment === "require" || (policy.firstFactors.length === 1 && policy.firstFactors[0] === "passkey");
  return kind === "passkey" && passkeysRequired && after.passkey <= 0;
}

describe("the portal's verification methods, derived from the factors' roles", () => {
  it("offer what the explicit rules offered, in their order, for every held combination and policy", () => {
    let checked = 0;
    for (const policy of policies())
      for (const enrolled of summaries(NAMED)) {
        for (const emailUsable of [true, false]) expect(verifyMethods(policy, enrolled, emailUsable)).toEqual(previousVerifyMethods(policy, enrolled, emailUsable));
        for (const kind of ["totp", "security_key", "passkey"] as const) expect(isLastRequiredFactor(policy, enrolled, kind), kind).toBe(previousIsLastRequiredFactor(policy, enrolled, kind));
        checked++;
      }
    expect(checked).toBeGreaterThan(1_000);
  });
});
