/**
 * Every feature's descriptor (lib/surfaces/feature.ts), once: the surfaces (the console's
 * operations, the purger, …) read this list and never name a feature. A new feature is one line.
 */
import { OPERATORS_FEATURE } from "../operators";
import type { Feature } from "../surfaces/feature";

export const FEATURES: readonly Feature[] = [OPERATORS_FEATURE];
