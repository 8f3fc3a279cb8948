/**
 * One readable line per audit event: who did what to whom, and how it ended ("alice@x.com
 * disabled application demo-web", "Refresh token reuse detected for bob@x.com — grant revoked
 * (possible token theft)"). Each type's line is its entry in the catalogue (./catalogue.ts); a type
 * the catalogue does not know still reads as a sentence built from its name, actor and subject.
 */
import { auditEventSpec, flagText, type SummarizableEvent } from "./catalogue";

/** Who acted: an operator's or user's email, or the service itself (protocol events). */
export function actorLabel(e: Pick<SummarizableEvent, "actorEmail" | "actor">): string {
  if (e.actorEmail) return e.actorEmail;
  if (e.actor === "cli") return "the command line";
  return e.actor ? "a user" : "system";
}

/** The user the event is about, as readably as the row allows. */
function userLabel(e: SummarizableEvent): string {
  return e.subjectEmail ?? (typeof e.data.email === "string" ? e.data.email : null) ?? (e.subject ? e.subject : "an unknown user");
}

export function summarizeAuditEvent(e: SummarizableEvent): string {
  const who = actorLabel(e);
  const spec = auditEventSpec(e.type);
  // A console change names what it flagged (an inner writer's warning) after its own line.
  if (spec) return spec.line(e, who, userLabel(e)) + (e.type.startsWith("console.") ? flagText(e.flagged) : "");
  // Unknown type: its name as words, with who and whom.
  const words = e.type.replace(/^console\./, "").replace(/[._]/g, " ");
  return `${who}: ${words}${e.subject ? ` — ${e.subjectEmail ?? e.subject}` : ""}${e.reason ? ` (${e.reason.replace(/_/g, " ")})` : ""}${flagText(e.flagged)}`;
}
