import type { ReactNode } from "react";

/** A responsive table: scrolls sideways on narrow screens instead of squeezing. */
export function Table({ caption, head, children }: { caption?: string; head: ReactNode[]; children: ReactNode }) {
  return (
    <div className="-mx-4 overflow-x-auto sm:mx-0">
      <table className="min-w-full divide-y divide-slate-200 text-left text-sm">
        {caption ? <caption className="sr-only">{caption}</caption> : null}
        <thead>
          <tr>
            {head.map((h, i) => (
              <th key={i} scope="col" className="whitespace-nowrap px-4 py-2 text-xs font-semibold uppercase tracking-wide text-slate-500 sm:px-3 sm:first:pl-0">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">{children}</tbody>
      </table>
    </div>
  );
}

export function Td({ children, className = "", mono = false }: { children?: ReactNode; className?: string; mono?: boolean }) {
  return <td className={`px-4 py-2.5 align-top sm:px-3 sm:first:pl-0 ${mono ? "font-mono text-xs" : ""} ${className}`}>{children}</td>;
}

export function EmptyState({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="rounded-lg border border-dashed border-slate-300 px-6 py-10 text-center">
      <p className="text-sm font-semibold text-slate-800">{title}</p>
      {children ? <div className="mx-auto mt-1 max-w-md text-sm text-slate-500">{children}</div> : null}
      {action ? <div className="mt-4 flex justify-center">{action}</div> : null}
    </div>
  );
}
