import { availableParallelism } from "node:os";
import { hash, verify } from "@node-rs/argon2";
import { RuleError } from "../http/errors";

/**
 * argon2id at OWASP's parameters (m=19 MiB, t=2, p=1). @node-rs/argon2 hashes on libuv's thread
 * pool, so sign-ins never block the event loop that serves the machine-facing endpoints.
 */
const OPTIONS = { algorithm: 2 /* Argon2id */, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * Hashes running at once. libuv's pool has 4 threads: four CPU-bound hashes on a two-core
 * machine would leave the event loop a fifth of the CPU while logins run at full speed. One core
 * stays for the event loop (and the database); the other sign-ins wait their turn here.
 */
export const MAX_CONCURRENT_HASHES = Math.max(1, availableParallelism() - 1);

/**
 * The wait is bounded, and shared fairly between client addresses:
 *
 * - one address has at most PER_ADDRESS_LIMIT password attempts in progress at once (a sign-in
 *   post takes its turn before anything else, PasswordTurn; a lone hash or verification takes it
 *   for itself), whatever the emails it types, known or not: the queue never looks at them. Four
 *   at once is far more than people behind one NAT sign in with at ~15 ms a hash; it takes
 *   sixteen flooding addresses to fill the queue;
 * - at most QUEUE_LIMIT hashes wait in all (about a second of work at ~15 ms a hash);
 * - the waiting addresses take turns, one hash each, so a few addresses with a backlog hold up
 *   another address's sign-in by one hash each, not by their whole backlog.
 *
 * Past either bound the work is refused at once (PasswordWorkRefused): the caller answers "try
 * again shortly" (429 with Retry-After), without checking or counting anything.
 */
export const PER_ADDRESS_LIMIT = 4;
export const QUEUE_LIMIT = 64 * MAX_CONCURRENT_HASHES;
/** What a refusal asks the client to wait: the queue drains within about a second. */
export const RETRY_AFTER_SECONDS = 1;

/**
 * Hashing on the server's own account (a workspace import, an operator's form in the console, a
 * rehash after a successful sign-in): it waits its turn like an address but is never refused.
 */
export const SERVER_WORK = null;

export class PasswordWorkRefused extends RuleError {
  readonly retryAfterSeconds = RETRY_AFTER_SECONDS;
  constructor() {
    super("Too much password hashing is waiting; try again shortly");
    this.name = "PasswordWorkRefused";
  }
}

/** The argon2 functions the queue runs; replaceable (setHashingWork) so its order can be driven step by step. */
export interface HashingWork {
  hash(password: string): Promise<string>;
  verify(stored: string, password: string): Promise<boolean>;
}

const ARGON2: HashingWork = { hash: (password) => hash(password, OPTIONS), verify: (stored, password) => verify(stored, password) };

interface Queue {
  running: number;
  /** Waiting work per address (FIFO within an address); "" is the server's own work. */
  waiting: Map<string, (() => void)[]>;
  /** Addresses with waiting work, in the order of their next turn. */
  turns: string[];
  waitingCount: number;
  /** Password attempts in progress per address (PasswordTurn). */
  held: Map<string, number>;
  work: HashingWork;
}

// Process-wide: the custom server and Next's route bundles each load their own copy of this module.
const KEY = Symbol.for("latchkey.argon2-queue");
const queue = ((globalThis as Record<symbol, unknown>)[KEY] ??= {
  running: 0,
  waiting: new Map(),
  turns: [],
  waitingCount: 0,
  held: new Map(),
  work: ARGON2,
} satisfies Queue) as Queue;

/** Replaces the argon2 functions (null: @node-rs/argon2's again). */
export function setHashingWork(work: HashingWork | null): void {
  queue.work = work ?? ARGON2;
}

/** How much work the queue holds: hashes running and waiting, and password attempts in progress per address. */
export function hashingQueueState(): { running: number; waiting: number; held: Record<string, number> } {
  return { running: queue.running, waiting: queue.waitingCount, held: Object.fromEntries(queue.held) };
}

/**
 * One password attempt of a client address, in progress: taken before the attempt does anything
 * else, so an address past its share costs nothing but the refusal; released when it ends.
 */
export class PasswordTurn {
  private released = false;
  private constructor(readonly address: string) {}

  /** The address's turn, or PasswordWorkRefused at once when it has PER_ADDRESS_LIMIT attempts in progress. */
  static take(address: string): PasswordTurn {
    const held = queue.held.get(address) ?? 0;
    if (held >= PER_ADDRESS_LIMIT) throw new PasswordWorkRefused();
    queue.held.set(address, held + 1);
    return new PasswordTurn(address);
  }

  /** Whether `address` could take a turn now (it has fewer than PER_ADDRESS_LIMIT attempts in progress). */
  static available(address: string): boolean {
    return (queue.held.get(address) ?? 0) < PER_ADDRESS_LIMIT;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    const left = (queue.held.get(this.address) ?? 1) - 1;
    if (left > 0) queue.held.set(this.address, left);
    else queue.held.delete(this.address);
  }
}

/** Who a hash is for: an attempt's turn, a client address (a turn of its own for this hash), or SERVER_WORK. */
export type HashingFor = PasswordTurn | string | null;

/** Takes the turn when needed (or refuses at once), waits for a slot, runs the work, hands the slot on. */
async function limited<T>(who: HashingFor, work: (w: HashingWork) => Promise<T>): Promise<T> {
  const turn = typeof who === "string" ? PasswordTurn.take(who) : who;
  try {
    return await inSlot(turn ? turn.address : "", turn !== null, work);
  } finally {
    if (turn !== who) turn?.release();
  }
}

async function inSlot<T>(lane: string, refusable: boolean, work: (w: HashingWork) => Promise<T>): Promise<T> {
  if (queue.running < MAX_CONCURRENT_HASHES) queue.running++;
  else {
    if (refusable && queue.waitingCount >= QUEUE_LIMIT) throw new PasswordWorkRefused();
    await new Promise<void>((resolve) => {
      const own = queue.waiting.get(lane);
      if (own) own.push(resolve);
      else {
        queue.waiting.set(lane, [resolve]);
        queue.turns.push(lane);
      }
      queue.waitingCount++;
    }); // the slot is handed over
  }
  try {
    return await work(queue.work);
  } finally {
    handOver();
  }
}

/** Gives the freed slot to the address whose turn is next (one hash, then the back of the line). */
function handOver(): void {
  const lane = queue.turns.shift();
  if (lane === undefined) {
    queue.running--;
    return;
  }
  const own = queue.waiting.get(lane)!;
  const next = own.shift()!;
  if (own.length > 0) queue.turns.push(lane);
  else queue.waiting.delete(lane);
  queue.waitingCount--;
  next();
}

/** An argon2id hash of `password` (see HashingFor). Throws PasswordWorkRefused when the queue is full. */
export function hashPassword(password: string, who: HashingFor = SERVER_WORK): Promise<string> {
  return limited(who, (w) => w.hash(password));
}

/**
 * Whether `password` matches `stored` (see HashingFor); a stored value that is not a hash is a
 * mismatch. Throws PasswordWorkRefused when the queue is full.
 */
export function verifyPassword(stored: string, password: string, who: HashingFor = SERVER_WORK): Promise<boolean> {
  return limited(who, (w) => w.verify(stored, password).catch(() => false));
}

// A real hash of a random value: verifying against it costs the same as a real account, so an
// unknown email and a wrong password take the same time and give the same answer.
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(crypto.randomUUID()).catch((error: unknown) => {
    decoy = undefined;
    throw error;
  });
  return decoy;
}

/**
 * Whether a stored hash was made with other parameters than today's (or another algorithm): the
 * next successful sign-in stores a new hash, so a parameter change reaches every active account.
 */
export function needsRehash(stored: string): boolean {
  const m = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(stored);
  return !m || Number(m[1]) !== OPTIONS.memoryCost || Number(m[2]) !== OPTIONS.timeCost || Number(m[3]) !== OPTIONS.parallelism;
}

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;

export function isArgon2idHash(value: string): boolean {
  return /^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.test(value);
}
