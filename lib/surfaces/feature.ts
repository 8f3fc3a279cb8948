/**
 * A feature's descriptor: every surface it has, declared in its own folder and read by the
 * registries (lib/features/registry.ts), so that the console, the workspace file, the purger, the route
 * table, the fuzzer and the metrics never name a feature. Every part is optional: a feature
 * declares the surfaces it has.
 */
import type { GuessingLimits } from "../limits/declarations";
import type { ApplicationOption } from "./application-options";
import type { AnyOperation } from "./operation";
import type { Retention } from "./retention";
import type { FeatureRoutes } from "./routes";
import type { Service } from "../service";
import type { AnyWorkspaceSection } from "./workspace-file";

/** A feature's page in a workspace's console (`/console/w/{workspace}` + `path`), listed in its side navigation. */
export interface ConsolePage {
  /** Below the workspace's console: `/hostnames`. */
  path: `/${string}`;
  /** Its entry in the side navigation. */
  label: string;
  /** The path of the console's entry it is listed after (`""`: the overview). */
  after: string;
}

/**
 * The addresses a workspace answers at as an issuer, for a feature that gives it some besides the
 * default host's: the one the console shows as the issuer, and the others.
 */
export interface WorkspaceIssuers {
  primary: string;
  others: string[];
}

export interface Feature {
  /** The feature's name, kebab-case, as its folder is named. */
  name: string;
  /** Its console operations by name (run by lib/console's runOperation). */
  operations?: Readonly<Record<string, AnyOperation>>;
  /** Its short-lived rows and how long each is kept past its expiry. */
  retention?: readonly Retention[];
  /** Its section of the workspace file: keys, schema, checks, import step and export (./workspace-file.ts). */
  workspaceFile?: AnyWorkspaceSection;
  /**
   * Its routes (./routes.ts): the same lean value the route registry (lib/features/routes.ts)
   * lists, which the route table reads without loading this descriptor.
   */
  routes?: FeatureRoutes;
  /**
   * Its guessing and counting limits enforced outside the route table (a number of sends per
   * organization): docs/security.md's table of limits lists them (lib/server/limits.ts).
   */
  guessingLimits?: readonly GuessingLimits[];
  /** Its page in a workspace's console, in the side navigation (lib/console/navigation.ts). */
  consolePage?: ConsolePage;
  /** The protocol options it lets an application switch on (./application-options.ts): the workspace file's and the console's. */
  applicationOptions?: readonly ApplicationOption[];
  /**
   * The issuers the workspace answers as, for a feature that gives it addresses of its own (one
   * feature at most): the console shows them (lib/console/issuers.ts), linking to the feature's page.
   */
  issuers?: (service: Service, workspaceId: string) => Promise<WorkspaceIssuers>;
}

export const defineFeature = <F extends Feature>(f: F): F => f;

/**
 * The one declaration of a surface only one feature may own (how a host resolves to a workspace,
 * a workspace's issuers): undefined when none declares it; at load, an error naming `what` when
 * two do.
 */
export function declaredOnce<T>(declarations: readonly (T | undefined)[], what: string): T | undefined {
  const declared = declarations.filter((d): d is T => d !== undefined);
  if (declared.length > 1) throw new Error(`two features declare ${what}`);
  return declared[0];
}
