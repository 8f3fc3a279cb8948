/**
 * A hashing queue driven step by step: the argon2 functions replaced by work that starts when the
 * queue admits it and ends when the test says (lib/authn/password.ts `setHashingWork`), with the
 * real argon2 result. Each piece of work is named by the password it hashes or verifies.
 */
import { hash, verify } from "@node-rs/argon2";
import { setHashingWork } from "../../lib/authn/password";

export interface HeldWork {
  /** The passwords whose work the queue started, in the order it started them. */
  started: string[];
  /** Ends the oldest started, unfinished work named `password` (the first started one when omitted). */
  release(password?: string): void;
  /** Ends every started work, now and from now on (still recording what starts). */
  releaseAll(): void;
  /** Resolves once `count` pieces of work have started. */
  startedCount(count: number): Promise<void>;
}

const OPTIONS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export function holdHashing(): HeldWork {
  const started: string[] = [];
  const pending: { password: string; go: () => void }[] = [];
  let free = false;
  const watchers: { count: number; resolve: () => void }[] = [];
  const begin = (password: string): Promise<void> => {
    started.push(password);
    for (const w of watchers.filter((w) => started.length >= w.count)) w.resolve();
    if (free) return Promise.resolve();
    return new Promise<void>((go) => pending.push({ password, go }));
  };
  setHashingWork({
    async hash(password) {
      await begin(password);
      return hash(password, OPTIONS);
    },
    async verify(stored, password) {
      await begin(password);
      return verify(stored, password);
    },
  });
  return {
    started,
    release(password) {
      const i = password === undefined ? 0 : pending.findIndex((p) => p.password === password);
      if (i < 0 || i >= pending.length) throw new Error(`no started work for ${password ?? "anyone"}`);
      pending.splice(i, 1)[0].go();
    },
    releaseAll() {
      free = true;
      for (const p of pending.splice(0)) p.go();
    },
    startedCount(count) {
      if (started.length >= count) return Promise.resolve();
      return new Promise((resolve) => watchers.push({ count, resolve }));
    },
  };
}

/** The real argon2 functions again. */
export function stopHolding(): void {
  setHashingWork(null);
}
