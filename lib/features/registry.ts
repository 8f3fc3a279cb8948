/**
 * Every feature's descriptor (lib/surfaces/feature.ts), once: the surfaces (the console's
 * operations, the workspace file, the purger, …) read this list and never name a feature. A new
 * feature is one line. The list keeps each descriptor's own type (`as const`), so that what the
 * surfaces build from it (the console's `operations`, the workspace document's type) stays precise.
 */
import { HOSTNAMES_FEATURE } from "../hostnames";
import type { Feature } from "../surfaces/feature";

export const FEATURES = [HOSTNAMES_FEATURE] as const satisfies readonly Feature[];

/** The features' operations, each feature's by name, as one object type (what lib/console's table spreads). */
export type FeatureOperations = UnionToIntersection<
  { [K in keyof typeof FEATURES]: (typeof FEATURES)[K] extends { operations: infer O } ? O : never }[number]
>;

/** The features' workspace-file sections, in the order listed (lib/workspaces places each after the one it names). */
export const WORKSPACE_SECTIONS = FEATURES.flatMap((f: Feature) => (f.workspaceFile ? [f.workspaceFile] : []));

/** The document keys the features' sections add, with their schemas, as one shape type (lib/workspaces' document type). */
export type FeatureDocumentShape = UnionToIntersection<
  { [K in keyof typeof FEATURES]: (typeof FEATURES)[K] extends { workspaceFile: { shape: infer S } } ? S : never }[number]
>;

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** Every feature's console operations in one object (lib/console's table adds the console's own); a name declared twice fails at load. */
export const FEATURE_OPERATIONS = Object.fromEntries(
  FEATURES.flatMap((f: Feature) => Object.entries(f.operations ?? {})).map(([name, op], i, all) => {
    if (all.findIndex(([other]) => other === name) !== i) throw new Error(`console operation ${name} is declared by two features`);
    return [name, op];
  }),
) as FeatureOperations;
