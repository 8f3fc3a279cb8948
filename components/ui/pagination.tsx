import Link from "next/link";

const linkClass = "rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-700 hover:bg-slate-50 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-300";
const disabledClass = "rounded-md border border-slate-200 px-3 py-1.5 text-sm text-slate-300";

/** Previous/next links; `href(page)` builds each page's URL (filters preserved by the caller). */
export function Pagination({ page, pages, total, href, label = "items" }: { page: number; pages: number; total: number; href: (page: number) => string; label?: string }) {
  if (pages <= 1) return <p className="mt-4 text-xs text-slate-500">{total} {label}</p>;
  return (
    <nav aria-label="Pagination" className="mt-4 flex flex-wrap items-center justify-between gap-3">
      <p className="text-xs text-slate-500">
        Page {page} of {pages} · {total} {label}
      </p>
      <div className="flex gap-2">
        {page > 1 ? (
          <Link prefetch={false} className={linkClass} href={href(page - 1)} rel="prev">
            ← Previous
          </Link>
        ) : (
          <span className={disabledClass} aria-disabled="true">
            ← Previous
          </span>
        )}
        {page < pages ? (
          <Link prefetch={false} className={linkClass} href={href(page + 1)} rel="next">
            Next →
          </Link>
        ) : (
          <span className={disabledClass} aria-disabled="true">
            Next →
          </span>
        )}
      </div>
    </nav>
  );
}

/** Cursor paging: only "older" (and back to the newest). */
export function CursorPagination({ next, href, first }: { next: string | null; href: (cursor: string) => string; first: string | null }) {
  return (
    <nav aria-label="Pagination" className="mt-4 flex justify-end gap-2">
      {first ? (
        <Link prefetch={false} className={linkClass} href={first}>
          ← Newest
        </Link>
      ) : null}
      {next ? (
        <Link prefetch={false} className={linkClass} href={href(next)} rel="next">
          Older →
        </Link>
      ) : (
        <span className={disabledClass} aria-disabled="true">
          Older →
        </span>
      )}
    </nav>
  );
}
