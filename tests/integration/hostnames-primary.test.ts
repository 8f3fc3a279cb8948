/**
 * The primary hostname is one rule in two forms (lib/hostnames/primary.ts): the SQL condition every
 * statement uses and its JS twin for loaded rows. They agree on every hostname, marked primary or
 * not, verified or not; and what the endpoint context resolves from it (the RP ID shared under
 * related origins) follows the same rule.
 */
import { and, eq, like } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { workspaceHostnames } from "../../db/schema";
import { setRelatedOrigins } from "../../lib/hostnames/hostnames";
import { isPrimaryHostname, primaryHostname, primaryHostnameSql } from "../../lib/hostnames/primary";
import { contextFor } from "../../lib/server/router";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";

let h: Harness;
const COMBOS = [
  { primary: false, verified: false },
  { primary: false, verified: true },
  { primary: true, verified: false },
  { primary: true, verified: true },
];
const workspaceIds = COMBOS.map((c) => uniqueWorkspaceId(`primary-${c.primary ? "p" : "n"}${c.verified ? "v" : "u"}`));

beforeAll(async () => {
  h = await createHarness();
  const now = h.clock.now();
  for (const [i, combo] of COMBOS.entries()) {
    const ws = workspaceIds[i];
    await seed(h, { id: ws, name: ws });
    // One primary at most per workspace (a partial unique index): each combination in its own workspace, beside a verified non-primary one.
    await h.service.db.insert(workspaceHostnames).values([
      { id: `${ws}-a`, workspaceId: ws, hostname: `a.${ws}.test`, verificationToken: "t", verifiedAt: combo.verified ? now : null, primary: combo.primary, createdAt: now },
      { id: `${ws}-b`, workspaceId: ws, hostname: `b.${ws}.test`, verificationToken: "t", verifiedAt: now, primary: false, createdAt: now },
    ]);
    await setRelatedOrigins(h.service.db, { workspaceId: ws, on: true, now });
  }
});

describe("the primary hostname: one rule, in SQL and in JS", () => {
  it("the SQL form and isPrimaryHostname agree on every hostname: marked primary or not, verified or not", async () => {
    const judged = await h.service.db
      .select({ id: workspaceHostnames.id, primary: workspaceHostnames.primary, verifiedAt: workspaceHostnames.verifiedAt, sql: primaryHostnameSql() })
      .from(workspaceHostnames)
      .where(like(workspaceHostnames.workspaceId, "primary-%"));
    const ours = judged.filter((r) => workspaceIds.some((ws) => r.id.startsWith(ws)));
    expect(ours).toHaveLength(COMBOS.length * 2);
    for (const row of ours) expect([row.id, row.sql]).toEqual([row.id, isPrimaryHostname(row)]);
    // Both answers occur: only the verified hostname marked primary is primary.
    expect(ours.filter((r) => r.sql).map((r) => r.id)).toEqual([`${workspaceIds[3]}-a`]);
  });

  it("the workspace's primary hostname, and the RP ID its endpoints share, follow it", async () => {
    for (const [i, combo] of COMBOS.entries()) {
      const ws = workspaceIds[i];
      const [row] = await h.service.db.select().from(workspaceHostnames).where(and(eq(workspaceHostnames.workspaceId, ws), eq(workspaceHostnames.id, `${ws}-a`)));
      const expected = isPrimaryHostname(row) ? row.hostname : null;
      expect(combo.primary && combo.verified ? row.hostname : null).toBe(expected);
      expect(await primaryHostname(h.service.db, ws)).toBe(expected);
      // At a hostname of the workspace, the context resolves it (related origins are on); at the default host, never.
      expect(await contextFor(h.service, { id: ws, name: ws }, `b.${ws}.test`).relatedOriginsRpId()).toBe(expected);
      expect(await contextFor(h.service, { id: ws, name: ws }, null).relatedOriginsRpId()).toBeNull();
    }
  });
});
