import { availableParallelism } from "node:os";
import { hash, verify } from "@node-rs/argon2";
import { addressGroup } from "../http/client-address";
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
 * The wait is bounded, and shared fairly between client addresses, each counted under its group
 * (lib/http/client-address.ts `addressGroup`: an IPv4 address, or an IPv6 /64, whose addresses a
 * single subscriber can all send from):
 *
 * - one group has at most PER_ADDRESS_LIMIT password attempts in progress at once (a sign-in
 *   post takes its turn before anything else, PasswordTurn; a lone hash or verification takes it
 *   for itself), whatever the emails it types, known or not: the queue never looks at them. Four
 *   at once is far more than people behind one NAT sign in with at ~15 ms a hash;
 * - the groups take turns (start-time fair queueing): each piece of waiting work carries a turn
 *   number, the group's previous one plus one, or the turn being served now for a group with
 *   nothing in the queue; the lowest turn goes next, the earliest first among equals. A group
 *   that arrives while others have a backlog is served after at most one hash of each group
 *   ahead of it, so the backlogs hold up its sign-in by one hash each, not by their whole length;
 *   with one group flooding, it gets the next slot;
 * - at most QUEUE_LIMIT hashes wait in all (about a second of work at ~15 ms a hash). When the
 *   queue is full, the work that would be served last is refused: a newcomer served ahead of a
 *   backlog's last hash takes its place (that hash is refused), and only when every waiting hash
 *   would go before the newcomer is the newcomer refused. So however many groups flood, a group
 *   with nothing waiting is refused only when QUEUE_LIMIT other groups each have a hash waiting
 *   ahead of it.
 *
 * A refused attempt (PasswordWorkRefused) is answered "try again shortly" (429 with Retry-After)
 * by the caller, without checking or counting anything.
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

/** A piece of work waiting for a slot. */
interface Waiting {
  /** The address group it is for; "" is the server's own work. */
  lane: string;
  /** Its turn number: served lowest first. */
  turn: number;
  /** Arrival order, among equal turns. */
  seq: number;
  refusable: boolean;
  start(): void;
  refuse(error: PasswordWorkRefused): void;
}

interface Queue {
  running: number;
  waiting: Waiting[];
  /** The turn number of the work that last got a slot. */
  serving: number;
  /** Per group, the turn number of its latest work (running or waiting), while it is ahead of `serving`. */
  lastTurn: Map<string, number>;
  seq: number;
  /** Password attempts in progress per address group (PasswordTurn). */
  held: Map<string, number>;
  work: HashingWork;
}

// Process-wide: the custom server and Next's route bundles each load their own copy of this module.
const KEY = Symbol.for("latchkey.argon2-queue.v2");
const queue = ((globalThis as Record<symbol, unknown>)[KEY] ??= {
  running: 0,
  waiting: [],
  serving: 0,
  lastTurn: new Map(),
  seq: 0,
  held: new Map(),
  work: ARGON2,
} satisfies Queue) as Queue;

/** Replaces the argon2 functions (null: @node-rs/argon2's again). */
export function setHashingWork(work: HashingWork | null): void {
  queue.work = work ?? ARGON2;
}

/** How much work the queue holds: hashes running and waiting, and password attempts in progress per address group. */
export function hashingQueueState(): { running: number; waiting: number; held: Record<string, number> } {
  return { running: queue.running, waiting: queue.waiting.length, held: Object.fromEntries(queue.held) };
}

/**
 * One password attempt of a client address, in progress: taken before the attempt does anything
 * else, so a group past its share costs nothing but the refusal; released when it ends. Counted
 * per address group (`addressGroup`): every address of one IPv6 /64 together has one share.
 */
export class PasswordTurn {
  private released = false;
  private constructor(readonly group: string) {}

  /** The address's turn, or PasswordWorkRefused at once when its group has PER_ADDRESS_LIMIT attempts in progress. */
  static take(address: string): PasswordTurn {
    const group = addressGroup(address);
    const held = queue.held.get(group) ?? 0;
    if (held >= PER_ADDRESS_LIMIT) throw new PasswordWorkRefused();
    queue.held.set(group, held + 1);
    return new PasswordTurn(group);
  }

  /** Whether `address` could take a turn now (its group has fewer than PER_ADDRESS_LIMIT attempts in progress). */
  static available(address: string): boolean {
    return (queue.held.get(addressGroup(address)) ?? 0) < PER_ADDRESS_LIMIT;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    const left = (queue.held.get(this.group) ?? 1) - 1;
    if (left > 0) queue.held.set(this.group, left);
    else queue.held.delete(this.group);
  }
}

/** Who a hash is for: an attempt's turn, a client address (a turn of its own for this hash), or SERVER_WORK. */
export type HashingFor = PasswordTurn | string | null;

/** Takes the turn when needed (or refuses at once), waits for a slot, runs the work, hands the slot on. */
async function limited<T>(who: HashingFor, work: (w: HashingWork) => Promise<T>): Promise<T> {
  const turn = typeof who === "string" ? PasswordTurn.take(who) : who;
  try {
    return await inSlot(turn ? turn.group : "", turn !== null, work);
  } finally {
    if (turn !== who) turn?.release();
  }
}

/** Whether `a` is served before `b`. */
const before = (a: Pick<Waiting, "turn" | "seq">, b: Pick<Waiting, "turn" | "seq">) => a.turn < b.turn || (a.turn === b.turn && a.seq < b.seq);

async function inSlot<T>(lane: string, refusable: boolean, work: (w: HashingWork) => Promise<T>): Promise<T> {
  const previous = queue.lastTurn.get(lane);
  const turn = previous === undefined ? queue.serving : Math.max(queue.serving, previous + 1);
  if (queue.running < MAX_CONCURRENT_HASHES) {
    queue.running++;
    queue.lastTurn.set(lane, turn);
    queue.serving = Math.max(queue.serving, turn);
  } else {
    const seq = queue.seq++;
    if (refusable && queue.waiting.length >= QUEUE_LIMIT) {
      // Full: the refusable work that would be served last makes room, unless that is this one.
      let last: Waiting | null = null;
      for (const w of queue.waiting) if (w.refusable && (!last || before(last, w))) last = w;
      if (!last || before(last, { turn, seq })) throw new PasswordWorkRefused();
      queue.waiting.splice(queue.waiting.indexOf(last), 1);
      last.refuse(new PasswordWorkRefused());
    }
    queue.lastTurn.set(lane, turn);
    await new Promise<void>((start, refuse) => queue.waiting.push({ lane, turn, seq, refusable, start, refuse }));
    // The slot was handed over.
  }
  try {
    return await work(queue.work);
  } finally {
    handOver();
  }
}

/** Gives the freed slot to the waiting work with the lowest turn (the earliest among equals). */
function handOver(): void {
  if (queue.waiting.length === 0) {
    queue.running--;
    if (queue.running === 0) queue.lastTurn.clear();
    return;
  }
  let next = 0;
  for (let i = 1; i < queue.waiting.length; i++) if (before(queue.waiting[i], queue.waiting[next])) next = i;
  const [chosen] = queue.waiting.splice(next, 1);
  queue.serving = Math.max(queue.serving, chosen.turn);
  // A group whose latest work is behind the turn being served now starts afresh (at `serving`).
  for (const [lane, last] of queue.lastTurn) if (last < queue.serving) queue.lastTurn.delete(lane);
  chosen.start();
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

export { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "./password-rules";

export function isArgon2idHash(value: string): boolean {
  return /^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.test(value);
}
