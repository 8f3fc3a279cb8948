import Link from "next/link";
import { countOf } from "@/lib/i18n/plural";

const linkClass = "rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-700 hover:bg-slate-50 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-300";
const disabledClass = "rounded-md border border-slate-200 px-3 py-1.5 text-sm text-slate-300";

/** Previous/next links; `href(page)` builds each page's URL (filters preserved by the caller). `noun`: what is counted, singular and plural. */
export function Pagination({
  page,
  pages,
  total,
  href,
  noun = ["item", "items"],
}: {
  page: number;
  pages: number;
  total: number;
  href: (page: number) => string;
  noun?: readonly [one: string, other: string];
}) {
  const counted = countOf(total, noun[0], noun[1]);
  if (pages <= 1) return <p className="mt-4 text-xs text-slate-500">{counted}</p>;
  return (
    <nav aria-label="Pagination" className="mt-4 flex flex-wrap items-center justify-between gap-3">
      <p className="text-xs text-slate-500">
        Page {page} of {pages} · {counted}
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
