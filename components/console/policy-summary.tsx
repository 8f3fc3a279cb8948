import { Badge } from "@/components/ui/badge";

export interface PolicySummaryRow {
  label: string;
  value: string;
  /** Where the value comes from: the application's own override, or inherited from the workspace. */
  source?: "override" | "inherited";
}

/** A policy as a short definition list, each field marked with where its value comes from. */
export function PolicySummary({ rows, label }: { rows: PolicySummaryRow[]; label: string }) {
  return (
    <dl aria-label={label} className="grid gap-x-6 gap-y-2 text-sm sm:grid-cols-[max-content_1fr]">
      {rows.map((r) => (
        <div key={r.label} className="contents">
          <dt className="text-slate-500">{r.label}</dt>
          <dd className="flex flex-wrap items-center gap-2 text-slate-900">
            {r.value}
            {r.source === "override" ? <Badge tone="indigo">this application</Badge> : r.source === "inherited" ? <Badge>from the workspace</Badge> : null}
          </dd>
        </div>
      ))}
    </dl>
  );
}
