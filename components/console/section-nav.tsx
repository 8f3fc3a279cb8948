/**
 * A long page's table of contents: links to its sections' anchors, kept in view while the page
 * scrolls (sticky), scrolling sideways on a phone. Plain links, so it works without JavaScript and
 * every existing `#anchor` address keeps landing on its section.
 */
export function SectionNav({ label, sections }: { label: string; sections: Array<{ id: string; label: string }> }) {
  return (
    <nav aria-label={label} className="sticky top-0 z-10 -mx-4 mb-6 border-b border-slate-200 bg-slate-50/95 px-4 backdrop-blur sm:mx-0 sm:px-0">
      <ul className="flex gap-1 overflow-x-auto py-2 text-sm">
        {sections.map((s) => (
          <li key={s.id} className="shrink-0">
            <a
              href={`#${s.id}`}
              className={`block rounded-md px-3 py-1.5 font-medium hover:bg-white hover:shadow-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-300 ${s.id === "danger-zone" ? "text-red-700" : "text-slate-700"}`}
            >
              {s.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
