// The error validation throws: every problem of a workspace file, each with its JSON path.

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
