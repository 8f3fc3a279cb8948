/** Types of ./server-command.mjs, for the TypeScript tests that start the compiled server. */
export declare const DEFAULT_HEAP_MIB: number;
export declare const SERVER_ENTRY: string;
export declare function serverNodeArgs(env?: Record<string, string | undefined>): string[];
