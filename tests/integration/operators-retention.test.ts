/**
 * The operators' retention (lib/operators `INVITATION_RETENTION`), read as lib/surfaces/retention.ts
 * defines a declaration (`expiresAt` more than `grace` in the past, and `where`): the declarations
 * together select the invitations accepted, revoked or expired 30 days ago, and keep pending ones
 * and those that ended since (the rule token-purge.test.ts holds the purge to).
 */
import { and, eq, lt, or } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { operatorInvitations } from "../../db/schema";
import { DAY, MINUTE } from "../../lib/clock";
import { ENDED_INVITATION_RETENTION_MS, INVITATION_RETENTION, OPERATORS_FEATURE } from "../../lib/operators";
import { FEATURES } from "../../lib/features/registry";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { standardWorkspace } from "../helpers/fixtures";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});

describe("operator invitations' retention declarations", () => {
  it("are the feature's, registered, and select exactly the invitations over for 30 days", async () => {
    expect(FEATURES).toContain(OPERATORS_FEATURE);
    expect(OPERATORS_FEATURE.retention).toBe(INVITATION_RETENTION);
    expect(ENDED_INVITATION_RETENTION_MS).toBe(30 * DAY);
    const ws = uniqueWorkspaceId("operators-retention");
    await seed(h, standardWorkspace(ws));
    const ago = (ms: number) => new Date(h.clock.now().getTime() - ms);
    const over = ENDED_INVITATION_RETENTION_MS + 1;
    const recently = ENDED_INVITATION_RETENTION_MS - MINUTE;
    const later = new Date(h.clock.now().getTime() + 7 * DAY);
    const invitation = (id: string, ended: { expiresAt: Date; acceptedAt?: Date; revokedAt?: Date }) => ({
      id: `${id}-${ws}`, workspaceId: ws, email: `${id}@example.test`, emailNormalized: `${id}@example.test`, role: "viewer" as const,
      tokenHash: `${id}-${ws}`, createdAt: ago(ENDED_INVITATION_RETENTION_MS * 2), acceptedAt: null, revokedAt: null, ...ended,
    });
    await h.service.db.insert(operatorInvitations).values([
      invitation("accepted-old", { expiresAt: later, acceptedAt: ago(over) }),
      invitation("revoked-old", { expiresAt: later, revokedAt: ago(over) }),
      invitation("expired-old", { expiresAt: ago(over) }),
      invitation("accepted-recent", { expiresAt: later, acceptedAt: ago(recently) }),
      invitation("revoked-recent", { expiresAt: later, revokedAt: ago(recently) }),
      invitation("expired-recent", { expiresAt: ago(recently) }),
      invitation("pending", { expiresAt: later }),
    ]);
    const now = h.clock.now();
    const selected = or(...INVITATION_RETENTION.map((r) => and(lt(r.expiresAt, new Date(now.getTime() - r.grace)), r.where?.(now))));
    const rows = await h.service.db
      .select({ id: operatorInvitations.id })
      .from(operatorInvitations)
      .where(and(eq(operatorInvitations.workspaceId, ws), selected));
    expect(rows.map((r) => r.id.replace(`-${ws}`, "")).sort()).toEqual(["accepted-old", "expired-old", "revoked-old"]);
  });
});
