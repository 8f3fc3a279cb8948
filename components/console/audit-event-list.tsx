import { Badge } from "@/components/ui/badge";
import { formatUtc } from "@/components/ui/time";

/** An audit event as the list shows it (lib/console/audit.ts `AuditEntry` fits). */
export interface AuditListEntry {
  id: string;
  type: string;
  actor: string | null;
  actorEmail: string | null;
  clientId: string | null;
  subject: string | null;
  subjectEmail: string | null;
  reason: string | null;
  flagged: string | null;
  data: Record<string, unknown>;
  ip: string | null;
  createdAt: Date;
  summary: string;
}

/**
 * The audit log as a compact list: one line per event (its summary and time), the details (type,
 * who, subject, where from, data) folded in a native <details>, so it reads at phone width and
 * needs no script.
 */
/** "11-23 09:30": the list's time (UTC); the year and zone are in the details. */
const shortTime = (d: Date) => d.toISOString().slice(5, 16).replace("T", " ");

export function AuditEventList({ entries }: { entries: AuditListEntry[] }) {
  return (
    <ol className="divide-y divide-slate-200 rounded-md border border-slate-200" aria-label="Audit events">
      {entries.map((e) => (
        <li key={e.id} className={e.flagged ? "bg-red-50" : undefined} data-testid="audit-event">
          <details className="group">
            <summary className="cursor-pointer list-none px-3 py-1.5 text-sm leading-snug focus-visible:outline focus-visible:outline-2 focus-visible:outline-offset-[-2px] focus-visible:outline-indigo-600 [&::-webkit-details-marker]:hidden">
              <span aria-hidden="true" className="mr-1.5 inline-block text-[0.65rem] text-slate-500 transition-transform group-open:rotate-90">
                ▶
              </span>
              <time dateTime={e.createdAt.toISOString()} title={formatUtc(e.createdAt)} className="mr-2 whitespace-nowrap text-xs tabular-nums text-slate-600">
                {shortTime(e.createdAt)}
              </time>
              <span className="break-words text-slate-900">{e.summary}</span>
              {e.flagged ? (
                <span className="ml-2 align-middle">
                  <Badge tone="red">{e.flagged.replace(/_/g, " ")}</Badge>
                </span>
              ) : null}
            </summary>
            <dl className="grid gap-x-4 gap-y-1 border-t border-slate-100 px-3 py-2 text-xs sm:grid-cols-[8rem_1fr]">
              <dt className="text-slate-600">When</dt>
              <dd>{formatUtc(e.createdAt)}</dd>
              <dt className="text-slate-600">Type</dt>
              <dd>
                <code className="break-all font-mono">{e.type}</code>
              </dd>
              <dt className="text-slate-600">Who</dt>
              <dd className="break-all">{e.actorEmail ?? (e.actor ? <code className="font-mono">{e.actor}</code> : "system (protocol)")}</dd>
              {e.subject ? (
                <>
                  <dt className="text-slate-600">Subject</dt>
                  <dd className="break-all">
                    {e.subject}
                    {e.subjectEmail && e.subjectEmail !== e.subject ? <span className="text-slate-600"> ({e.subjectEmail})</span> : null}
                  </dd>
                </>
              ) : null}
              {e.clientId ? (
                <>
                  <dt className="text-slate-600">Application</dt>
                  <dd className="break-all font-mono">{e.clientId}</dd>
                </>
              ) : null}
              {e.reason ? (
                <>
                  <dt className="text-slate-600">Reason</dt>
                  <dd>{e.reason}</dd>
                </>
              ) : null}
              <dt className="text-slate-600">From</dt>
              <dd className="break-all">{e.ip ?? "—"}</dd>
              <dt className="text-slate-600">Data</dt>
              <dd>
                <pre className="max-h-64 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-50 p-2 font-mono text-slate-800">{JSON.stringify(e.data, null, 2)}</pre>
              </dd>
            </dl>
          </details>
        </li>
      ))}
    </ol>
  );
}
