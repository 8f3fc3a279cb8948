import { describe, expect, it } from "vitest";
import { AUDIT_EVENT_TYPES, AUDIT_EVENTS, AUDIT_GROUPS, auditEventSpec, auditGroupTypes, isAuditGroup, OPERATION_DATA, type AuditEventSpec, type SummarizableEvent } from "./catalogue";
import { actorLabel, summarizeAuditEvent } from "./summary";

const FIELD = /^(string|number|boolean|string\[\]|string\|null|number\|null|json)\??$/;

/** An event of `type` with every declared key filled, as a row would read. */
function sample(type: string, spec: AuditEventSpec, flagged: string | null = null): SummarizableEvent {
  const data: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(spec.data)) data[key] = field.startsWith("number") ? 2 : field.startsWith("boolean") ? false : field.startsWith("string[]") ? ["a", "b"] : `${key}-value`;
  return {
    type,
    actorEmail: "alice@x.test",
    actor: "op1",
    subject: spec.subject ? "subject-1" : null,
    // The console resolves the user an event is about from its subject or `data.user_id`.
    subjectEmail: "bob@x.test",
    clientId: spec.client ? "web" : null,
    reason: spec.reason ? "some_reason" : null,
    flagged,
    data,
  };
}

describe("the audit catalogue", () => {
  it("names each type once, as dotted lower-case words", () => {
    expect(new Set(AUDIT_EVENT_TYPES).size).toBe(AUDIT_EVENT_TYPES.length);
    for (const type of AUDIT_EVENT_TYPES) expect(type).toMatch(/^[a-z_]+(\.[a-z_]+)+$/);
    expect(auditEventSpec("console.widget.polished")).toBeUndefined();
    expect(auditEventSpec("toString")).toBeUndefined();
  });

  it("gives every entry a one-line summary, a group of the filter, declared data keys and a line", () => {
    for (const type of AUDIT_EVENT_TYPES) {
      const spec: AuditEventSpec = AUDIT_EVENTS[type];
      expect(spec.summary, type).toMatch(/^[A-Z][^\n]*[^.\s]$/);
      expect(isAuditGroup(spec.group), type).toBe(true);
      for (const [key, field] of Object.entries(spec.data)) {
        expect(key, type).toMatch(/^[a-z][A-Za-z_]*$/);
        expect(field, `${type} ${key}`).toMatch(FIELD);
      }
      expect(typeof spec.line, type).toBe("function");
      // Console changes are console.*, and only they.
      expect(type.startsWith("console."), type).toBe(spec.group === "console" || spec.group === "console_access");
      if (spec.operation) for (const key of Object.keys(OPERATION_DATA)) expect(spec.data, type).toHaveProperty(key);
    }
  });

  it("has each group of the console's filter used, and every type in exactly one group", () => {
    const grouped = (Object.keys(AUDIT_GROUPS) as (keyof typeof AUDIT_GROUPS)[]).map((g) => auditGroupTypes(g));
    for (const types of grouped) expect(types.length).toBeGreaterThan(0);
    expect(grouped.flat().sort()).toEqual([...AUDIT_EVENT_TYPES].sort());
    expect(isAuditGroup("console")).toBe(true);
    expect(isAuditGroup("hasOwnProperty")).toBe(false);
  });

  it("marks the security warnings: refresh-token reuse and a replayed authorization code", () => {
    const warnings = Object.fromEntries(AUDIT_EVENT_TYPES.flatMap((t) => (AUDIT_EVENTS[t].warning ? [[t, AUDIT_EVENTS[t].warning]] : [])));
    expect(warnings).toEqual({ "refresh.reuse_detected": "possible_token_theft", "grant.revoked": "possible_code_theft" });
  });

  it("is what the console's summaries read: each type's line, never the fallback for unknown types", () => {
    for (const type of AUDIT_EVENT_TYPES) {
      const spec: AuditEventSpec = AUDIT_EVENTS[type];
      const e = sample(type, spec);
      const line = summarizeAuditEvent(e);
      expect(line, type).toBe(spec.line(e, actorLabel(e), "bob@x.test"));
      expect(line, type).not.toMatch(/^alice@x\.test: /);
      expect(line, type).not.toMatch(/undefined|null|\[object/);
    }
    // A console change names the warning one of its effects raised.
    const flagged = sample("console.user.grant_revoked", AUDIT_EVENTS["console.user.grant_revoked"], "possible_token_theft");
    expect(summarizeAuditEvent(flagged)).toBe(`${AUDIT_EVENTS["console.user.grant_revoked"].line(flagged, "alice@x.test", "bob@x.test")} (possible token theft)`);
  });
});
