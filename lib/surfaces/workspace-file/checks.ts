// What the cross-entity checks share: readers of the raw document and the helpers that record problems.
import type { WorkspaceFileIssue } from "./errors";
import { jsonPath, type PathSegment } from "./paths";

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const asString = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Entries of `doc[key]` that are objects, with their index. */
export function entries(doc: Record<string, unknown>, key: string): Array<[number, Record<string, unknown>]> {
  return asArray(doc[key]).flatMap((v, i) => (isRecord(v) ? [[i, v] as [number, Record<string, unknown>]] : []));
}

/** One run of the cross-entity checks over a raw document; each section adds its problems. */
export interface CrossCheck {
  doc: Record<string, unknown>;
  issues: WorkspaceFileIssue[];
  add(path: PathSegment[], message: string): void;
  /** Reports repeated values in a list of strings. */
  uniqueStrings(list: unknown, path: PathSegment[], what: string, normalize?: (s: string) => string): void;
  /** Indexes entries by a natural key, reporting duplicates. */
  index(key: string, field: string, normalize?: (s: string) => string): Map<string, Record<string, unknown>>;
}

export function startCrossCheck(doc: Record<string, unknown>): CrossCheck {
  const issues: WorkspaceFileIssue[] = [];
  const add = (path: PathSegment[], message: string) => issues.push({ path: jsonPath(path), message });

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

  return { doc, issues, add, uniqueStrings, index };
}
