// The `roles` section: the role schema with its permissions per API, each API listed once per role.
import { z } from "zod";
import type { ApiRefs } from "./apis";
import { entries, type CrossCheck } from "../../surfaces/workspace-file/checks";
import { audience, optionalText, permissionList, roleName } from "./fields";

export const rolePermissionSchema = z.strictObject({
  audience,
  permissions: permissionList,
});

export const roleSchema = z.strictObject({
  name: roleName,
  description: optionalText.optional(),
  permissions: z.array(rolePermissionSchema).default([]),
});

/** Returns the roles by name. */
export function checkRoles(c: CrossCheck, { audienceRef, permissionsOnApi }: ApiRefs): Map<string, Record<string, unknown>> {
  const { add } = c;
  const roles = c.index("roles", "name");
  for (const [i, role] of entries(c.doc, "roles")) {
    const seen = new Map<string, number>();
    for (const [j, entry] of entries(role, "permissions")) {
      const path = ["roles", i, "permissions", j];
      const aud = audienceRef(entry.audience, [...path, "audience"]);
      if (aud !== undefined) {
        const first = seen.get(aud);
        if (first !== undefined) add([...path, "audience"], `duplicate audience ${JSON.stringify(aud)} in this role (also at index ${first}); list each API once`);
        else seen.set(aud, j);
      }
      permissionsOnApi(aud, entry.permissions, [...path, "permissions"]);
    }
  }
  return roles;
}
