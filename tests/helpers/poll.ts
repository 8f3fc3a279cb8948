import { setTimeout as sleep } from "node:timers/promises";

/** Polls `probe` until it holds; false if it never does within `withinMs`. */
export async function becomes(probe: () => Promise<boolean>, withinMs = 2_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > deadline) return false;
    await sleep(10);
  }
}
