import { describe, expect, it } from "vitest";
import { AUDIT_EVENT_TYPES, type SummarizableEvent } from "./catalogue";
import { summarizeAuditEvent } from "./summary";

const event = (e: Partial<SummarizableEvent> & { type: string }): SummarizableEvent => ({
  actorEmail: null,
  actor: null,
  subject: null,
  subjectEmail: null,
  clientId: null,
  reason: null,
  flagged: null,
  data: {},
  ...e,
});

describe("summarizeAuditEvent", () => {
  it("says who changed what in the console", () => {
    expect(summarizeAuditEvent(event({ type: "console.application.status_changed", actorEmail: "alice@x.com", actor: "op1", subject: "demo-web", data: { active: false } }))).toBe(
      "alice@x.com disabled application demo-web",
    );
    expect(summarizeAuditEvent(event({ type: "console.user.deleted", actorEmail: "alice@x.com", actor: "op1", subject: "bob@x.com", data: { sessions_ended: 2, grants_ended: 1 } }))).toBe(
      "alice@x.com deleted user bob@x.com — ended 2 sessions, 1 grant",
    );
    expect(summarizeAuditEvent(event({ type: "console.user.role_assigned", actorEmail: "alice@x.com", actor: "op1", subject: "bob@x.com", data: { role: "reader", organization: null } }))).toBe(
      "alice@x.com gave bob@x.com role reader",
    );
  });

  it("says what the protocol did, about whom, and flags possible theft", () => {
    expect(
      summarizeAuditEvent(event({ type: "refresh.reuse_detected", subject: "pairwise-sub", subjectEmail: "bob@x.com", clientId: "demo-web", flagged: "possible_token_theft", reason: "refresh_token_reuse" })),
    ).toBe("Refresh token reuse detected for bob@x.com at demo-web — grant revoked (possible token theft)");
    expect(summarizeAuditEvent(event({ type: "sign_in.failed", subject: "u1", subjectEmail: "bob@x.com", reason: "wrong_password" }))).toBe("Failed sign-in for bob@x.com: wrong password");
    expect(summarizeAuditEvent(event({ type: "sign_in.failed", reason: "unknown_account" }))).toBe("Failed sign-in for an unknown account: unknown account");
    expect(summarizeAuditEvent(event({ type: "sign_in.failed", subject: "u1", subjectEmail: "bob@x.com", reason: "wrong_code", data: { method: "totp" } }))).toBe("Failed sign-in for bob@x.com: wrong code (authenticator app)");
  });

  it("falls back to the type's words, who and whom for an unknown type", () => {
    expect(summarizeAuditEvent(event({ type: "console.widget.polished", actorEmail: "alice@x.com", actor: "op1", subject: "w1" }))).toBe("alice@x.com: widget polished — w1");
    expect(summarizeAuditEvent(event({ type: "thing.happened", reason: "because", flagged: "odd_thing" }))).toBe("system: thing happened (because) (odd thing)");
  });

  it("knows every console operation's and protocol event's type", () => {
    for (const t of ["console.user.deleted", "console.application.deleted", "refresh.reuse_detected", "sign_in.failed", "grant.revoked", "session.logout"]) expect(AUDIT_EVENT_TYPES).toContain(t);
  });
});
