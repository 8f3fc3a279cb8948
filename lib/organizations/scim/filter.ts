/**
 * SCIM filters (RFC 7644 §3.4.2.2) as SQL over the directory's rows, so that a list at any size is
 * one indexed statement, never a scan in memory: `eq`, `ne`, `co`, `sw`, `ew`, `pr`, `gt`, `ge`,
 * `lt`, `le`, `and`, `or`, `not`, and value paths on multi-valued attributes
 * (`emails[type eq "work" and value co "@example.com"]`). Strings compare without regard to case
 * (every attribute filtered here is `caseExact: false`, but `id` and `externalId`). The filter is
 * parsed by scim2-parse-filter; an attribute this service cannot filter on is `invalidFilter`.
 */
import { sql, type SQL } from "drizzle-orm";
import { parse, type Filter } from "scim2-parse-filter";
import { scimGroupMembers, scimGroups, scimUsers } from "../../../db/schema";
import { badRequest } from "./errors";

/** The longest filter accepted. */
export const MAX_FILTER_LENGTH = 2048;

type Compare = Extract<Filter, { compValue: unknown }>["op"] | "pr";

/** How one attribute is compared: a text expression (compared lower-cased unless `exact`), a boolean, a time, or a custom rule. */
type Column =
  | { kind: "text"; expr: SQL; exact?: boolean }
  | { kind: "boolean"; expr: SQL }
  | { kind: "time"; expr: SQL }
  | { kind: "custom"; compile: (op: Compare, value: unknown) => SQL };

const like = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

function compareText(expr: SQL, op: Compare, value: unknown, exact = false): SQL {
  if (op === "pr") return sql`(${expr} is not null and ${expr} <> '')`;
  if (typeof value !== "string") {
    if (value === null && (op === "eq" || op === "ne")) return op === "eq" ? sql`${expr} is null` : sql`${expr} is not null`;
    throw badRequest("invalidFilter", "This attribute compares with a string");
  }
  const left = exact ? expr : sql`lower(${expr})`;
  const v = exact ? value : value.toLowerCase();
  switch (op) {
    case "eq":
      return sql`${left} = ${v}`;
    case "ne":
      return sql`(${left} is null or ${left} <> ${v})`;
    case "co":
      return sql`${left} like ${`%${like(v)}%`} escape '\\'`;
    case "sw":
      return sql`${left} like ${`${like(v)}%`} escape '\\'`;
    case "ew":
      return sql`${left} like ${`%${like(v)}`} escape '\\'`;
    case "gt":
      return sql`${left} > ${v}`;
    case "ge":
      return sql`${left} >= ${v}`;
    case "lt":
      return sql`${left} < ${v}`;
    case "le":
      return sql`${left} <= ${v}`;
  }
}

function compareBoolean(expr: SQL, op: Compare, value: unknown): SQL {
  if (op === "pr") return sql`${expr} is not null`;
  const v = typeof value === "string" ? value.toLowerCase() === "true" ? true : value.toLowerCase() === "false" ? false : null : value;
  if (typeof v !== "boolean" || (op !== "eq" && op !== "ne")) throw badRequest("invalidFilter", "A boolean compares with eq or ne and true or false");
  return op === "eq" ? sql`${expr} = ${v}` : sql`${expr} <> ${v}`;
}

function compareTime(expr: SQL, op: Compare, value: unknown): SQL {
  if (op === "pr") return sql`${expr} is not null`;
  const at = typeof value === "string" ? new Date(value) : null;
  if (!at || Number.isNaN(at.getTime())) throw badRequest("invalidFilter", "A time compares with an xsd:dateTime string");
  const ops: Partial<Record<Compare, SQL>> = { eq: sql`=`, ne: sql`<>`, gt: sql`>`, ge: sql`>=`, lt: sql`<`, le: sql`<=` };
  const o = ops[op];
  if (!o) throw badRequest("invalidFilter", `A time cannot be compared with ${op}`);
  return sql`${expr} ${o} ${at.toISOString()}::timestamptz`;
}

function compare(column: Column, op: Compare, value: unknown): SQL {
  switch (column.kind) {
    case "text":
      return compareText(column.expr, op, value, column.exact);
    case "boolean":
      return compareBoolean(column.expr, op, value);
    case "time":
      return compareTime(column.expr, op, value);
    case "custom":
      return column.compile(op, value);
  }
}

/** A multi-valued attribute stored in the resource's JSON (`emails`, `phoneNumbers`, …): its values as rows `e`. */
function elementsOf(attributes: SQL, name: string): SQL {
  const json = sql`(${attributes} -> ${name})`;
  return sql`jsonb_array_elements(case when jsonb_typeof(${json}) = 'array' then ${json} else '[]'::jsonb end)`;
}

/** Each element of a multi-valued attribute compared by one of its sub-attributes (`emails.value`). */
function anyElement(attributes: SQL, name: string, sub: string | null, op: Compare, value: unknown): SQL {
  const expr = sub === null ? sql`(e #>> '{}')` : sql`(e ->> ${sub})`;
  return sql`exists (select 1 from ${elementsOf(attributes, name)} as e where ${compareText(expr, op, value)})`;
}

/** A filter on the elements of a multi-valued attribute (`emails[type eq "work"]`): its attribute names are the elements' sub-attributes. */
function elementFilter(filter: Filter): SQL {
  switch (filter.op) {
    case "and":
    case "or":
      return sql`(${sql.join(filter.filters.map(elementFilter), filter.op === "and" ? sql` and ` : sql` or `)})`;
    case "not":
      return sql`not (${elementFilter(filter.filter)})`;
    case "[]":
      throw badRequest("invalidFilter", "A value filter cannot be nested");
    default: {
      const sub = filter.attrPath;
      if (!/^[A-Za-z$][\w$-]*$/.test(sub)) throw badRequest("invalidFilter", `${sub} is not a sub-attribute`);
      const expr = sub.toLowerCase() === "primary" ? { kind: "boolean" as const, expr: sql`((e ->> ${canonicalSub(sub)})::boolean)` } : { kind: "text" as const, expr: sql`(e ->> ${canonicalSub(sub)})` };
      return compare(expr, filter.op, filter.op === "pr" ? null : filter.compValue);
    }
  }
}

const SUBS = ["value", "type", "primary", "display"];
const canonicalSub = (name: string) => SUBS.find((s) => s === name.toLowerCase()) ?? name;

/** The multi-valued attributes of a user a filter may name, in their canonical spelling. */
const USER_MULTI = ["emails", "phoneNumbers", "ims", "photos", "addresses", "entitlements", "roles", "x509Certificates"];

/** A value compared with a lower-cased key column. */
const lowered = (value: unknown) => (typeof value === "string" ? value.toLowerCase() : value);

/** What a filter may name on a user. */
function userColumn(path: string): Column | null {
  const lower = path.toLowerCase().replace(/^urn:ietf:params:scim:schemas:core:2\.0:user:/, "");
  const attrs = sql`${scimUsers.attributes}`;
  switch (lower) {
    case "id":
      return { kind: "text", expr: sql`${scimUsers.id}`, exact: true };
    case "username":
      // Compared with the lower-cased key column, so that `userName eq` is the unique index's lookup.
      return { kind: "custom", compile: (op, value) => compareText(sql`${scimUsers.userNameKey}`, op, lowered(value), true) };
    case "externalid":
      return { kind: "text", expr: sql`${scimUsers.externalId}`, exact: true };
    case "displayname":
      return { kind: "text", expr: sql`${scimUsers.displayName}` };
    case "active":
      return { kind: "boolean", expr: sql`${scimUsers.active}` };
    case "meta.created":
      return { kind: "time", expr: sql`${scimUsers.createdAt}` };
    case "meta.lastmodified":
      return { kind: "time", expr: sql`${scimUsers.updatedAt}` };
    case "name.givenname":
      return { kind: "text", expr: sql`(${attrs} #>> '{name,givenName}')` };
    case "name.familyname":
      return { kind: "text", expr: sql`(${attrs} #>> '{name,familyName}')` };
    case "name.formatted":
      return { kind: "text", expr: sql`(${attrs} #>> '{name,formatted}')` };
    case "title":
      return { kind: "text", expr: sql`(${attrs} ->> 'title')` };
  }
  const [head, sub = null] = lower.split(".");
  const multi = USER_MULTI.find((m) => m.toLowerCase() === head);
  if (multi && (sub === null || /^[a-z$][\w$-]*$/.test(sub))) {
    return { kind: "custom", compile: (op, value) => anyElement(attrs, multi, sub === null ? "value" : canonicalSub(sub), op, value) };
  }
  return null;
}

/** What a filter may name on a group. */
function groupColumn(path: string): Column | null {
  switch (path.toLowerCase().replace(/^urn:ietf:params:scim:schemas:core:2\.0:group:/, "")) {
    case "id":
      return { kind: "text", expr: sql`${scimGroups.id}`, exact: true };
    case "displayname":
      return { kind: "custom", compile: (op, value) => compareText(sql`${scimGroups.displayNameKey}`, op, lowered(value), true) };
    case "externalid":
      return { kind: "text", expr: sql`${scimGroups.externalId}`, exact: true };
    case "meta.created":
      return { kind: "time", expr: sql`${scimGroups.createdAt}` };
    case "meta.lastmodified":
      return { kind: "time", expr: sql`${scimGroups.updatedAt}` };
    case "members":
    case "members.value":
      return {
        kind: "custom",
        compile: (op, value) => {
          if (op === "pr") return sql`exists (select 1 from ${scimGroupMembers} where ${scimGroupMembers.groupId} = ${scimGroups.id})`;
          if (op !== "eq" || typeof value !== "string") throw badRequest("invalidFilter", "members compares with eq and a user's id");
          return sql`exists (select 1 from ${scimGroupMembers} where ${scimGroupMembers.groupId} = ${scimGroups.id} and ${scimGroupMembers.scimUserId} = ${value})`;
        },
      };
  }
  return null;
}

/** The multi-valued attributes a value path (`attr[…]`) may name, per resource. */
function valuePathAttribute(kind: "User" | "Group", path: string): string | null {
  if (kind === "Group") return null;
  return USER_MULTI.find((m) => m.toLowerCase() === path.toLowerCase()) ?? null;
}

function compile(kind: "User" | "Group", filter: Filter): SQL {
  switch (filter.op) {
    case "and":
    case "or":
      return sql`(${sql.join(
        filter.filters.map((f) => compile(kind, f)),
        filter.op === "and" ? sql` and ` : sql` or `,
      )})`;
    case "not":
      return sql`not (${compile(kind, filter.filter)})`;
    case "[]": {
      const attribute = valuePathAttribute(kind, filter.attrPath);
      if (!attribute) throw badRequest("invalidFilter", `${filter.attrPath} is not a multi-valued attribute a filter may select in`);
      return sql`exists (select 1 from ${elementsOf(sql`${scimUsers.attributes}`, attribute)} as e where ${elementFilter(filter.valFilter)})`;
    }
    default: {
      const column = kind === "User" ? userColumn(filter.attrPath) : groupColumn(filter.attrPath);
      if (!column) throw badRequest("invalidFilter", `Filtering on ${filter.attrPath} is not supported`);
      return compare(column, filter.op, filter.op === "pr" ? null : filter.compValue);
    }
  }
}

/** A `filter` query parameter as a SQL condition on the resource's rows (refused as `invalidFilter`). */
export function filterSql(kind: "User" | "Group", text: string): SQL {
  if (text.length > MAX_FILTER_LENGTH) throw badRequest("invalidFilter", `A filter may be at most ${MAX_FILTER_LENGTH} characters`);
  let parsed: Filter;
  try {
    parsed = parse(text);
  } catch {
    throw badRequest("invalidFilter", "The filter does not parse");
  }
  return compile(kind, parsed);
}
