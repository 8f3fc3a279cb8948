import { describe, expect, it } from "vitest";
import { samlAssertionReplays } from "../../../../db/schema";
import { PURGE_GRACE_MS } from "../../../oauth/token-purge";
import { samlAssertionRetention } from "./retention";

describe("the SAML replay store's retention", () => {
  it("keeps an assertion ID until its expiry plus the grace of every expired sign-in row, per workspace", () => {
    expect(samlAssertionRetention.table).toBe(samlAssertionReplays);
    expect(samlAssertionRetention.expiresAt).toBe(samlAssertionReplays.expiresAt);
    expect(samlAssertionRetention.key).toBe(samlAssertionReplays.assertionId);
    expect(samlAssertionRetention.workspaceId).toBe(samlAssertionReplays.workspaceId);
    expect(samlAssertionRetention.grace).toBe(PURGE_GRACE_MS);
    expect(samlAssertionRetention.where).toBeUndefined();
  });
});
