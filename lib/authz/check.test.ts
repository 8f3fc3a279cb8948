import { describe, expect, it } from "vitest";
import type { PermissionFacts, TokenAuthority } from "../oauth/authority";
import { decide } from "./check";

const human: TokenAuthority = {
  kind: "human",
  active: true,
  clientPk: "c",
  clientId: "spa",
  subject: "s",
  scope: ["openid", "read"],
  audience: "https://api",
  apiId: "api",
  issuedAt: new Date(0),
  expiresAt: new Date(300_000),
  grantId: "g",
  sessionId: "sess",
  userId: "u",
  organizationId: "org-1",
  connectionId: null,
  email: "a@b.c",
  emailVerified: true,
  name: null,
  jkt: null,
};
const workload: TokenAuthority = { ...human, kind: "workload", credentialId: "cred" } as unknown as TokenAuthority;
const facts: PermissionFacts = { apiDefines: true, clientGrantIncludes: true, userHolds: true, sessionOrganizationCurrent: true };
const ask = { resource: "https://api", permission: "read", organizationId: null };

describe("decide", () => {
  it("allows only when every condition holds", () => {
    expect(decide(human, facts, ask)).toBe(true);
    expect(decide(human, facts, { ...ask, organizationId: "org-1" })).toBe(true);
    expect(decide(workload, facts, ask)).toBe(true);
  });

  it("denies on each single failing condition", () => {
    expect(decide({ ...human, active: false }, facts, ask)).toBe(false);
    expect(decide(human, facts, { ...ask, resource: "https://api/" })).toBe(false);
    expect(decide({ ...human, audience: null }, facts, ask)).toBe(false);
    expect(decide(human, facts, { ...ask, permission: "write" })).toBe(false);
    expect(decide(human, { ...facts, apiDefines: false }, ask)).toBe(false);
    expect(decide(human, { ...facts, clientGrantIncludes: false }, ask)).toBe(false);
    expect(decide(human, { ...facts, userHolds: false }, ask)).toBe(false);
    expect(decide(human, { ...facts, sessionOrganizationCurrent: false }, ask)).toBe(false);
    expect(decide(human, facts, { ...ask, organizationId: "org-2" })).toBe(false);
    expect(decide(workload, facts, { ...ask, organizationId: "org-1" })).toBe(false);
    expect(decide(workload, { ...facts, clientGrantIncludes: false }, ask)).toBe(false);
  });

  it("does not need a user's role for a workload", () => {
    expect(decide(workload, { ...facts, userHolds: false, sessionOrganizationCurrent: false }, ask)).toBe(true);
  });
});
