// JSON paths of a workspace file's problems (lib/surfaces/workspace-file/paths.ts, where every section reaches them).
export * from "../../surfaces/workspace-file/paths";
