"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

/**
 * The workspace's sections (lib/console/navigation.ts, given by the layout): a column on wide
 * screens, a scrolling row on phones.
 */
export function SideNav({ workspaceId, sections }: { workspaceId: string; sections: readonly { href: string; label: string }[] }) {
  const pathname = usePathname();
  const base = `/console/w/${workspaceId}`;
  return (
    <nav aria-label="Workspace" className="mt-4">
      <ul className="-mx-4 flex gap-1 overflow-x-auto px-4 pb-2 lg:mx-0 lg:flex-col lg:overflow-visible lg:px-0">
        {sections.map((s) => {
          const href = base + s.href;
          const active = s.href === "" ? pathname === base : pathname === href || pathname.startsWith(`${href}/`);
          return (
            <li key={s.label} className="shrink-0">
              <Link
                prefetch={false}
                href={href}
                aria-current={active ? "page" : undefined}
                className={`block whitespace-nowrap rounded-md px-3 py-2 text-sm font-medium focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-300 ${
                  active ? "bg-indigo-50 text-indigo-800" : "text-slate-700 hover:bg-slate-100"
                }`}
              >
                {s.label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
