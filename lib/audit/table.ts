/**
 * docs/audit-events.md's table, rendered from the catalogue (./catalogue.ts), so the page says what
 * the code writes (./table.test.ts compares the two).
 */
import { AUDIT_EVENT_TYPES, AUDIT_EVENTS, AUDIT_GROUPS, OPERATION_DATA, type AuditEventSpec } from "./catalogue";

const cell = (text: string) => text.replace(/\|/g, "\\|");

/** "`grant_id` string, `token_type` string (optional)"; an operation's own keys after "operation's". */
function dataText(spec: AuditEventSpec): string {
  const own = Object.entries(spec.data).filter(([key]) => !(spec.operation && Object.hasOwn(OPERATION_DATA, key)));
  const keys = own.map(([key, field]) => {
    const optional = field.endsWith("?");
    const type = optional ? field.slice(0, -1) : field;
    return `\`${key}\` ${type.replace("|", " or ")}${optional ? " (optional)" : ""}`;
  });
  if (spec.operation) keys.unshift("the operation's");
  return keys.length ? keys.join(", ") : "—";
}

function carriesText(spec: AuditEventSpec): string {
  const parts = [
    spec.subject && `subject: ${spec.subject}`,
    spec.client && `client_id: ${spec.client}`,
    spec.reason && `reason: ${spec.reason}`,
  ].filter((p): p is string => typeof p === "string");
  return parts.length ? parts.join("; ") : "—";
}

export function renderAuditEventTable(): string {
  const rows = AUDIT_EVENT_TYPES.map((type) => {
    const spec: AuditEventSpec = AUDIT_EVENTS[type];
    return [
      `\`${type}\``,
      AUDIT_GROUPS[spec.group],
      `${spec.summary}${spec.legacy ? " (earlier versions only)" : ""}`,
      carriesText(spec),
      dataText(spec),
      spec.warning ? `\`${spec.warning}\`` : "—",
    ]
      .map(cell)
      .join(" | ");
  });
  return ["| Event | Group | Records | Subject, client, reason | Data | Security warning |", "|---|---|---|---|---|---|", ...rows.map((r) => `| ${r} |`)].join("\n");
}
