/**
 * SCIM attribute names and paths (RFC 7643 §2.1, RFC 7644 §3.10): names are case-insensitive, so
 * the attributes this service knows are kept under their canonical spelling whatever case a
 * directory sends; an attribute path names a schema's attribute, its sub-attribute, and (in a
 * PATCH) a filter selecting values of a multi-valued one.
 */
import { parse, Tester, type Filter } from "scim2-parse-filter";
import { badRequest } from "./errors";

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const ENTERPRISE_USER_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

/** The core attributes of a user and a group, and the sub-attributes this service knows, in their canonical spelling. */
const USER_ATTRIBUTES = [
  "userName", "name", "displayName", "nickName", "profileUrl", "title", "userType", "preferredLanguage", "locale", "timezone", "active",
  "password", "emails", "phoneNumbers", "ims", "photos", "addresses", "groups", "entitlements", "roles", "x509Certificates", "externalId",
];
const GROUP_ATTRIBUTES = ["displayName", "members", "externalId"];
const SUB_ATTRIBUTES = [
  "formatted", "familyName", "givenName", "middleName", "honorificPrefix", "honorificSuffix",
  "value", "display", "type", "primary", "$ref",
  "streetAddress", "locality", "region", "postalCode", "country",
  "employeeNumber", "costCenter", "organization", "division", "department", "manager", "displayName",
];
const ENTERPRISE_ATTRIBUTES = ["employeeNumber", "costCenter", "organization", "division", "department", "manager"];

/** Attributes the service sets and a directory never writes (a write is ignored). */
export const READ_ONLY = new Set(["id", "meta", "schemas", "groups"]);

const canonical = (names: readonly string[]) => new Map(names.map((n) => [n.toLowerCase(), n]));
const TOP = { User: canonical([...USER_ATTRIBUTES, ...READ_ONLY]), Group: canonical([...GROUP_ATTRIBUTES, ...READ_ONLY]) };
const SUB = canonical(SUB_ATTRIBUTES);
const EXTENSION_SUB = canonical(ENTERPRISE_ATTRIBUTES);

export type ResourceKind = keyof typeof TOP;

/** A schema URN this service knows, in its canonical spelling (URNs are case-insensitive too). */
const SCHEMAS = canonical([USER_SCHEMA, ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA]);

export function canonicalName(kind: ResourceKind, name: string): string {
  const lower = name.toLowerCase();
  return TOP[kind].get(lower) ?? SCHEMAS.get(lower) ?? name;
}

export function canonicalSubName(name: string, inExtension = false): string {
  return (inExtension ? EXTENSION_SUB.get(name.toLowerCase()) : undefined) ?? SUB.get(name.toLowerCase()) ?? name;
}

/** The key of `object` that names `name`, whatever its case (undefined when none). */
export function keyOf(object: Record<string, unknown>, name: string): string | undefined {
  const lower = name.toLowerCase();
  return Object.keys(object).find((k) => k.toLowerCase() === lower);
}

/**
 * A value as sent, with the attribute names this service knows in their canonical spelling, at
 * every level (a complex value's sub-attributes, an extension's attributes, each value of a
 * multi-valued attribute).
 */
export function canonicalize(kind: ResourceKind, resource: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(resource)) {
    const name = canonicalName(kind, key);
    const extension = name.toLowerCase().startsWith("urn:") && name !== USER_SCHEMA && name !== GROUP_SCHEMA;
    if (name === USER_SCHEMA || name === GROUP_SCHEMA) {
      // Core attributes sent under their schema's URN are core attributes.
      if (isObject(value)) Object.assign(out, canonicalize(kind, value));
      continue;
    }
    out[name] = canonicalValue(value, extension);
  }
  return out;
}

export function canonicalValue(value: unknown, extension: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => canonicalValue(v, false));
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [canonicalSubName(k, extension), canonicalValue(v, false)]));
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * An attribute path: `[urn:]attr[.sub]` or, in a PATCH, `attr[filter][.sub]`. `schema` is the
 * extension URN an attribute is under (null for core attributes).
 */
export interface AttributePath {
  schema: string | null;
  attribute: string;
  filter: Filter | null;
  sub: string | null;
}

const PATH = /^(?<attr>[A-Za-z][\w$-]*)(?:\[(?<filter>.+)\])?(?:\.(?<sub>[A-Za-z$][\w$-]*))?$/;

/** Parses a PATCH path (RFC 7644 §3.5.2 `PATH`), as an `invalidPath` refusal when it does not parse. */
export function parsePath(kind: ResourceKind, raw: string): AttributePath {
  const text = raw.trim();
  let schema: string | null = null;
  let rest = text;
  if (/^urn:/i.test(text)) {
    // The URN runs to the last colon before the attribute (a filter may contain colons of its own).
    const bracket = text.indexOf("[");
    const head = bracket === -1 ? text : text.slice(0, bracket);
    const colon = head.lastIndexOf(":");
    if (colon === -1) throw badRequest("invalidPath", `The path ${raw} names no attribute`);
    schema = canonicalName(kind, head.slice(0, colon));
    rest = text.slice(colon + 1);
    if (schema === USER_SCHEMA || schema === GROUP_SCHEMA) schema = null;
  }
  const match = PATH.exec(rest);
  if (!match?.groups) throw badRequest("invalidPath", `The path ${raw} is not an attribute path`);
  const { attr, filter, sub } = match.groups;
  let parsed: Filter | null = null;
  if (filter !== undefined) {
    try {
      parsed = parse(filter);
    } catch {
      throw badRequest("invalidPath", `The filter in the path ${raw} does not parse`);
    }
  }
  // A dotted core path without a filter (`name.givenName`) is an attribute and its sub-attribute.
  return {
    schema,
    attribute: schema ? canonicalSubName(attr, true) : canonicalName(kind, attr),
    filter: parsed,
    sub: sub === undefined ? null : canonicalSubName(sub),
  };
}

/** Compares strings without regard to case (SCIM's `caseExact: false`, the default of every attribute here but `id`). */
type CompValue = string | number | boolean | null;

class CaseInsensitiveTester extends Tester {
  eq(r: unknown, v: CompValue) {
    return typeof r === "string" && typeof v === "string" ? r.toLowerCase() === v.toLowerCase() : r === v;
  }
  ne(r: unknown, v: CompValue) {
    return !this.eq(r, v);
  }
  co(r: unknown, v: CompValue) {
    return typeof r === "string" && typeof v === "string" ? r.toLowerCase().includes(v.toLowerCase()) : super.co(r, v);
  }
  sw(r: unknown, v: CompValue) {
    return typeof r === "string" && typeof v === "string" ? r.toLowerCase().startsWith(v.toLowerCase()) : super.sw(r, v);
  }
  ew(r: unknown, v: CompValue) {
    return typeof r === "string" && typeof v === "string" ? r.toLowerCase().endsWith(v.toLowerCase()) : super.ew(r, v);
  }
}

const tester = new CaseInsensitiveTester();

/** Whether a value (one element of a multi-valued attribute) matches a filter. */
export function matches(value: unknown, filter: Filter): boolean {
  return tester.test(value, filter);
}
