// The `organizations` section: the organization schema and its members, who must be users of the file.
import { z } from "zod";
import { asArray, asString, entries, type CrossCheck } from "./checks";
import { displayName, email, normalizeEmail, slug } from "./fields";

export const organizationSchema = z.strictObject({
  slug,
  name: displayName,
  active: z.boolean().default(true),
  members: z.array(email).default([]),
});

export interface OrganizationRefs {
  /** Organizations by slug. */
  orgs: Map<string, Record<string, unknown>>;
  /** Normalized member emails by organization slug (the first organization of a slug). */
  members: Map<string, Set<string>>;
}

export function checkOrganizations(c: CrossCheck, users: Map<string, Record<string, unknown>>): OrganizationRefs {
  const { add, uniqueStrings } = c;
  const orgs = c.index("organizations", "slug");
  const members = new Map<string, Set<string>>();
  for (const [i, org] of entries(c.doc, "organizations")) {
    const set = new Set<string>();
    asArray(org.members).forEach((member, k) => {
      if (typeof member !== "string") return;
      const normalized = normalizeEmail(member);
      if (!users.has(normalized)) add(["organizations", i, "members", k], `unknown user ${JSON.stringify(member)} (not in users)`);
      set.add(normalized);
    });
    uniqueStrings(org.members, ["organizations", i, "members"], "member", normalizeEmail);
    const orgSlug = asString(org.slug);
    if (orgSlug !== undefined && !members.has(orgSlug)) members.set(orgSlug, set);
  }
  return { orgs, members };
}
