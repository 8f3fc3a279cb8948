/**
 * The declarative workspace file: its zod schema, and validation that reports every problem at
 * once with a JSON path (`$.applications[1].redirect_uris[0]`). Validation is pure: references
 * resolve within the document, never against the database, so a file that validates here means
 * the same thing wherever it is imported. See docs/workspace-file.md.
 */
import { z } from "zod";
import { isArgon2idHash, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../authn/password";
import { clientTypes, type ClientType } from "../../db/schema/applications";
import { audienceProblem, originProblem, redirectUriProblem } from "./uris";

export const IDENTITY_SCOPES = ["openid", "email", "profile", "offline_access"] as const;
const identityScopeSet = new Set<string>(IDENTITY_SCOPES);

export const RESERVED_WORKSPACE_IDS = new Set(["system"]);
export const MIN_PRESET_SECRET_LENGTH = 32;

/** One problem in a workspace file. */
export interface WorkspaceFileIssue {
  /** JSON path such as `$.applications[1].redirect_uris[0]`. */
  path: string;
  message: string;
}

/** The file is invalid; `issues` lists every problem found. Nothing was written. */
export class WorkspaceFileError extends Error {
  constructor(readonly issues: WorkspaceFileIssue[]) {
    super(
      `Invalid workspace file (${issues.length} problem${issues.length === 1 ? "" : "s"}):\n` +
        issues.map((i) => `  ${i.path}: ${i.message}`).join("\n"),
    );
    this.name = "WorkspaceFileError";
  }
}

// ---------------------------------------------------------------------------------------------
// Field schemas

const displayName = z
  .string()
  .max(200, "must be at most 200 characters")
  .refine((s) => s.trim().length > 0, "must not be blank");

const optionalText = z.string().max(1000, "must be at most 1000 characters");

const workspaceId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{1,62}$/, "must be 2–63 characters of a–z, 0–9 and -, starting with a letter or digit")
  .refine((id) => !RESERVED_WORKSPACE_IDS.has(id), "is reserved for the operator workspace");

const clientId = z
  .string()
  .regex(/^[A-Za-z0-9._~-]{1,128}$/, "must be 1–128 characters of A–Z, a–z, 0–9 and . _ ~ -");

const permissionName = z
  .string()
  .regex(/^[A-Za-z0-9:._-]{1,64}$/, "must be 1–64 characters of A–Z, a–z, 0–9 and : . _ -")
  .refine((p) => !identityScopeSet.has(p), "is an identity scope name and cannot be used as a permission");

const permissionList = z.array(permissionName).max(1000, "must have at most 1000 permissions");

const audience = z.string().superRefine((value, ctx) => {
  const problem = audienceProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

const origin = z.string().superRefine((value, ctx) => {
  const problem = originProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** Checked further per client type by `crossCheck` (custom schemes only for PUBLIC). */
const uriList = z.array(z.string()).max(100, "must have at most 100 URIs");

const email = z
  .string()
  .max(254, "must be at most 254 characters")
  .regex(/^\s*[^\s@]+@[^\s@]+\.[^\s@]+\s*$/, "must be an email address");

const slug = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "must be 1–63 characters of a–z, 0–9 and -, starting with a letter or digit");

const roleName = z
  .string()
  .max(64, "must be at most 64 characters")
  .refine((s) => s.trim().length > 0 && s.trim() === s, "must not be blank or have surrounding spaces");

// ---------------------------------------------------------------------------------------------
// Entity schemas

export const applicationSchema = z.strictObject({
  client_id: clientId,
  name: displayName,
  type: z.enum(clientTypes),
  redirect_uris: uriList.default([]),
  post_logout_redirect_uris: uriList.default([]),
  allowed_origins: z.array(origin).max(100, "must have at most 100 origins").default([]),
  /** Defaults to ["openid"] for interactive clients and [] for M2M. */
  identity_scopes: z.array(z.enum(IDENTITY_SCOPES)).optional(),
  active: z.boolean().default(true),
  account_security: z.boolean().default(false),
  /** A preset secret for development fixtures; never exported. */
  secret: z
    .string()
    .min(MIN_PRESET_SECRET_LENGTH, `must be at least ${MIN_PRESET_SECRET_LENGTH} characters`)
    .max(512, "must be at most 512 characters")
    .optional(),
  secret_lifetime_days: z
    .number()
    .int("must be a whole number of days")
    .min(1, "must be from 1 to 365 days")
    .max(365, "must be from 1 to 365 days")
    .optional(),
});

export const apiSchema = z.strictObject({
  audience,
  name: displayName,
  active: z.boolean().default(true),
  permissions: permissionList.default([]),
});

export const apiGrantSchema = z.strictObject({
  client_id: clientId,
  audience,
  permissions: permissionList.default([]),
});

export const rolePermissionSchema = z.strictObject({
  audience,
  permissions: permissionList,
});

export const roleSchema = z.strictObject({
  name: roleName,
  description: optionalText.optional(),
  permissions: z.array(rolePermissionSchema).default([]),
});

export const organizationSchema = z.strictObject({
  slug,
  name: displayName,
  active: z.boolean().default(true),
  members: z.array(email).default([]),
});

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

export const workspaceDocumentSchema = z.strictObject({
  /** Lets editors validate the file; ignored by import. */
  $schema: z.string().optional(),
  id: workspaceId,
  name: displayName,
  applications: z.array(applicationSchema).default([]),
  apis: z.array(apiSchema).default([]),
  api_grants: z.array(apiGrantSchema).default([]),
  roles: z.array(roleSchema).default([]),
  organizations: z.array(organizationSchema).default([]),
  users: z.array(userSchema).default([]),
});

/** A validated document with defaults applied (what import writes and export returns). */
export type WorkspaceDocument = z.output<typeof workspaceDocumentSchema>;
/** What a file may say: optional fields may be left out. */
export type WorkspaceDocumentInput = z.input<typeof workspaceDocumentSchema>;
export type ApplicationEntry = WorkspaceDocument["applications"][number];
export type UserEntry = WorkspaceDocument["users"][number];
export type UserRoleRef = UserEntry["roles"][number];

export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}

export function defaultIdentityScopes(type: ClientType): string[] {
  return type === "M2M" ? [] : ["openid"];
}

// ---------------------------------------------------------------------------------------------
// Validation

type PathSegment = PropertyKey;

export function jsonPath(segments: readonly PathSegment[]): string {
  let out = "$";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (typeof segment === "string" && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment)) out += `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

const article = (expected: string) => (/^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`);

/** Plain-English messages for zod's built-in issues; schema-level messages take precedence. */
const errorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      return `must be ${article(issue.expected)} (got ${describeType(issue.input)})`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "too_small":
      if (issue.origin === "string") return `must be at least ${issue.minimum} characters`;
      if (issue.origin === "array") return `must have at least ${issue.minimum} items`;
      return undefined;
    case "too_big":
      if (issue.origin === "string") return `must be at most ${issue.maximum} characters`;
      if (issue.origin === "array") return `must have at most ${issue.maximum} items`;
      return undefined;
    default:
      return undefined;
  }
};

function zodIssues(issues: readonly z.core.$ZodIssue[], base: readonly PathSegment[] = []): WorkspaceFileIssue[] {
  const out: WorkspaceFileIssue[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) out.push({ path: jsonPath([...path, key]), message: "is not a recognized field" });
    } else if (issue.code === "invalid_union") {
      // Report the branch that matched the value's shape instead of a bare "invalid input".
      const branch =
        issue.errors.find((errs) => !errs.some((e) => e.code === "invalid_type" && e.path.length === 0)) ?? null;
      if (branch) out.push(...zodIssues(branch, path));
      else out.push({ path: jsonPath(path), message: 'must be a role name or an object { "role", "organization" }' });
    } else {
      out.push({ path: jsonPath(path), message: issue.message });
    }
  }
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const asString = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Entries of `doc[key]` that are objects, with their index. */
function entries(doc: Record<string, unknown>, key: string): Array<[number, Record<string, unknown>]> {
  return asArray(doc[key]).flatMap((v, i) => (isRecord(v) ? [[i, v] as [number, Record<string, unknown>]] : []));
}

/**
 * Rules across fields and entities, run on the raw document so that problems are found even
 * where zod already rejected a neighbouring field: type-specific client rules, URI rules,
 * uniqueness of natural keys and references between entities.
 */
function crossCheck(doc: Record<string, unknown>): WorkspaceFileIssue[] {
  const issues: WorkspaceFileIssue[] = [];
  const add = (path: PathSegment[], message: string) => issues.push({ path: jsonPath(path), message });

  /** Reports repeated values in a list of strings. */
  const uniqueStrings = (list: unknown, path: PathSegment[], what: string, normalize = (s: string) => s) => {
    const seen = new Map<string, number>();
    asArray(list).forEach((value, k) => {
      if (typeof value !== "string") return;
      const key = normalize(value);
      const first = seen.get(key);
      if (first !== undefined) add([...path, k], `duplicate ${what} ${JSON.stringify(value)} (also at index ${first})`);
      else seen.set(key, k);
    });
  };

  /** Indexes entries by a natural key, reporting duplicates. */
  const index = (key: string, field: string, normalize = (s: string) => s) => {
    const map = new Map<string, Record<string, unknown>>();
    const firstIndex = new Map<string, number>();
    for (const [i, entry] of entries(doc, key)) {
      const raw = asString(entry[field]);
      if (raw === undefined) continue;
      const value = normalize(raw);
      const first = firstIndex.get(value);
      if (first !== undefined) {
        add([key, i, field], `duplicate ${field} ${JSON.stringify(raw)} (also at ${jsonPath([key, first])})`);
      } else {
        map.set(value, entry);
        firstIndex.set(value, i);
      }
    }
    return map;
  };

  // Applications
  const apps = index("applications", "client_id");
  for (const [i, app] of entries(doc, "applications")) {
    const at = (...rest: PathSegment[]) => ["applications", i, ...rest];
    const type = clientTypes.find((t) => t === app.type);
    const interactive = type === "PUBLIC" || type === "WEB_CONFIDENTIAL";
    for (const field of ["redirect_uris", "post_logout_redirect_uris"] as const) {
      const list = app[field];
      if (type === "M2M") {
        if (asArray(list).length > 0) {
          add(at(field), "M2M clients cannot have redirect URIs (they do not use the authorize endpoint or logout)");
        }
        continue;
      }
      asArray(list).forEach((uri, k) => {
        if (typeof uri !== "string") return;
        const problem = redirectUriProblem(uri, type === undefined || type === "PUBLIC");
        if (problem) add(at(field, k), problem);
      });
      uniqueStrings(list, at(field), "URI");
    }
    if (type && type !== "PUBLIC" && asArray(app.allowed_origins).length > 0) {
      add(at("allowed_origins"), "only PUBLIC clients have allowed browser origins (confidential clients never call from a browser)");
    }
    uniqueStrings(app.allowed_origins, at("allowed_origins"), "origin");
    const scopes = app.identity_scopes;
    if (Array.isArray(scopes)) {
      if (type === "M2M" && scopes.length > 0) add(at("identity_scopes"), "M2M clients have no identity scopes; it must be empty");
      if (interactive && !scopes.includes("openid")) add(at("identity_scopes"), 'must include "openid" for interactive clients');
      uniqueStrings(scopes, at("identity_scopes"), "scope");
    }
    if (type === "M2M" && app.account_security === true) {
      add(at("account_security"), "M2M clients cannot offer the account-security portal");
    }
    if (type === "PUBLIC") {
      if (app.secret !== undefined) add(at("secret"), "PUBLIC clients have no secret");
      if (app.secret_lifetime_days !== undefined) add(at("secret_lifetime_days"), "PUBLIC clients have no secret");
    }
  }

  // APIs
  const apis = index("apis", "audience");
  for (const [i, api] of entries(doc, "apis")) uniqueStrings(api.permissions, ["apis", i, "permissions"], "permission");
  /** Checks that each permission of `list` is defined on the API of `aud`, if that API is known. */
  const permissionsOnApi = (aud: string | undefined, list: unknown, path: PathSegment[]) => {
    uniqueStrings(list, path, "permission");
    const api = aud === undefined ? undefined : apis.get(aud);
    if (!api || !Array.isArray(api.permissions)) return;
    const defined = new Set(api.permissions.filter((p): p is string => typeof p === "string"));
    asArray(list).forEach((p, k) => {
      if (typeof p === "string" && !defined.has(p) && !identityScopeSet.has(p)) {
        add([...path, k], `permission ${JSON.stringify(p)} is not defined on API ${JSON.stringify(aud)}`);
      }
    });
  };
  const audienceRef = (value: unknown, path: PathSegment[]): string | undefined => {
    const aud = asString(value);
    if (aud !== undefined && !apis.has(aud)) add(path, `unknown audience ${JSON.stringify(aud)} (not in apis)`);
    return aud;
  };

  // API grants
  const grantKeys = new Map<string, number>();
  for (const [i, grant] of entries(doc, "api_grants")) {
    const cid = asString(grant.client_id);
    if (cid !== undefined && !apps.has(cid)) add(["api_grants", i, "client_id"], `unknown client_id ${JSON.stringify(cid)} (not in applications)`);
    const aud = audienceRef(grant.audience, ["api_grants", i, "audience"]);
    if (cid !== undefined && aud !== undefined) {
      const key = JSON.stringify([cid, aud]);
      const first = grantKeys.get(key);
      if (first !== undefined) add(["api_grants", i], `duplicate grant of ${JSON.stringify(aud)} to ${JSON.stringify(cid)} (also at $.api_grants[${first}])`);
      else grantKeys.set(key, i);
    }
    permissionsOnApi(aud, grant.permissions, ["api_grants", i, "permissions"]);
  }

  // Roles
  const roles = index("roles", "name");
  for (const [i, role] of entries(doc, "roles")) {
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

  // Users (indexed before organizations, whose members refer to them)
  const users = index("users", "email", normalizeEmail);
  const orgs = index("organizations", "slug");
  const members = new Map<string, Set<string>>();
  for (const [i, org] of entries(doc, "organizations")) {
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

  for (const [i, user] of entries(doc, "users")) {
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

  return issues;
}

/**
 * Validates a parsed JSON value as a workspace document. Returns it with defaults applied, or
 * throws WorkspaceFileError listing every problem, sorted by path.
 */
export function validateWorkspaceDocument(input: unknown): WorkspaceDocument {
  if (!isRecord(input)) {
    throw new WorkspaceFileError([{ path: "$", message: `must be a JSON object (got ${describeType(input)})` }]);
  }
  const parsed = workspaceDocumentSchema.safeParse(input, { error: errorMap });
  const issues = [...(parsed.success ? [] : zodIssues(parsed.error.issues)), ...crossCheck(input)];
  if (issues.length > 0 || !parsed.success) {
    const unique = new Map<string, WorkspaceFileIssue>();
    for (const issue of issues) unique.set(`${issue.path}\u0000${issue.message}`, issue);
    throw new WorkspaceFileError([...unique.values()].sort((a, b) => comparePaths(a.path, b.path)));
  }
  return parsed.data;
}

/** Orders paths as they appear in the document: array indexes numerically. */
function comparePaths(a: string, b: string): number {
  const split = (p: string) => p.split(/(\d+)/).map((s, i) => (i % 2 ? Number(s) : s));
  const pa = split(a);
  const pb = split(b);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] === pb[i]) continue;
    if (typeof pa[i] === "number" && typeof pb[i] === "number") return (pa[i] as number) - (pb[i] as number);
    return String(pa[i]) < String(pb[i]) ? -1 : 1;
  }
  return pa.length - pb.length;
}
