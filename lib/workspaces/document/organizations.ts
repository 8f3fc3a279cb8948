// The `organizations` section: the organization schema, its members (users of the file), its email domains and its enterprise (OIDC and SAML) connections.
import { z } from "zod";
import { DomainError, normalizeDomain } from "../../federation/domains";
import { admissionAllowed, SAML_ADMISSION_REASON } from "../../federation/providers";
import { asArray, asString, entries, type CrossCheck } from "./checks";
import { displayName, email, normalizeEmail, roleName, slug } from "./fields";
import { secretReference, upstreamUrl } from "./social-providers";
import { MAX_IDP_CERTIFICATES, MAX_METADATA_BYTES, SAML_ATTRIBUTE_PRESET_NAMES, SAML_NAME_ID_FORMATS, type SamlNameIdFormat } from "../../federation/upstream/saml-settings";

export const organizationDomainSchema = z.strictObject({
  domain: z.string().max(253, "must be at most 253 characters"),
  /**
   * true: an operator vouches for it (recorded in the audit log) when it is not verified yet.
   * Absent or false never unverifies a domain: remove it from the list (or in the console) instead.
   */
  verified: z.boolean().optional(),
});

const attributeName = z.string().trim().min(1, "must not be blank").max(512, "must be at most 512 characters");

/**
 * A SAML connection's identity provider and options: its metadata (`metadata_xml`), or its entity
 * ID, single sign-on URL and signing certificates (what export writes). The SP key pair is made
 * on import and kept; it is never in the file.
 */
export const samlConnectionSchema = z.strictObject({
  metadata_xml: z.string().max(MAX_METADATA_BYTES, `must be at most ${MAX_METADATA_BYTES / 1024} KiB`).optional(),
  idp_entity_id: z.string().trim().min(1, "must not be blank").max(1024, "must be at most 1024 characters").optional(),
  sso_url: upstreamUrl.optional(),
  idp_certificates: z.array(z.string().max(16_384, "must be at most 16 KiB")).min(1, "must have a certificate").max(MAX_IDP_CERTIFICATES, `must have at most ${MAX_IDP_CERTIFICATES} certificates (current and next)`).optional(),
  sign_requests: z.boolean().default(false),
  /** Accept SHA-1 signatures from a legacy identity provider (audited on import). */
  allow_sha1: z.boolean().default(false),
  name_id_format: z.enum(Object.keys(SAML_NAME_ID_FORMATS) as [SamlNameIdFormat, ...SamlNameIdFormat[]]).default("persistent"),
  attribute_preset: z.enum(SAML_ATTRIBUTE_PRESET_NAMES).default("custom"),
  /** The application (client id) a sign-in started at the identity provider is sent to, to sign in from there. */
  idp_initiated_application: z.string().max(128, "must be at most 128 characters").optional(),
  /** The attribute names, for the `custom` preset. */
  attributes: z.strictObject({ email: attributeName, name: attributeName.optional(), given_name: attributeName.optional(), family_name: attributeName.optional() }).optional(),
});

export const connectionSchema = z
  .strictObject({
    /** Identifies the connection within its organization (and in `latchkey connection secret`). */
    name: displayName,
    /** `oidc` (the default): `issuer`, `client_id`, `client_secret`. `saml`: `saml`. */
    protocol: z.enum(["oidc", "saml"], { error: 'must be "oidc" or "saml"' }).default("oidc"),
    issuer: upstreamUrl.optional(),
    client_id: z.string().trim().min(1, "must not be blank").max(200, "must be at most 200 characters").optional(),
    client_secret: secretReference.optional(),
    saml: samlConnectionSchema.optional(),
    /** Role names a member gets, in this organization, when the connection first adds them. */
    default_roles: z.array(roleName).default([]),
    trust_upstream_mfa: z.boolean().default(false),
    /**
     * Who a first sign-in through the connection admits (and adds to the organization with the
     * default roles): `verified_domains` only addresses in the organization's verified domains;
     * `any_vouched` any address the upstream vouches for (except another organization's domain;
     * OIDC only: SAML vouches for no address).
     */
    admission: z.enum(["verified_domains", "any_vouched"], { error: 'must be "verified_domains" or "any_vouched"' }).default("verified_domains"),
    enabled: z.boolean().default(true),
  })
  .superRefine((c, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (c.protocol === "oidc") {
      if (c.issuer === undefined) issue("issuer", "is required for an OIDC connection");
      if (c.client_id === undefined) issue("client_id", "is required for an OIDC connection");
      if (c.saml !== undefined) issue("saml", 'belongs to a SAML connection ("protocol": "saml")');
      return;
    }
    for (const field of ["issuer", "client_id", "client_secret"] as const) if (c[field] !== undefined) issue(field, 'belongs to an OIDC connection ("protocol": "oidc")');
    if (c.saml === undefined) issue("saml", "is required for a SAML connection");
    else if (c.saml.metadata_xml === undefined && (c.saml.idp_entity_id === undefined || c.saml.sso_url === undefined || c.saml.idp_certificates === undefined)) {
      issue("saml", "needs metadata_xml, or idp_entity_id, sso_url and idp_certificates");
    }
    if (!admissionAllowed("saml", c.admission)) issue("admission", `must be "verified_domains" for a SAML connection: ${SAML_ADMISSION_REASON}`);
  });

export const organizationSchema = z.strictObject({
  slug,
  name: displayName,
  active: z.boolean().default(true),
  members: z.array(email).default([]),
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
      const saml = connection.saml;
      const target = saml && typeof saml === "object" ? asString((saml as Record<string, unknown>).idp_initiated_application) : undefined;
      if (target !== undefined) {
        const app = applications.get(target);
        if (!app) add([...path, "saml", "idp_initiated_application"], `unknown application ${JSON.stringify(target)} (not in applications)`);
        else if (app.type === "M2M") add([...path, "saml", "idp_initiated_application"], "must be an application that signs users in (not M2M)");
      }
    }
  }
  return { orgs, members };
}
