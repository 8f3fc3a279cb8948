/** Types of ./node-version.mjs, for the TypeScript test of the README's start (tests/docs/readme.test.ts). */
export declare const MINIMUM_NODE: [number, number];
export declare function nodeVersionProblem(version: string): string | null;
