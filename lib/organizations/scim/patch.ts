/**
 * SCIM PATCH (RFC 7644 §3.5.2) over a resource's attributes, as a pure function, in the shapes
 * directories actually send besides the RFC's own:
 * - `op` in any case (Microsoft Entra sends `Add`, `Replace`, `Remove`);
 * - a path-less `value` object whose keys are attribute paths themselves (`name.givenName`,
 *   `urn:…:enterprise:2.0:User:department`), as Entra and Okta send them;
 * - booleans as the strings `"True"` and `"False"` (Entra's `active`);
 * - a filtered path that selects nothing (`emails[type eq "work"].value` on a user without a work
 *   address): with an `eq` filter, `add` and `replace` create the value the filter describes;
 * - `remove` of a multi-valued attribute with a `value` list: removes those values only (Entra's
 *   group members).
 * Attributes the service sets (`id`, `meta`, `schemas`, `groups`) are never written: an operation
 * on them is ignored, so that a directory echoing them back (Okta's `id`) is not refused.
 */
import type { Filter } from "scim2-parse-filter";
import { canonicalName, canonicalValue, ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA, isObject, keyOf, matches, parsePath, READ_ONLY, USER_SCHEMA, type AttributePath, type ResourceKind } from "./attributes";

const SCHEMA_URNS = new Set([USER_SCHEMA, ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA]);
import { badRequest } from "./errors";

export type PatchOp = "add" | "replace" | "remove";

export interface PatchOperation {
  op: PatchOp;
  path: AttributePath | null;
  /** The path as sent, for messages. */
  rawPath: string | null;
  value: unknown;
}

/** At most this many operations in one PATCH. */
export const MAX_OPERATIONS = 1000;

/** Reads a PATCH body's `Operations`, refusing what is not one (`invalidSyntax`, `invalidPath`, `noTarget`). */
export function readOperations(kind: ResourceKind, body: Record<string, unknown>): PatchOperation[] {
  const key = keyOf(body, "Operations");
  const list = key === undefined ? undefined : body[key];
  if (!Array.isArray(list) || list.length === 0) throw badRequest("invalidSyntax", "A PATCH needs a non-empty Operations list");
  if (list.length > MAX_OPERATIONS) throw badRequest("tooMany", `A PATCH may have at most ${MAX_OPERATIONS} operations`);
  return list.map((raw, i) => {
    if (!isObject(raw)) throw badRequest("invalidSyntax", `Operation ${i + 1} is not an object`);
    const opKey = keyOf(raw, "op");
    const op = typeof raw[opKey ?? "op"] === "string" ? (raw[opKey ?? "op"] as string).toLowerCase() : null;
    if (op !== "add" && op !== "replace" && op !== "remove") throw badRequest("invalidSyntax", `Operation ${i + 1}: op must be add, replace or remove`);
    const pathKey = keyOf(raw, "path");
    const rawPath = pathKey === undefined || raw[pathKey] === null || raw[pathKey] === "" ? null : raw[pathKey];
    if (rawPath !== null && typeof rawPath !== "string") throw badRequest("invalidPath", `Operation ${i + 1}: path must be a string`);
    const valueKey = keyOf(raw, "value");
    const value = valueKey === undefined ? undefined : raw[valueKey];
    if (op === "remove" && rawPath === null) throw badRequest("noTarget", `Operation ${i + 1}: remove needs a path`);
    if (op !== "remove" && value === undefined) throw badRequest("invalidValue", `Operation ${i + 1}: ${op} needs a value`);
    if (rawPath === null && op !== "remove" && !isObject(value)) throw badRequest("invalidValue", `Operation ${i + 1}: without a path, the value must be an object of attributes`);
    return { op, path: rawPath === null ? null : parsePath(kind, rawPath), rawPath, value };
  });
}

/** Entra's booleans as strings. */
function booleanish(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const lower = value.toLowerCase();
  return lower === "true" ? true : lower === "false" ? false : value;
}

/** Where an attribute lives: the resource itself for a core attribute, the extension's object for an extension's. */
function container(resource: Record<string, unknown>, path: AttributePath, create: boolean): Record<string, unknown> | null {
  if (path.schema === null) return resource;
  const key = keyOf(resource, path.schema) ?? path.schema;
  const existing = resource[key];
  if (isObject(existing)) return existing;
  if (!create) return null;
  const made: Record<string, unknown> = {};
  resource[key] = made;
  return made;
}

/** The `eq` conditions of a filter (`type eq "work"`, `a eq 1 and b eq 2`): what a value it selects must hold; null when it is not only that. */
function equalities(filter: Filter): Record<string, unknown> | null {
  if (filter.op === "eq" && !filter.attrPath.includes(".")) return { [filter.attrPath]: filter.compValue };
  if (filter.op === "and") {
    const parts = filter.filters.map(equalities);
    return parts.every((p) => p !== null) ? Object.assign({}, ...parts) : null;
  }
  return null;
}

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

/** Equal as SCIM compares multi-valued values: by `value` when both have one, else as JSON. */
function sameValue(a: unknown, b: unknown): boolean {
  if (isObject(a) && isObject(b) && "value" in a && "value" in b) return String(a.value) === String(b.value);
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Sets `value` at `path` (add merges into complex values and appends to multi-valued ones; replace replaces). */
function write(resource: Record<string, unknown>, op: "add" | "replace", path: AttributePath, raw: unknown, rawPath: string): void {
  if (path.schema === null && READ_ONLY.has(path.attribute)) return;
  const value = path.attribute === "active" && path.sub === null ? booleanish(raw) : raw;
  const target = container(resource, path, true)!;
  const key = keyOf(target, path.attribute) ?? path.attribute;
  const current = target[key];

  if (path.filter) {
    // A value selection: set the sub-attribute (or the whole value) of every value the filter selects.
    const list = Array.isArray(current) ? current : [];
    const selected = list.filter((v) => matches(v, path.filter!));
    if (selected.length === 0) {
      const described = equalities(path.filter);
      if (!described) throw badRequest("noTarget", `No value matches the filter in ${rawPath}`);
      const made = canonicalValue(path.sub ? { ...described, [path.sub]: value } : { ...described, ...(isObject(value) ? value : { value }) }, false) as Record<string, unknown>;
      target[key] = [...list, made];
      return;
    }
    for (const v of selected) {
      if (!isObject(v)) continue;
      if (path.sub) v[keyOf(v, path.sub) ?? path.sub] = value;
      else if (isObject(value)) Object.assign(v, value);
    }
    return;
  }

  if (path.sub) {
    // A sub-attribute of a complex attribute (`name.givenName`), or of every value of a multi-valued one.
    if (Array.isArray(current)) {
      for (const v of current) if (isObject(v)) v[keyOf(v, path.sub) ?? path.sub] = value;
      return;
    }
    const complex = isObject(current) ? current : {};
    complex[keyOf(complex, path.sub) ?? path.sub] = value;
    target[key] = complex;
    return;
  }

  if (op === "add" && Array.isArray(current)) {
    const additions = asList(value).filter((v) => !current.some((c) => sameValue(c, v)));
    target[key] = [...current, ...additions.map((v) => canonicalValue(v, false))];
    return;
  }
  if (isObject(current) && isObject(value)) {
    // A complex attribute: add and replace alike set the sub-attributes given and keep the others (RFC 7644 §3.5.2.1, §3.5.2.3).
    Object.assign(current, canonicalValue(value, path.schema !== null));
    return;
  }
  target[key] = canonicalValue(value, path.schema !== null);
  if (target[key] === null) delete target[key];
}

function remove(resource: Record<string, unknown>, path: AttributePath, value: unknown): void {
  if (path.schema === null && READ_ONLY.has(path.attribute)) return;
  const target = container(resource, path, false);
  if (!target) return;
  const key = keyOf(target, path.attribute);
  if (key === undefined) return;
  const current = target[key];
  if (path.filter) {
    if (!Array.isArray(current)) return;
    if (path.sub) {
      for (const v of current) if (isObject(v) && matches(v, path.filter)) delete v[keyOf(v, path.sub) ?? path.sub];
    } else {
      target[key] = current.filter((v) => !matches(v, path.filter!));
    }
    return;
  }
  if (path.sub) {
    if (isObject(current)) delete current[keyOf(current, path.sub) ?? path.sub];
    else if (Array.isArray(current)) for (const v of current) if (isObject(v)) delete v[keyOf(v, path.sub) ?? path.sub];
    return;
  }
  if (Array.isArray(current) && value !== undefined && value !== null) {
    const removing = asList(value);
    target[key] = current.filter((c) => !removing.some((r) => sameValue(c, r)));
    return;
  }
  delete target[key];
}

/**
 * Applies the operations in order to a copy of `resource` (canonical attributes, without id and
 * meta) and returns it; throws the first refusal, leaving nothing applied.
 */
export function applyPatch(kind: ResourceKind, resource: Record<string, unknown>, operations: readonly PatchOperation[]): Record<string, unknown> {
  const next = structuredClone(resource);
  for (const operation of operations) {
    if (operation.op === "remove") {
      remove(next, operation.path!, operation.value);
      continue;
    }
    if (operation.path) {
      write(next, operation.op, operation.path, operation.value, operation.rawPath!);
      continue;
    }
    // Without a path: each attribute of the value, its key read as a path of its own.
    for (const [name, value] of Object.entries(operation.value as Record<string, unknown>)) {
      const canonical = canonicalName(kind, name);
      if (SCHEMA_URNS.has(canonical) && isObject(value)) {
        // A schema's attributes as an object under its URN (the core schema's are core attributes).
        const prefix = canonical === USER_SCHEMA || canonical === GROUP_SCHEMA ? "" : `${canonical}:`;
        for (const [inner, v] of Object.entries(value)) write(next, operation.op, parsePath(kind, `${prefix}${inner}`), v, `${prefix}${inner}`);
        continue;
      }
      write(next, operation.op, parsePath(kind, name), value, name);
    }
  }
  return next;
}
