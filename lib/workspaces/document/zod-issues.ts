// zod's issues as workspace-file problems: plain-English messages for built-in checks, JSON paths, union branches.
import type { z } from "zod";
import type { WorkspaceFileIssue } from "../../surfaces/workspace-file/errors";
import { jsonPath, type PathSegment } from "../../surfaces/workspace-file/paths";

export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

const article = (expected: string) => (/^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`);

/** Plain-English messages for zod's built-in issues; schema-level messages take precedence. */
export const errorMap: z.core.$ZodErrorMap = (issue) => {
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

export function zodIssues(issues: readonly z.core.$ZodIssue[], base: readonly PathSegment[] = []): WorkspaceFileIssue[] {
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
