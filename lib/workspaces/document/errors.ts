// The error a workspace file is refused with (the rule is lib/surfaces/workspace-file/errors.ts, where every section reaches it).
export * from "../../surfaces/workspace-file/errors";
