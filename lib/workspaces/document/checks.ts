// What the cross-entity checks share (lib/surfaces/workspace-file/checks.ts, where every section reaches it).
export * from "../../surfaces/workspace-file/checks";
