export interface FeatureSpreadEntry {
  name: string;
  homes: string[];
  /** The files outside the homes whose code names the feature. */
  outside: string[];
  count: number;
  /** The same count with comments. */
  withComments: number;
}
export const FEATURE_SPREAD: { name: string; pattern: RegExp; homes: string[] }[];
export function sourceFiles(root?: string): string[];
export function codeOf(text: string): string;
export function featureSpread(root?: string): FeatureSpreadEntry[];
