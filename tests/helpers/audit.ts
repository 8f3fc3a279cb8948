/**
 * What the audit catalogue (lib/audit/catalogue.ts) declares, checked against a written row: its
 * type is catalogued; its data holds every required key, no undeclared one, each of its declared
 * JSON type; subject, client_id, reason and flagged only where the entry says it carries them; a
 * console change's folded effects checked the same way.
 */
import { auditEventSpec, type AuditField } from "../../lib/audit/catalogue";

export interface WrittenAuditEvent {
  type: string;
  subject: string | null;
  clientId: string | null;
  reason: string | null;
  flagged: string | null;
  data: Record<string, unknown>;
}

function fits(field: string, value: unknown): boolean {
  switch (field) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    case "string[]":
      return Array.isArray(value) && value.every((v) => typeof v === "string");
    case "string|null":
      return value === null || typeof value === "string";
    case "number|null":
      return value === null || typeof value === "number";
    default:
      return value !== undefined;
  }
}

/** What in `event` the catalogue does not declare, as readable lines; empty when it matches. */
export function auditCatalogueMismatches(event: WrittenAuditEvent): string[] {
  const spec = auditEventSpec(event.type);
  if (!spec) return [`${event.type}: not in the catalogue`];
  const problems: string[] = [];
  const declared = spec.data as Record<string, AuditField>;
  for (const [key, value] of Object.entries(event.data)) {
    const field = declared[key];
    if (field === undefined) problems.push(`${event.type}: data.${key} is not declared`);
    else if (!fits(field.replace(/\?$/, ""), value)) problems.push(`${event.type}: data.${key} is ${JSON.stringify(value)}, declared ${field}`);
  }
  for (const [key, field] of Object.entries(declared)) if (!field.endsWith("?") && !(key in event.data)) problems.push(`${event.type}: data.${key} is missing`);
  if (event.subject !== null && !spec.subject) problems.push(`${event.type}: carries a subject it does not declare`);
  if (event.clientId !== null && !spec.client) problems.push(`${event.type}: carries a client_id it does not declare`);
  if (event.reason !== null && !spec.reason?.includes(`\`${event.reason}\``)) problems.push(`${event.type}: reason ${event.reason} is not declared`);
  const effects = spec.operation && Array.isArray(event.data.effects) ? (event.data.effects as Record<string, unknown>[]) : [];
  const folded = effects.map((e) => ({
    type: String(e.type),
    subject: typeof e.subject === "string" ? e.subject : null,
    clientId: typeof e.client_id === "string" ? e.client_id : null,
    reason: typeof e.reason === "string" ? e.reason : null,
    flagged: typeof e.flagged === "string" ? e.flagged : null,
    data: (e.data as Record<string, unknown> | undefined) ?? {},
  }));
  // A console change carries the warning one of its effects raised; any other event only its own.
  const warnings = spec.operation ? folded.map((e) => e.flagged) : [spec.warning];
  if (event.flagged !== null && !warnings.includes(event.flagged)) problems.push(`${event.type}: flagged ${event.flagged} is not declared`);
  for (const e of folded) problems.push(...auditCatalogueMismatches(e).map((p) => `effect of ${event.type}: ${p}`));
  return problems;
}
