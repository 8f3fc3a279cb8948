import type { Metadata } from "next";
import { AuditEventList } from "@/components/console/audit-event-list";
import { buttonClass } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { PageHeader } from "@/components/ui/page-header";
import { CursorPagination } from "@/components/ui/pagination";
import { EmptyState } from "@/components/ui/table";
import { AUDIT_EVENT_TYPES, AUDIT_EVENTS, AUDIT_GROUPS, type AuditGroup } from "@/lib/audit/catalogue";
import { auditActors, auditFilterFromQuery, listAuditEvents, SYSTEM_ACTOR } from "@/lib/console/audit";
import { getService } from "@/lib/service";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Audit log" };

/** The catalogue's groups, in its order, for the group filter. */
const GROUPS = Object.entries(AUDIT_GROUPS) as [AuditGroup, string][];

export default async function AuditPage({ params, searchParams }: { params: Promise<{ workspace: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const [{ workspace }, query] = await Promise.all([params, searchParams]);
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/audit`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const qs = new URLSearchParams(Object.entries(query).flatMap(([k, v]) => (typeof v === "string" ? [[k, v] as [string, string]] : [])));
  const filter = auditFilterFromQuery(qs);
  const raw = (name: string) => (typeof query[name] === "string" ? (query[name] as string).slice(0, 320) : "");
  const [page, actors] = await Promise.all([listAuditEvents(service, ws, filter), auditActors(service, ws)]);
  const filters: Record<string, string> = {};
  for (const name of ["type", "actor", "from", "to"]) if (raw(name).trim()) filters[name] = raw(name).trim();
  if (filter.group) filters.group = filter.group;
  if (filter.flaggedOnly) filters.flagged = "1";
  const href = (cursor: string) => `${base}/audit?${new URLSearchParams({ ...filters, before: cursor })}`;
  const exportHref = `${base}/audit/export${Object.keys(filters).length ? `?${new URLSearchParams(filters)}` : ""}`;
  const inputClass = "mt-1 block w-full min-w-0 rounded-md border border-slate-300 px-2 py-1.5 text-sm sm:px-3 sm:py-2 shadow-sm focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-200";
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Audit log" }]}
        title="Audit log"
        description="Console changes and the security events of sign-in and the token endpoints. Times in UTC; open an event for its details."
        actions={
          <a href={exportHref} className={buttonClass("secondary")} download>
            Export JSON lines
          </a>
        }
      />
      <Card>
        <form method="get" className="mb-4 grid grid-cols-2 items-end gap-2 sm:gap-3 lg:grid-cols-[1fr_1.2fr_1.2fr_1fr_1fr_auto_auto]" aria-label="Filter the audit log">
          <div>
            <label htmlFor="audit-group" className="block text-sm font-medium text-slate-700">
              Group
            </label>
            <select id="audit-group" name="group" defaultValue={filter.group ?? ""} className={inputClass}>
              <option value="">All events</option>
              {GROUPS.map(([group, label]) => (
                <option key={group} value={group}>
                  {label}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="audit-type" className="block text-sm font-medium text-slate-700">
              Type <span className="hidden font-normal text-slate-600 sm:inline">(exact, or prefix*)</span>
            </label>
            <input id="audit-type" name="type" list="audit-types" defaultValue={raw("type")} placeholder="console.*" title="An exact type, or a prefix ending in *" className={inputClass} autoComplete="off" />
            <datalist id="audit-types">
              {AUDIT_EVENT_TYPES.map((t) => (
                <option key={t} value={t}>
                  {AUDIT_EVENTS[t].summary}
                </option>
              ))}
            </datalist>
          </div>
          <div>
            <label htmlFor="audit-actor" className="block text-sm font-medium text-slate-700">
              Actor <span className="hidden font-normal text-slate-600 sm:inline">(email, or {SYSTEM_ACTOR})</span>
            </label>
            <input id="audit-actor" name="actor" list="audit-actors" defaultValue={raw("actor")} placeholder="email or system" title="An operator's email, or system for protocol events" className={inputClass} autoComplete="off" />
            <datalist id="audit-actors">
              <option value={SYSTEM_ACTOR}>system / protocol</option>
              {actors.map((a) => (
                <option key={a} value={a} />
              ))}
            </datalist>
          </div>
          <div>
            <label htmlFor="audit-from" className="block text-sm font-medium text-slate-700">
              From (UTC)
            </label>
            <input id="audit-from" name="from" type="datetime-local" defaultValue={raw("from")} className={inputClass} />
          </div>
          <div>
            <label htmlFor="audit-to" className="block text-sm font-medium text-slate-700">
              To (UTC)
            </label>
            <input id="audit-to" name="to" type="datetime-local" defaultValue={raw("to")} className={inputClass} />
          </div>
          <label className="flex items-center gap-2 pb-2 text-sm text-slate-700">
            <input type="checkbox" name="flagged" value="1" defaultChecked={filter.flaggedOnly} className="h-4 w-4 rounded border-slate-300" />
            Flagged only
          </label>
          <button type="submit" className={buttonClass("secondary")}>
            Filter
          </button>
        </form>
        {page.entries.length === 0 ? (
          <EmptyState title="No events">{Object.keys(filters).length ? "Nothing matches these filters." : "Changes and security events will appear here."}</EmptyState>
        ) : (
          <AuditEventList entries={page.entries} />
        )}
        <CursorPagination next={page.next} href={href} first={filter.before ? `${base}/audit?${new URLSearchParams(filters)}` : null} />
      </Card>
    </>
  );
}
