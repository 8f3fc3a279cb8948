export interface FeatureSpreadEntry {
  name: string;
  homes: string[];
  /** The files outside the homes whose code names the feature. */
  outside: string[];
  count: number;
  /** The same count with comments. */
  withComments: number;
}
export declare const FEATURE_SPREAD: { name: string; pattern: RegExp; homes: string[] }[];
export declare function sourceFiles(root?: string): string[];
export declare function codeOf(text: string): string;
export declare function featureSpread(root?: string): FeatureSpreadEntry[];
