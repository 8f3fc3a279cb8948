import type { Metadata } from "next";
import { Badge } from "@/components/ui/badge";
import { buttonClass } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { PageHeader } from "@/components/ui/page-header";
import { CursorPagination } from "@/components/ui/pagination";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { formatUtc } from "@/components/ui/time";
import { auditEventTypes, listAuditEvents } from "@/lib/console/audit";
import { getService } from "@/lib/service";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Audit log" };

const PRESETS = [
  { value: "", label: "All events" },
  { value: "console.*", label: "Console changes" },
  { value: "grant.revoked", label: "Grant revoked" },
  { value: "refresh.reuse_detected", label: "Refresh token reuse" },
  { value: "session.logout", label: "Hosted logout" },
  { value: "token.revoked", label: "Token revoked" },
  { value: "client.secret.*", label: "Client secrets" },
  { value: "authz.*", label: "Authorization model" },
  { value: "account_security.*", label: "Account security portal" },
];

/** `datetime-local` values are read as UTC (the page says so). */
function parseUtc(value: unknown): Date | undefined {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value)) return undefined;
  const d = new Date(`${value}:00Z`);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

function summary(data: Record<string, unknown>): string {
  const { operator: _operator, role: _role, ...rest } = data;
  void _operator;
  void _role;
  const text = JSON.stringify(rest);
  return text === "{}" ? "" : text.length > 160 ? `${text.slice(0, 157)}…` : text;
}

export default async function AuditPage({ params, searchParams }: { params: Promise<{ workspace: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const [{ workspace }, query] = await Promise.all([params, searchParams]);
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/audit`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const type = typeof query.type === "string" ? query.type.slice(0, 100) : "";
  const fromRaw = typeof query.from === "string" ? query.from : "";
  const toRaw = typeof query.to === "string" ? query.to : "";
  const flagged = query.flagged === "1";
  const before = typeof query.before === "string" ? query.before : undefined;
  const [page, types] = await Promise.all([
    listAuditEvents(service, ws, { type: type || undefined, from: parseUtc(fromRaw), to: parseUtc(toRaw), flaggedOnly: flagged, before }),
    auditEventTypes(service, ws),
  ]);
  const options = [...PRESETS, ...types.filter((t) => !PRESETS.some((p) => p.value === t)).map((t) => ({ value: t, label: t }))];
  const filters = { ...(type ? { type } : {}), ...(fromRaw ? { from: fromRaw } : {}), ...(toRaw ? { to: toRaw } : {}), ...(flagged ? { flagged: "1" } : {}) };
  const href = (cursor: string) => `${base}/audit?${new URLSearchParams({ ...filters, before: cursor })}`;
  const inputClass = "mt-1 block w-full rounded-md border border-slate-300 px-3 py-2 text-sm shadow-sm focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-200";
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Audit log" }]}
        title="Audit log"
        description="Every console change (who, what, when, from where) and the security events of the sign-in and token endpoints."
      />
      <Card>
        <form method="get" className="mb-5 grid items-end gap-3 sm:grid-cols-2 lg:grid-cols-[1.4fr_1fr_1fr_auto_auto]" aria-label="Filter the audit log">
          <div>
            <label htmlFor="audit-type" className="block text-sm font-medium text-slate-700">
              Type
            </label>
            <select id="audit-type" name="type" defaultValue={type} className={inputClass}>
              {options.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="audit-from" className="block text-sm font-medium text-slate-700">
              From (UTC)
            </label>
            <input id="audit-from" name="from" type="datetime-local" defaultValue={fromRaw} className={inputClass} />
          </div>
          <div>
            <label htmlFor="audit-to" className="block text-sm font-medium text-slate-700">
              To (UTC)
            </label>
            <input id="audit-to" name="to" type="datetime-local" defaultValue={toRaw} className={inputClass} />
          </div>
          <label className="flex items-center gap-2 pb-2 text-sm text-slate-700">
            <input type="checkbox" name="flagged" value="1" defaultChecked={flagged} className="h-4 w-4 rounded border-slate-300" />
            Flagged only
          </label>
          <button type="submit" className={buttonClass("secondary")}>
            Filter
          </button>
        </form>
        {page.entries.length === 0 ? (
          <EmptyState title="No events">{Object.keys(filters).length ? "Nothing matches these filters." : "Changes and security events will appear here."}</EmptyState>
        ) : (
          <Table caption="Audit events" head={["When", "Event", "Who", "Subject", "From", "Details"]}>
            {page.entries.map((e) => (
              <tr key={e.id} className={e.flagged ? "bg-red-50/60" : undefined}>
                <Td className="whitespace-nowrap text-xs">{formatUtc(e.createdAt)}</Td>
                <Td>
                  <code className="font-mono text-xs">{e.type}</code>
                  {e.flagged ? (
                    <div className="mt-1">
                      <Badge tone="red">{e.flagged.replace(/_/g, " ")}</Badge>
                    </div>
                  ) : null}
                  {e.reason ? <div className="text-xs text-slate-500">{e.reason}</div> : null}
                </Td>
                <Td className="text-xs">{e.actorEmail ?? (e.actor ? <code>{e.actor.slice(0, 8)}…</code> : <span className="text-slate-500">protocol</span>)}</Td>
                <Td className="text-xs">
                  {e.subject ? <div className="max-w-48 break-all">{e.subject}</div> : null}
                  {e.clientId ? <div className="font-mono text-slate-500">{e.clientId}</div> : null}
                </Td>
                <Td className="text-xs text-slate-600">{e.ip ?? "—"}</Td>
                <Td className="max-w-80 break-all font-mono text-xs text-slate-600">{summary(e.data)}</Td>
              </tr>
            ))}
          </Table>
        )}
        <CursorPagination next={page.next} href={href} first={before ? `${base}/audit?${new URLSearchParams(filters)}` : null} />
      </Card>
    </>
  );
}
