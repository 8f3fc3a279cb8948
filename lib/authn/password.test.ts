import { afterEach, describe, expect, it } from "vitest";
import {
  hashingQueueState,
  hashPassword,
  MAX_CONCURRENT_HASHES,
  PasswordWorkRefused,
  PER_ADDRESS_LIMIT,
  QUEUE_LIMIT,
  SERVER_WORK,
  setHashingWork,
  verifyPassword,
} from "./password";

interface Held {
  started: string[];
  release(password: string): Promise<void>;
  releaseAll(): Promise<void>;
}
let active: Held | null = null;

/** Work that starts when the queue admits it and ends when the test releases it; named by its password. */
function heldWork(): Held {
  const started: string[] = [];
  const pending = new Map<string, () => void>();
  setHashingWork({
    hash: (password) =>
      new Promise((resolve) => {
        started.push(password);
        pending.set(password, () => resolve(`hash:${password}`));
      }),
    verify: (stored, password) =>
      new Promise((resolve) => {
        started.push(password);
        pending.set(password, () => resolve(stored === `hash:${password}`));
      }),
  });
  active = {
    started,
    async release(password: string) {
      const go = pending.get(password);
      if (!go) throw new Error(`${password} has not started`);
      pending.delete(password);
      go();
      await settle();
    },
    async releaseAll() {
      while (pending.size > 0) for (const password of [...pending.keys()]) await this.release(password);
    },
  };
  return active;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Occupies every running slot with the server's own work: everything after this waits. */
async function occupySlots(work: Held): Promise<string[]> {
  const names = Array.from({ length: MAX_CONCURRENT_HASHES }, (_, i) => `slot-${i}`);
  for (const name of names) void hashPassword(name, SERVER_WORK);
  await settle();
  expect(hashingQueueState().running).toBe(MAX_CONCURRENT_HASHES);
  return names;
}

afterEach(async () => {
  await active?.releaseAll();
  active = null;
  setHashingWork(null);
  expect(hashingQueueState()).toEqual({ running: 0, waiting: 0, held: {} });
});

describe("the password-hashing queue", () => {
  it("takes turns between addresses: another address is served ahead of one address's backlog", async () => {
    const work = heldWork();
    const slots = await occupySlots(work);
    const results: Promise<boolean>[] = [];
    for (let i = 0; i < PER_ADDRESS_LIMIT; i++) results.push(verifyPassword("hash:x", `a-${i}`, "198.51.100.1"));
    await settle();
    results.push(verifyPassword("hash:b-0", "b-0", "198.51.100.2"));
    await settle();
    expect(hashingQueueState()).toMatchObject({ waiting: PER_ADDRESS_LIMIT + 1, held: { "198.51.100.1": PER_ADDRESS_LIMIT, "198.51.100.2": 1 } });

    await work.release(slots[0]);
    await work.release("a-0");
    // The second address's one verification runs before the rest of the first address's backlog.
    expect(work.started.slice(MAX_CONCURRENT_HASHES)).toEqual(["a-0", "b-0"]);
    await work.releaseAll();
    expect(work.started.slice(MAX_CONCURRENT_HASHES)).toEqual(["a-0", "b-0", ...Array.from({ length: PER_ADDRESS_LIMIT - 1 }, (_, i) => `a-${i + 1}`)]);
    expect(await Promise.all(results)).toEqual([...Array(PER_ADDRESS_LIMIT).fill(false), true]);
  });

  it("refuses an address's work at once past its share, whatever the password is for; other addresses still get in", async () => {
    const work = heldWork();
    await occupySlots(work);
    const held = Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) => verifyPassword("hash:x", `a-${i}`, "198.51.100.1"));
    await expect(verifyPassword("hash:x", "one more", "198.51.100.1")).rejects.toBeInstanceOf(PasswordWorkRefused);
    await expect(hashPassword("a new password", "198.51.100.1")).rejects.toBeInstanceOf(PasswordWorkRefused);
    const other = verifyPassword("hash:b", "b", "198.51.100.2");
    await settle();
    expect(hashingQueueState().held).toEqual({ "198.51.100.1": PER_ADDRESS_LIMIT, "198.51.100.2": 1 });
    await work.releaseAll();
    expect(await Promise.all(held)).toEqual(Array(PER_ADDRESS_LIMIT).fill(false));
    expect(await other).toBe(true);
  });

  it("refuses anyone's work at once when the queue is full, but never the server's own", async () => {
    const work = heldWork();
    await occupySlots(work);
    const waiting: Promise<boolean>[] = [];
    for (let i = 0; waiting.length < QUEUE_LIMIT; i++) waiting.push(verifyPassword("hash:x", `w-${i}`, `10.1.${Math.floor(i / 4)}.${i % 4}`));
    await settle();
    expect(hashingQueueState().waiting).toBe(QUEUE_LIMIT);
    const refused = await verifyPassword("hash:x", "late", "203.0.113.9").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PasswordWorkRefused);
    expect((refused as PasswordWorkRefused).retryAfterSeconds).toBeGreaterThan(0);
    const own = hashPassword("an import", SERVER_WORK);
    await settle();
    expect(hashingQueueState().waiting).toBe(QUEUE_LIMIT + 1);
    await work.releaseAll();
    await Promise.all(waiting);
    expect(await own).toBe("hash:an import");
  });

  it("runs at most its slots at once; a refusal takes no slot", async () => {
    const work = heldWork();
    await occupySlots(work);
    const held = Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) => hashPassword(`a-${i}`, "198.51.100.1"));
    await expect(hashPassword("refused", "198.51.100.1")).rejects.toBeInstanceOf(PasswordWorkRefused);
    await settle();
    expect(hashingQueueState()).toMatchObject({ running: MAX_CONCURRENT_HASHES, waiting: PER_ADDRESS_LIMIT });
    await work.releaseAll();
    await Promise.all(held);
  });
});

describe("argon2id", () => {
  it("verifies what it hashed, and calls a stored value that is no hash a mismatch", async () => {
    const stored = await hashPassword("correct horse battery staple", "198.51.100.1");
    expect(await verifyPassword(stored, "correct horse battery staple", "198.51.100.1")).toBe(true);
    expect(await verifyPassword(stored, "wrong", "198.51.100.1")).toBe(false);
    expect(await verifyPassword("not a hash", "anything")).toBe(false);
  });
});
