// The `organizations` section: the organization schema, its members (users of the file), its email domains and its enterprise connections (each protocol's fields are its own: lib/federation/protocols).
import { z } from "zod";
import { DomainError, normalizeDomain } from "../../federation/domains";
import type { ConnectionAdmission } from "../../federation/providers";
import { admissionRefusal, CONNECTION_KINDS, CONNECTION_PROTOCOLS, type ConnectionKind, type FileFieldTypes } from "../../federation/protocols";
import { asArray, asString, entries, type CrossCheck } from "../../surfaces/workspace-file/checks";
import { displayName, email, normalizeEmail, roleName, slug } from "./fields";
import { secretReference, upstreamUrl } from "./social-providers";

export const organizationDomainSchema = z.strictObject({
  domain: z.string().max(253, "must be at most 253 characters"),
  /**
   * true: an operator vouches for it (recorded in the audit log) when it is not verified yet.
   * Absent or false never unverifies a domain: remove it from the list (or in the console) instead.
   */
  verified: z.boolean().optional(),
});

/** The workspace file's field types, given to each connection protocol for its part of the entry. */
const FIELD_TYPES: FileFieldTypes = { upstreamUrl, secretReference };

/** Every protocol's fields of a connection entry (each protocol reads its own). */
const protocolFields = Object.assign({}, ...Object.values(CONNECTION_PROTOCOLS).map((p) => p.file.fields(FIELD_TYPES))) as z.ZodRawShape;

export const connectionSchema = z
  .strictObject({
    /** Identifies the connection within its organization (and in `latchkey connection secret`). */
    name: displayName,
    /** The connection's protocol (lib/federation/protocols), the first the default; its fields are its own. */
    protocol: z.enum(CONNECTION_KINDS, { error: `must be ${CONNECTION_KINDS.map((k) => JSON.stringify(k)).join(" or ")}` }).default(CONNECTION_KINDS[0]),
    ...protocolFields,
    /** Role names a member gets, in this organization, when the connection first adds them. */
    default_roles: z.array(roleName).default([]),
    trust_upstream_mfa: z.boolean().default(false),
    /**
     * Who a first sign-in through the connection admits (and adds to the organization with the
     * default roles): `verified_domains` only addresses in the organization's verified domains;
     * `any_vouched` any address the upstream vouches for (except another organization's domain;
     * not for a protocol that vouches for no address).
     */
    admission: z.enum(["verified_domains", "any_vouched"], { error: 'must be "verified_domains" or "any_vouched"' }).default("verified_domains"),
    enabled: z.boolean().default(true),
  })
  .superRefine((c, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    const kind = c.protocol as ConnectionKind;
    // Another protocol's fields are refused, then the protocol's own rules.
    for (const other of Object.values(CONNECTION_PROTOCOLS)) {
      if (other.kind === kind) continue;
      for (const field of other.file.own) if ((c as Record<string, unknown>)[field] !== undefined) issue(field, `belongs to ${other.noun} ("protocol": "${other.kind}")`);
    }
    CONNECTION_PROTOCOLS[kind].file.check(c, issue);
    const refused = admissionRefusal(kind, c.admission as ConnectionAdmission);
    if (refused) issue("admission", `must be "verified_domains" for ${CONNECTION_PROTOCOLS[kind].noun}: ${refused}`);
  });

export const organizationSchema = z.strictObject({
  slug,
  name: displayName,
  active: z.boolean().default(true),
  members: z.array(email).default([]),
  /** Members (of `members`) who administer the organization: they may invite people to it (lib/organizations/invitations). */
  administrators: z.array(email).optional(),
  domains: z.array(organizationDomainSchema).max(100, "must have at most 100 domains").default([]),
  connections: z.array(connectionSchema).max(20, "must have at most 20 connections").default([]),
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
  // The roles section indexed again (its duplicate problems are the same ones, reported once).
  const roles = c.index("roles", "name");
  const applications = c.index("applications", "client_id");
  const members = new Map<string, Set<string>>();
  // One organization per domain, across the whole file.
  const domainOwner = new Map<string, string>();
  for (const [i, org] of entries(c.doc, "organizations")) {
    const set = new Set<string>();
    asArray(org.members).forEach((member, k) => {
      if (typeof member !== "string") return;
      const normalized = normalizeEmail(member);
      if (!users.has(normalized)) add(["organizations", i, "members", k], `unknown user ${JSON.stringify(member)} (not in users)`);
      set.add(normalized);
    });
    uniqueStrings(org.members, ["organizations", i, "members"], "member", normalizeEmail);
    asArray(org.administrators).forEach((administrator, k) => {
      if (typeof administrator === "string" && !set.has(normalizeEmail(administrator))) add(["organizations", i, "administrators", k], `${JSON.stringify(administrator)} is not in this organization's members`);
    });
    uniqueStrings(org.administrators, ["organizations", i, "administrators"], "administrator", normalizeEmail);
    const orgSlug = asString(org.slug);
    if (orgSlug !== undefined && !members.has(orgSlug)) members.set(orgSlug, set);

    for (const [k, entry] of entries(org, "domains")) {
      const raw = asString(entry.domain);
      if (raw === undefined) continue;
      const path = ["organizations", i, "domains", k, "domain"];
      let domain: string;
      try {
        domain = normalizeDomain(raw);
      } catch (error) {
        if (error instanceof DomainError) add(path, error.message);
        continue;
      }
      const first = domainOwner.get(domain);
      if (first !== undefined) add(path, `duplicate domain ${JSON.stringify(domain)} (also at ${first}): a domain belongs to one organization`);
      else domainOwner.set(domain, `$.organizations[${i}].domains[${k}]`);
    }

    const names = new Map<string, number>();
    for (const [k, connection] of entries(org, "connections")) {
      const path = ["organizations", i, "connections", k];
      const name = asString(connection.name);
      if (name !== undefined) {
        const first = names.get(name.trim());
        if (first !== undefined) add([...path, "name"], `duplicate connection name ${JSON.stringify(name)} (also at index ${first})`);
        else names.set(name.trim(), k);
      }
      asArray(connection.default_roles).forEach((role, r) => {
        if (typeof role === "string" && !roles.has(role)) add([...path, "default_roles", r], `unknown role ${JSON.stringify(role)} (not in roles)`);
      });
      uniqueStrings(connection.default_roles, [...path, "default_roles"], "role");
      for (const protocol of Object.values(CONNECTION_PROTOCOLS)) protocol.file.crossCheck?.(connection, { applications }, (inner, message) => add([...path, ...inner], message));
    }
  }
  return { orgs, members };
}
