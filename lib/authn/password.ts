import { availableParallelism } from "node:os";
import { hash, verify } from "@node-rs/argon2";

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
const MAX_CONCURRENT_HASHES = Math.max(1, availableParallelism() - 1);

// Process-wide: the custom server and Next's route bundles each load their own copy of this module.
const KEY = Symbol.for("latchkey.argon2-slots");
const slots = ((globalThis as Record<symbol, unknown>)[KEY] ??= { running: 0, waiting: [] }) as { running: number; waiting: (() => void)[] };

async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (slots.running < MAX_CONCURRENT_HASHES) slots.running++;
  else await new Promise<void>((resolve) => slots.waiting.push(resolve)); // the slot is handed over
  try {
    return await work();
  } finally {
    const next = slots.waiting.shift();
    if (next) next();
    else slots.running--;
  }
}

export function hashPassword(password: string): Promise<string> {
  return limited(() => hash(password, OPTIONS));
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await limited(() => verify(stored, password));
  } catch {
    return false;
  }
}

// A real hash of a random value: verifying against it costs the same as a real account, so an
// unknown email and a wrong password take the same time and give the same answer.
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(crypto.randomUUID());
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
