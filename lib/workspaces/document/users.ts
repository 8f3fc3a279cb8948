// The `users` section: the user schema, its password fields, and role assignments (workspace-wide or per organization).
import { z } from "zod";
import { isArgon2idHash, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../../authn/password";
import { asArray, asString, entries, isRecord, type CrossCheck } from "../../surfaces/workspace-file/checks";
import { email, normalizeEmail, roleName, slug } from "./fields";
import type { OrganizationRefs } from "./organizations";

const userRoleRef = z.union([
  roleName,
  z.strictObject({ role: roleName, organization: slug }),
]);

export const userSchema = z.strictObject({
  email,
  name: z.string().max(200, "must be at most 200 characters").optional(),
  password: z
    .string()
    .min(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`)
    .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`)
    .optional(),
  password_hash: z
    .string()
    .refine(isArgon2idHash, "must be an argon2id PHC string ($argon2id$v=19$m=…,t=…,p=…$salt$hash)")
    .optional(),
  email_verified: z.boolean().default(false),
  status: z.enum(["active", "disabled"]).default("active"),
  roles: z.array(userRoleRef).default([]),
});

/** The users by normalized email (indexed before organizations, whose members refer to them). */
export function indexUsers(c: CrossCheck): Map<string, Record<string, unknown>> {
  return c.index("users", "email", normalizeEmail);
}

export function checkUsers(c: CrossCheck, roles: Map<string, Record<string, unknown>>, { orgs, members }: OrganizationRefs): void {
  const { add } = c;
  for (const [i, user] of entries(c.doc, "users")) {
    if (user.password !== undefined && user.password_hash !== undefined) {
      add(["users", i], "give either password or password_hash, not both");
    }
    const userEmail = asString(user.email);
    const seen = new Map<string, number>();
    asArray(user.roles).forEach((ref, k) => {
      const path = ["users", i, "roles", k];
      let role: string | undefined;
      let org: string | undefined;
      if (typeof ref === "string") role = ref;
      else if (isRecord(ref)) {
        role = asString(ref.role);
        org = asString(ref.organization);
      }
      if (role !== undefined && !roles.has(role)) {
        add(typeof ref === "string" ? path : [...path, "role"], `unknown role ${JSON.stringify(role)} (not in roles)`);
      }
      if (org !== undefined) {
        if (!orgs.has(org)) add([...path, "organization"], `unknown organization ${JSON.stringify(org)} (not in organizations)`);
        else if (userEmail !== undefined && !members.get(org)?.has(normalizeEmail(userEmail))) {
          add([...path, "organization"], `the user must be listed in the members of organization ${JSON.stringify(org)} to hold a role in it`);
        }
      }
      if (role !== undefined && (typeof ref === "string" || org !== undefined)) {
        const key = JSON.stringify([role, org ?? null]);
        const first = seen.get(key);
        if (first !== undefined) add(path, `duplicate role assignment (also at index ${first})`);
        else seen.set(key, k);
      }
    });
  }
}
