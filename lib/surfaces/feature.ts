/**
 * A feature's descriptor: every surface it has, declared in its own folder and read by the
 * registries (lib/features/registry.ts), so that the console, the workspace file, the purger, the route
 * table, the fuzzer and the metrics never name a feature. Every part is optional: a feature
 * declares the surfaces it has.
 */
import type { AnyOperation } from "./operation";
import type { Retention } from "./retention";
import type { AnyWorkspaceSection } from "./workspace-file";

export interface Feature {
  /** The feature's name, kebab-case, as its folder is named. */
  name: string;
  /** Its console operations by name (run by lib/console's runOperation). */
  operations?: Readonly<Record<string, AnyOperation>>;
  /** Its short-lived rows and how long each is kept past its expiry. */
  retention?: readonly Retention[];
  /** Its section of the workspace file: keys, schema, checks, import step and export (./workspace-file.ts). */
  workspaceFile?: AnyWorkspaceSection;
}

export const defineFeature = <F extends Feature>(f: F): F => f;
