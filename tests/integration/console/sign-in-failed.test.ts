/** A failed password sign-in is recorded once (audit sign_in.failed) with the account and why; never the password or the typed address. */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, users } from "../../../db/schema";
import { ADA, SPA, standardWorkspace } from "../../helpers/fixtures";
import { createHarness, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";

let h: Harness;
const W = uniqueWorkspaceId("sfail");

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(W));
});

const failures = () => h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, "sign_in.failed"))).orderBy(auditEvents.createdAt);

describe("sign_in.failed", () => {
  it("records a wrong password against the account, an unknown address without one, and a success not at all", async () => {
    const ada = (await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, W), eq(users.emailNormalized, ADA.email))))[0].id;
    await expect(signIn(h, W, { ...SPA, email: ADA.email, password: "wrong password 123" })).rejects.toThrow();
    await expect(signIn(h, W, { ...SPA, email: "typo-secret-hunter2@example.test", password: "wrong password 123" })).rejects.toThrow();
    await signIn(h, W, { ...SPA, ...ADA });
    const rows = await failures();
    expect(rows.map((r) => [r.subject, r.reason, r.data.method])).toEqual([
      [ada, "wrong_password", "password"],
      [null, "unknown_account", "password"],
    ]);
    expect(JSON.stringify(rows)).not.toContain("wrong password 123");
    expect(JSON.stringify(rows)).not.toContain("typo-secret-hunter2");
  });
});
