// Field schemas shared by the entity sections (names, ids, permissions, audiences, URIs, emails, slugs) and their constants.
import { z } from "zod";
import { audienceProblem, originProblem } from "../../uris";
import { EMAIL_MAX_LENGTH, normalizeEmail as normalizeAddress, parseEmail } from "../../authn/email-address";

export const IDENTITY_SCOPES = ["openid", "email", "profile", "offline_access"] as const;
export const identityScopeSet = new Set<string>(IDENTITY_SCOPES);

export const RESERVED_WORKSPACE_IDS = new Set(["system"]);

export const displayName = z
  .string()
  .max(200, "must be at most 200 characters")
  .refine((s) => s.trim().length > 0, "must not be blank");

export const optionalText = z.string().max(1000, "must be at most 1000 characters");

export const workspaceId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{1,62}$/, "must be 2–63 characters of a–z, 0–9 and -, starting with a letter or digit")
  .refine((id) => !RESERVED_WORKSPACE_IDS.has(id), "is reserved for the operator workspace");

export const clientId = z
  .string()
  .regex(/^[A-Za-z0-9._~-]{1,128}$/, "must be 1–128 characters of A–Z, a–z, 0–9 and . _ ~ -");

const permissionName = z
  .string()
  .regex(/^[A-Za-z0-9:._-]{1,64}$/, "must be 1–64 characters of A–Z, a–z, 0–9 and : . _ -")
  .refine((p) => !identityScopeSet.has(p), "is an identity scope name and cannot be used as a permission");

export const permissionList = z.array(permissionName).max(1000, "must have at most 1000 permissions");

export const audience = z.string().superRefine((value, ctx) => {
  const problem = audienceProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

export const origin = z.string().superRefine((value, ctx) => {
  const problem = originProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** Checked further per client type by `crossCheck` (custom schemes only for PUBLIC). */
export const uriList = z.array(z.string()).max(100, "must have at most 100 URIs");

/** An email address, as lib/authn/email-address.ts reads one (the same rule as sign-up, sign-in and the console). */
export const email = z
  .string()
  .max(EMAIL_MAX_LENGTH, `must be at most ${EMAIL_MAX_LENGTH} characters`)
  .refine((value) => parseEmail(value) !== null, "must be an email address");

export const slug = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "must be 1–63 characters of a–z, 0–9 and -, starting with a letter or digit");

export const roleName = z
  .string()
  .max(64, "must be at most 64 characters")
  .refine((s) => s.trim().length > 0 && s.trim() === s, "must not be blank or have surrounding spaces");

/** A user's key in the file: the normalized address (lib/authn/email-address.ts); a value that is none keys as itself (the schema refuses it). */
export function normalizeEmail(value: string): string {
  return normalizeAddress(value) ?? value;
}

/** The address as shown (the local part as written, the domain normalized); a value that is none as itself. */
export function displayEmail(value: string): string {
  return parseEmail(value)?.display ?? value;
}
