import type { clients } from "../../db/schema";
import type { Service } from "../service";

/**
 * What a successful HTTP Basic authentication established: this client_id with this secret (by
 * its SHA-256) is this client row and this secret row. That mapping never changes (a secret's
 * hash is fixed, and so is the client a client_id names); only liveness does, and every user of
 * an entry re-checks liveness in SQL in the statement it runs anyway.
 */
export interface RecalledCredential {
  client: typeof clients.$inferSelect;
  secretId: string;
  /** The secret's last use as last read or written by this process (informational). */
  lastUsedAt: Date | null;
}

interface Entry {
  value: RecalledCredential;
  expiresAt: number;
}

export const CREDENTIAL_MEMO_MAX_ENTRIES = 10_000;
export const CREDENTIAL_MEMO_TTL_MS = 5 * 60_000;

/** Bounded in size (least recently used out first) and in age (from the authentication that filled it). */
export class CredentialMemo {
  private entries = new Map<string, Entry>();

  constructor(
    private readonly maxEntries = CREDENTIAL_MEMO_MAX_ENTRIES,
    private readonly ttlMs = CREDENTIAL_MEMO_TTL_MS,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string, now: Date): RecalledCredential | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= now.getTime()) return undefined;
    // Re-inserted so that Map order is recency order.
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: RecalledCredential, now: Date): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: now.getTime() + this.ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

/** The key: workspace, client_id and secret hash, length-prefixed so no two triples collide. */
export function credentialKey(workspaceId: string, clientId: string, secretHash: string): string {
  return `${secretHash}:${workspaceId.length}:${workspaceId}:${clientId}`;
}

// One memo per service (per process in production); separate services, as in tests, never share one.
const memos = new WeakMap<Service, CredentialMemo>();

export function credentialMemo(service: Service): CredentialMemo {
  let memo = memos.get(service);
  if (!memo) {
    memo = new CredentialMemo();
    memos.set(service, memo);
  }
  return memo;
}
