import type { ReactNode } from "react";

export function Card({
  title,
  description,
  actions,
  children,
  className = "",
  id,
  tone = "default",
}: {
  title?: ReactNode;
  description?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  className?: string;
  id?: string;
  /** `danger`: the red-tinted frame of a page's danger zone (components/console/danger-zone.tsx). */
  tone?: "default" | "danger";
}) {
  const danger = tone === "danger";
  return (
    <section id={id} className={`rounded-lg border bg-white shadow-sm ${danger ? "border-red-200" : "border-slate-200"} ${className}`} aria-labelledby={id && title ? `${id}-title` : undefined}>
      {title || actions ? (
        <header className={`flex flex-wrap items-start justify-between gap-3 border-b px-4 py-3 sm:px-5 ${danger ? "border-red-100 bg-red-50/60" : "border-slate-100"}`}>
          <div className="min-w-0">
            {title ? (
              <h2 id={id ? `${id}-title` : undefined} className={`text-base font-semibold ${danger ? "text-red-800" : "text-slate-900"}`}>
                {title}
              </h2>
            ) : null}
            {description ? <p className={`mt-0.5 text-sm ${danger ? "text-slate-600" : "text-slate-500"}`}>{description}</p> : null}
          </div>
          {actions ? <div className="flex flex-wrap items-center gap-2">{actions}</div> : null}
        </header>
      ) : null}
      <div className="px-4 py-4 sm:px-5">{children}</div>
    </section>
  );
}

export function Stat({ label, value, hint, tone = "default" }: { label: string; value: ReactNode; hint?: ReactNode; tone?: "default" | "warning" | "danger" }) {
  const ring = tone === "danger" ? "border-red-200 bg-red-50" : tone === "warning" ? "border-amber-200 bg-amber-50" : "border-slate-200 bg-white";
  return (
    <div className={`rounded-lg border p-4 shadow-sm ${ring}`}>
      <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">{label}</dt>
      <dd className="mt-1 text-2xl font-semibold text-slate-900">{value}</dd>
      {hint ? <dd className="mt-1 text-xs text-slate-500">{hint}</dd> : null}
    </div>
  );
}
