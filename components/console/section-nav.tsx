/**
 * A page's tabs as plain links (`?tab=`): the server renders the chosen one, so they work without
 * JavaScript, and a form posted from a tab comes back to it. The current one is marked for
 * assistive technology (`aria-current`) and by its look; the list scrolls sideways on a phone.
 */
export function SectionNav({ label, sections, current }: { label: string; sections: Array<{ id: string; label: string; href: string }>; current: string }) {
  return (
    <nav aria-label={label} className="-mx-4 mb-6 border-b border-slate-200 px-4 sm:mx-0 sm:px-0">
      <ul className="flex gap-1 overflow-x-auto text-sm">
        {sections.map((s) => {
          const active = s.id === current;
          return (
            <li key={s.id} className="shrink-0">
              <a
                href={s.href}
                aria-current={active ? "page" : undefined}
                className={`-mb-px block border-b-2 px-3 py-2 font-medium focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-300 ${
                  active ? "border-indigo-600 text-indigo-700" : `border-transparent hover:border-slate-300 ${s.id === "danger-zone" ? "text-red-700" : "text-slate-700 hover:text-slate-900"}`
                }`}
              >
                {s.label}
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
