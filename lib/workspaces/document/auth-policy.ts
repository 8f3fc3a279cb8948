// The `auth_policy` object, at the workspace level and per application: the file's snake_case form of lib/authn/policy.ts's overrides.
import { z } from "zod";
import { FIRST_FACTORS, MFA_MODES, PASSKEY_ENROLLMENT, readPolicy, type PolicyOverrides } from "../../authn/policy";
import { entries, isRecord, type CrossCheck } from "../../surfaces/workspace-file/checks";

/** Every field optional: the workspace's fields override the defaults, an application's override the workspace's. */
export const authPolicySchema = z.strictObject({
  first_factors: z.array(z.enum(FIRST_FACTORS)).min(1, "must name at least one first factor").optional(),
  mfa: z.enum(MFA_MODES).optional(),
  passkey_enrollment: z.enum(PASSKEY_ENROLLMENT).optional(),
  sign_up: z.boolean().optional(),
});
export type AuthPolicyEntry = z.output<typeof authPolicySchema>;

/** The file's policy as stored overrides (camelCase, only the fields the file names, in a fixed order). */
export function policyOverrides(entry: AuthPolicyEntry | undefined): PolicyOverrides {
  if (!entry) return {};
  return {
    ...(entry.first_factors === undefined ? {} : { firstFactors: [...entry.first_factors] }),
    ...(entry.mfa === undefined ? {} : { mfa: entry.mfa }),
    ...(entry.passkey_enrollment === undefined ? {} : { passkeyEnrollment: entry.passkey_enrollment }),
    ...(entry.sign_up === undefined ? {} : { signUp: entry.sign_up }),
  };
}

/** A stored policy as the file writes it; undefined when it overrides nothing (export leaves the field out). */
export function policyEntry(stored: unknown): AuthPolicyEntry | undefined {
  const o = readPolicy(stored);
  const entry: AuthPolicyEntry = {
    ...(o.firstFactors === undefined ? {} : { first_factors: o.firstFactors }),
    ...(o.mfa === undefined ? {} : { mfa: o.mfa }),
    ...(o.passkeyEnrollment === undefined ? {} : { passkey_enrollment: o.passkeyEnrollment }),
    ...(o.signUp === undefined ? {} : { sign_up: o.signUp }),
  };
  return Object.keys(entry).length > 0 ? entry : undefined;
}

/** Repeated first factors, at the workspace level and per application; a policy on an M2M client, which never signs a person in. */
export function checkAuthPolicies(c: CrossCheck): void {
  const { add, uniqueStrings } = c;
  if (isRecord(c.doc.auth_policy)) uniqueStrings(c.doc.auth_policy.first_factors, ["auth_policy", "first_factors"], "first factor");
  for (const [i, app] of entries(c.doc, "applications")) {
    if (!isRecord(app.auth_policy)) continue;
    uniqueStrings(app.auth_policy.first_factors, ["applications", i, "auth_policy", "first_factors"], "first factor");
    if (app.type === "M2M") add(["applications", i, "auth_policy"], "M2M clients do not sign people in; they have no authentication policy");
  }
}
