/** Types of ./architecture.mjs, for tests/docs/architecture.test.ts. */
export interface CruisedModule {
  source: string;
  dependencies: { resolved: string }[];
}
export interface Arrow {
  from: string;
  to: string;
}
export declare const PICTURE_BEGIN: string;
export declare const PICTURE_END: string;
export declare function loadConfig(root?: string): unknown;
export declare function readLayers(config: unknown): { layers: Map<string, string[]>; kernel: string[] };
export declare function cruise(root?: string): CruisedModule[];
export declare function usedArrows(
  modules: CruisedModule[],
  layout: { layers: Map<string, string[]>; kernel: string[] },
): { used: Map<string, Map<string, string>>; unlisted: string[] };
export declare function differences(
  layers: Map<string, string[]>,
  used: Map<string, Map<string, string>>,
): { unused: Arrow[]; missing: (Arrow & { witness: string })[]; upward: Arrow[] };
export declare function reduce(graph: Map<string, Iterable<string>>): Map<string, string[]>;
export declare function picture(layers: Map<string, string[]>, used: Map<string, Map<string, string>>): string;
export declare function pictureInPage(page: string): string | null;
