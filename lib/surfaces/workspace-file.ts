/**
 * A feature's section of the workspace file (docs/workspace-file.md), declared in the feature's
 * folder and read by lib/workspaces, which builds the document's schema, its validation, its
 * import steps and its export from every section (lib/features/registry.ts `FEATURES`) besides its
 * own. A section owns one or more top-level keys of the document:
 *
 * - `shape`: their zod schemas, defaults included (what a file may leave out), in document order;
 * - `check`: its rules across entries on the raw document (uniqueness, references), reported with
 *   JSON paths beside zod's problems;
 * - `import`: its step, written within the import's one transaction, after the section named
 *   `after` (whose rows it may refer to); it counts `changes` and refuses with WorkspaceFileError;
 * - `export`: its keys as the workspace holds them, so that exporting and importing again changes
 *   nothing. A section's keys sit in the document right after `after`'s.
 *
 * What a section needs of the file (the import context, the error and its JSON paths, the
 * cross-entry check helpers) is in ./workspace-file/, so a feature never imports lib/workspaces.
 */
import type { z } from "zod";
import type { Database } from "../../db/client";
import type { CrossCheck } from "./workspace-file/checks";
import type { ImportContext } from "./workspace-file/context";

export type { CrossCheck } from "./workspace-file/checks";
export type { ImportContext } from "./workspace-file/context";
export { WorkspaceFileError, type WorkspaceFileIssue } from "./workspace-file/errors";
export { jsonPath, type PathSegment } from "./workspace-file/paths";
export { asArray, asString, entries, isRecord } from "./workspace-file/checks";

/** The document's part a section owns, as validated (defaults applied): what its import reads and its export returns. */
export type SectionValue<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>;

export interface WorkspaceSection<S extends z.ZodRawShape = z.ZodRawShape> {
  /** The section's name, which a later section's `after` names (a section of lib/workspaces is named by its key). */
  name: string;
  /** Its top-level keys and their schemas, in document order. */
  shape: S;
  /** The section it follows, in the document and in the import. */
  after: string;
  /** Its rules across entries, on the raw document (problems are sorted by path with the others). */
  check?: (c: CrossCheck) => void;
  /** Writes its part of the validated document within the import's transaction. */
  import(ctx: ImportContext<SectionValue<S>>): Promise<void>;
  /** Its part of the document for an existing workspace. */
  export(db: Database, workspaceId: string): Promise<SectionValue<S>>;
}

/** A section as the registries hold it, whatever its keys. */
export type AnyWorkspaceSection = WorkspaceSection<any>;

export const defineWorkspaceSection = <S extends z.ZodRawShape>(section: WorkspaceSection<S>): WorkspaceSection<S> => section;

/**
 * The parts of lib/workspaces' own sections (`[name, part]`, in document order) with each declared
 * section's part placed right after the one it names (`after`), sections naming the same one in
 * the order given. Throws when a section follows one that does not exist: a section is never left
 * out of the file unnoticed.
 */
export function inSectionOrder<T>(own: ReadonlyArray<readonly [string, T]>, sections: readonly AnyWorkspaceSection[], part: (section: AnyWorkspaceSection) => T): T[] {
  const placed: Array<readonly [string, T]> = [...own];
  let pending = [...sections];
  while (pending.length > 0) {
    const next = pending.filter((s) => {
      const at = placed.findLastIndex(([name]) => name === s.after);
      if (at === -1) return true;
      // After the named section and any placed after it already, so sections keep their given order.
      let end = at + 1;
      while (end < placed.length && sections.some((t) => t.name === placed[end][0] && t.after === s.after)) end++;
      placed.splice(end, 0, [s.name, part(s)]);
      return false;
    });
    if (next.length === pending.length) throw new Error(`workspace file: section ${next[0].name} follows ${next[0].after}, which no section is`);
    pending = next;
  }
  return placed.map(([, value]) => value);
}
