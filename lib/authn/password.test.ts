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

  it("refuses a new address at once when the queue is full of other addresses' next hashes, but never the server's own", async () => {
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

  it("counts every address of one IPv6 /64 under one share; another /64 and IPv4-mapped addresses have their own", async () => {
    const work = heldWork();
    await occupySlots(work);
    const held = Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) => verifyPassword("hash:x", `p-${i}`, `2001:db8:1:2::${i + 1}`));
    await expect(verifyPassword("hash:x", "one more", "2001:db8:1:2:ffff:ffff:ffff:ffff")).rejects.toBeInstanceOf(PasswordWorkRefused);
    await expect(hashPassword("a new password", "2001:0db8:0001:0002::abcd%eth0")).rejects.toBeInstanceOf(PasswordWorkRefused);
    const others = [verifyPassword("hash:x", "next /64", "2001:db8:1:3::1"), verifyPassword("hash:x", "mapped", "::ffff:198.51.100.7")];
    await settle();
    expect(hashingQueueState().held).toEqual({ "2001:db8:1:2::/64": PER_ADDRESS_LIMIT, "2001:db8:1:3::/64": 1, "198.51.100.7": 1 });
    await work.releaseAll();
    await Promise.all([...held, ...others]);
  });

  it("serves another address next while 64 addresses of one /64 flood, each with its share in flight", async () => {
    const work = heldWork();
    const slots = await occupySlots(work);
    const flood: Promise<unknown>[] = [];
    let refused = 0;
    for (let a = 0; a < 64; a++) {
      for (let i = 0; i < PER_ADDRESS_LIMIT; i++) {
        flood.push(verifyPassword("hash:x", `flood-${a}-${i}`, `2001:db8:66:1::${a + 1}`).catch((error: unknown) => (error instanceof PasswordWorkRefused ? refused++ : Promise.reject(error))));
      }
    }
    await settle();
    // The /64 has one address's share in the queue; everything else of it was refused at once.
    expect(hashingQueueState()).toMatchObject({ waiting: PER_ADDRESS_LIMIT, held: { "2001:db8:66:1::/64": PER_ADDRESS_LIMIT } });
    expect(refused).toBe(64 * PER_ADDRESS_LIMIT - PER_ADDRESS_LIMIT);
    const victim = verifyPassword("hash:victim", "victim", "203.0.113.5");
    await settle();

    for (const slot of slots) await work.release(slot);
    const first = work.started[MAX_CONCURRENT_HASHES];
    expect(first).toMatch(/^flood-/);
    await work.release(first);
    // One of the flood's hashes (it arrived first), then the victim's: not the rest of the flood.
    expect(work.started.slice(MAX_CONCURRENT_HASHES, MAX_CONCURRENT_HASHES + 2)).toEqual([first, "victim"]);
    await work.releaseAll();
    expect(await victim).toBe(true);
    await Promise.all(flood);
  });

  it("makes room in a full queue for a new address: the last hash of a backlog is refused instead, and the newcomer waits one hash per address ahead", async () => {
    const work = heldWork();
    const slots = await occupySlots(work);
    const groups = QUEUE_LIMIT / PER_ADDRESS_LIMIT;
    const outcomes = new Map<string, Promise<string>>();
    for (let i = 0; i < PER_ADDRESS_LIMIT; i++) {
      for (let g = 0; g < groups; g++) {
        const name = `g${g}-${i}`;
        outcomes.set(name, verifyPassword("hash:x", name, `10.3.0.${g + 1}`).then(String, (error: unknown) => (error instanceof PasswordWorkRefused ? "refused" : Promise.reject(error))));
      }
    }
    await settle();
    expect(hashingQueueState().waiting).toBe(QUEUE_LIMIT);
    const newcomer = verifyPassword("hash:newcomer", "newcomer", "203.0.113.6");
    await settle();
    expect(hashingQueueState().waiting).toBe(QUEUE_LIMIT);
    // The work that would have been served last made room: the last group's last hash.
    expect(await outcomes.get(`g${groups - 1}-${PER_ADDRESS_LIMIT - 1}`)).toBe("refused");

    for (const slot of slots) await work.release(slot);
    while (!work.started.includes("newcomer")) await work.release(work.started.at(-1)!);
    // Served after the first hash of each group that was waiting before it, none of their backlogs.
    expect(work.started.slice(MAX_CONCURRENT_HASHES)).toEqual([...Array.from({ length: groups }, (_, g) => `g${g}-0`), "newcomer"]);
    await work.releaseAll();
    expect(await newcomer).toBe(true);
    const results = await Promise.all(outcomes.values());
    expect(results.filter((r) => r === "refused")).toHaveLength(1);
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
