import { describe, expect, it } from "vitest";
import { EVIDENCE_METHODS } from "../evidence";
import { knownAfter } from "./limits";

describe("what makes a device known for a factor", () => {
  it("is the factor itself or a stronger local one: never the password alone for a possession factor, never a federated sign-in", () => {
    for (const factor of ["email_otp", "totp", "recovery_code"] as const) {
      expect(knownAfter(factor)).toEqual(expect.arrayContaining([factor, "passkey", "security_key"]));
      expect(knownAfter(factor)).not.toContain("password");
    }
    expect(knownAfter("totp")).not.toContain("email_otp");
    expect(knownAfter("totp")).not.toContain("recovery_code");
    // For the password, every local method (a factor registered since included), in their order.
    expect(knownAfter("password")).toEqual(expect.arrayContaining(["password", "email_otp", "passkey", "security_key", "totp", "recovery_code"]));
    expect(knownAfter("password")).toEqual(EVIDENCE_METHODS.filter((m) => m !== "federated" && m !== "federated_mfa"));
    for (const factor of ["password", "email_otp", "totp", "recovery_code"] as const) {
      expect(knownAfter(factor)).not.toContain("federated");
      expect(knownAfter(factor)).not.toContain("federated_mfa");
    }
  });
});
