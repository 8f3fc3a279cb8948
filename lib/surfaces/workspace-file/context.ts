// What every import step shares: the options, the result, the import context (transaction, clock, ids so far) and row helpers.
import type { Database } from "../../../db/client";
import type { Clock } from "../../clock";

export interface ImportOptions {
  clock: Clock;
  /** The service master key: upstream client secrets are stored encrypted under it. */
  masterKey: Buffer;
  /**
   * Where `{ "env": NAME }` secret references are read (connections' and social providers'
   * client secrets); process.env when not given.
   */
  env?: Record<string, string | undefined>;
  /**
   * Generate a secret for each WEB_CONFIDENTIAL or M2M client that this import creates (or turns
   * from PUBLIC into a confidential type) without a preset `secret`. The secrets are returned
   * once in `generatedSecrets`; only their hashes are stored.
   */
  generateSecrets?: boolean;
  /** Who imported, for the audit log (console operator user id); null for the CLI. */
  actor?: string | null;
  /**
   * Also remove the members of a listed organization that the file does not list when the import
   * did not add them (added in the console, or by a first sign-in through a connection). Without
   * it they are kept and reported in `members.kept`.
   */
  pruneMembers?: boolean;
  /** Work out the import and report it, then roll it back: nothing is written (no secret is generated). */
  dryRun?: boolean;
}

/** A membership of a listed organization that the file does not list. */
export interface MembershipChange {
  /** The organization's slug. */
  organization: string;
  email: string;
  /** How it was created: `workspace_file`, `console` or `sign_in`. */
  origin: string;
}

export interface GeneratedSecret {
  clientId: string;
  secretId: string;
  secret: string;
  expiresAt: Date;
}

export interface ImportResult {
  workspaceId: string;
  /** The workspace did not exist before. */
  created: boolean;
  /** Rows inserted, updated or deleted; 0 when the database already matched the file. */
  changes: number;
  generatedSecrets?: GeneratedSecret[];
  /** Members the file does not list: removed (or, in a dry run, to be removed), and kept. */
  members: { removed: MembershipChange[]; kept: MembershipChange[] };
  /** The import was a dry run: nothing was written. */
  dryRun: boolean;
}

/** Primary keys of the entities written so far, by their natural key in the file. */
export interface ImportIds {
  /** By client_id. */
  clientPk: Map<string, string>;
  /** By API audience. */
  apiPk: Map<string, string>;
  /** By role name. */
  rolePk: Map<string, string>;
  /** By organization slug. */
  orgPk: Map<string, string>;
  /** By normalized email. */
  userPk: Map<string, string>;
  /** By social provider key. */
  socialPk: Map<string, string>;
}

/**
 * One import, as its steps see it. Steps run in order, each adding to `ids` and counting `changes`.
 * `D` is the document as the step reads it: a feature's section sees its own keys (lib/workspaces
 * passes the whole validated document).
 */
export interface ImportContext<D = Record<string, unknown>> {
  /** The import's transaction. */
  tx: Database;
  file: D;
  opts: ImportOptions;
  clock: Clock;
  /** The time of the import, written to every row it creates or updates. */
  now: Date;
  /** The workspace id (file.id). */
  wid: string;
  /** Password hashes to store, by normalized email (see resolvePasswordHashes). */
  passwordHashes: Map<string, string>;
  /** The values of the file's secret references, by environment variable name (see resolveSecretReferences). */
  secrets: Map<string, string>;
  ids: ImportIds;
  generated: GeneratedSecret[];
  members: ImportResult["members"];
  /** The workspace did not exist before (set by the workspace step). */
  created: boolean;
  changes: number;
}

/** One section of the workspace file, written within the import's transaction. */
export type ImportStep<D = Record<string, unknown>> = (ctx: ImportContext<D>) => Promise<void>;

const CHUNK = 1000;

export function chunks<T>(values: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += CHUNK) out.push(values.slice(i, i + CHUNK));
  return out;
}

/** JSON with object keys sorted: PostgreSQL's jsonb does not keep the order keys were written in. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** True when any field of `desired` differs from `existing` (arrays compared in order, objects (jsonb) by content). */
export function differs(existing: Record<string, unknown>, desired: Record<string, unknown>): boolean {
  return Object.entries(desired).some(([key, value]) => {
    const current = existing[key];
    if ((value && typeof value === "object") || (current && typeof current === "object")) return canonicalJson(current) !== canonicalJson(value);
    return current !== value;
  });
}
