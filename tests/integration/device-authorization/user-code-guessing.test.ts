/**
 * Guessing user codes on the device page is bounded (lib/oauth/device-authorization/limits.ts
 * USER_CODE_LIMITS): per client address, and per workspace from every address together. Once a
 * limit is reached nothing is looked up: even the right code is refused, and binds nothing.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { MINUTE } from "../../../lib/clock";
import { createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { deviceWorkspace, enterCode, poll, rowOf, startDevice, errorOf } from "./device-helpers";
import { deviceAuthorizations } from "../../../db/schema";
import { eq } from "drizzle-orm";
import { sha256Hex } from "../../../lib/crypto";

let h: Harness;

// RATE_LIMIT_FAILURES = 3: 3 wrong codes per address per 5 minutes, 30 per workspace per hour.
beforeAll(async () => {
  h = await createHarness({ trustProxy: true, rateLimits: { requestsPerMinute: 100_000, failuresPer5Minutes: 3 } });
});

const errorAt = (res: Response) => new URL(res.headers.get("location")!, PUBLIC_URL).searchParams.get("error");
const from = (address: string) => ({ "x-forwarded-for": address });
/** A well-formed code no authorization has (its letters are from the alphabet; the chance it is live is 2^-34). */
const WRONG = "BBBB-BBBB";

async function rowFor(deviceCode: string) {
  const [row] = await h.service.db.select().from(deviceAuthorizations).where(eq(deviceAuthorizations.deviceCodeHash, sha256Hex(deviceCode)));
  return rowOf(h, row.id);
}

describe("user-code guessing", () => {
  it("stops an address after RATE_LIMIT_FAILURES wrong codes: the right code is then refused too, and other addresses go on", async () => {
    const ws = uniqueWorkspaceId("device-guess");
    await seed(h, deviceWorkspace(ws));
    const grant = await startDevice(h, ws);
    for (let i = 0; i < 3; i++) expect(errorAt(await enterCode(h, ws, new Jar(), WRONG, from("203.0.113.7")))).toBe("invalid_code");
    const refused = await enterCode(h, ws, new Jar(), grant.user_code, from("203.0.113.7"));
    expect(errorAt(refused)).toBe("rate_limited");
    expect((await rowFor(grant.device_code)).browserBindingHash).toBeNull();
    const elsewhere = await enterCode(h, ws, new Jar(), grant.user_code, from("198.51.100.9"));
    expect(errorAt(elsewhere)).toBeNull();
    expect((await rowFor(grant.device_code)).browserBindingHash).not.toBeNull();
    expect(await errorOf(await poll(h, ws, grant.device_code))).toBe("authorization_pending");
  });

  it("counts a right code as no failure", async () => {
    const ws = uniqueWorkspaceId("device-guess");
    await seed(h, deviceWorkspace(ws));
    for (let i = 0; i < 4; i++) {
      const grant = await startDevice(h, ws);
      expect(errorAt(await enterCode(h, ws, new Jar(), grant.user_code, from("203.0.113.8")))).toBeNull();
    }
  });

  it("stops the whole workspace after 10 × RATE_LIMIT_FAILURES wrong codes an hour from all addresses together, and only that workspace", async () => {
    const ws = uniqueWorkspaceId("device-guess");
    const other = uniqueWorkspaceId("device-guess");
    await seed(h, deviceWorkspace(ws));
    await seed(h, deviceWorkspace(other));
    const grant = await startDevice(h, ws);
    // 30 wrong codes from 15 addresses, 2 each (under the per-address limit).
    for (let a = 0; a < 15; a++) for (let i = 0; i < 2; i++) expect(errorAt(await enterCode(h, ws, new Jar(), WRONG, from(`192.0.2.${a + 1}`)))).toBe("invalid_code");
    expect(errorAt(await enterCode(h, ws, new Jar(), grant.user_code, from("192.0.2.200")))).toBe("rate_limited");
    const otherGrant = await startDevice(h, other);
    expect(errorAt(await enterCode(h, other, new Jar(), otherGrant.user_code, from("192.0.2.200")))).toBeNull();
    // The limit is per hour: after it, the right code is taken again.
    h.clock.advance(61 * MINUTE);
    const fresh = await startDevice(h, ws);
    expect(errorAt(await enterCode(h, ws, new Jar(), fresh.user_code, from("192.0.2.201")))).toBeNull();
  });
});
