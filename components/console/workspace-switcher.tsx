import Link from "next/link";
import { Badge } from "@/components/ui/badge";

/** What the switcher shows of each workspace (the console's workspace summaries fit it). */
export interface SwitchableWorkspace {
  id: string;
  name: string;
  role: string;
}

/** A disclosure listing the operator's workspaces: works without JavaScript and from the keyboard. */
export function WorkspaceSwitcher({ current, workspaces }: { current: { id: string; name: string }; workspaces: SwitchableWorkspace[] }) {
  return (
    <details className="group relative">
      <summary className="flex cursor-pointer list-none items-center justify-between gap-2 rounded-md border border-slate-300 bg-white px-3 py-2 text-sm shadow-sm hover:bg-slate-50 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-300">
        <span className="min-w-0">
          <span className="block text-xs text-slate-500">Workspace</span>
          <span className="block truncate font-medium text-slate-900">{current.name}</span>
        </span>
        <span aria-hidden="true" className="text-slate-500 transition-transform group-open:rotate-180">
          ▾
        </span>
        <span className="sr-only">Switch workspace</span>
      </summary>
      <ul className="absolute z-20 mt-1 max-h-80 w-full min-w-56 overflow-auto rounded-md border border-slate-200 bg-white py-1 text-sm shadow-lg">
        {workspaces.map((w) => (
          <li key={w.id}>
            <Link
              prefetch={false}
              href={`/console/w/${w.id}`}
              aria-current={w.id === current.id ? "true" : undefined}
              className={`flex items-center justify-between gap-2 px-3 py-2 hover:bg-slate-50 focus-visible:bg-slate-100 focus-visible:outline-none ${w.id === current.id ? "font-semibold" : ""}`}
            >
              <span className="truncate">{w.name}</span>
              <Badge tone={w.role === "viewer" ? "neutral" : "indigo"}>{w.role}</Badge>
            </Link>
          </li>
        ))}
        <li className="border-t border-slate-100">
          <Link prefetch={false} href="/console" className="block px-3 py-2 text-slate-600 hover:bg-slate-50 focus-visible:bg-slate-100 focus-visible:outline-none">
            All workspaces
          </Link>
        </li>
      </ul>
    </details>
  );
}
