import Link from "next/link";

/** The console's top bar: home, who is signed in, their account page, sign out (a POST with the console's Origin). */
export function TopBar({ operator }: { operator: { email: string; name: string | null } }) {
  return (
    <header className="bg-slate-900 text-white">
      <div className="mx-auto flex max-w-7xl flex-wrap items-center justify-between gap-3 px-4 py-3">
        <Link href="/console" prefetch={false} className="rounded text-base font-semibold tracking-tight focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-300">
          Latchkey <span className="font-normal text-slate-300">console</span>
        </Link>
        <div className="flex min-w-0 items-center gap-3 text-sm">
          <span className="truncate text-slate-300" title={operator.email}>
            {operator.name ? `${operator.name} · ` : ""}
            {operator.email}
          </span>
          <Link
            href="/console/account"
            prefetch={false}
            className="whitespace-nowrap rounded-md px-1 py-1 text-xs font-medium text-slate-100 hover:underline focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-300"
          >
            Your account
          </Link>
          <form method="post" action="/console/auth/sign-out">
            <button
              type="submit"
              className="whitespace-nowrap rounded-md border border-slate-600 px-2.5 py-1 text-xs font-medium text-slate-100 hover:bg-slate-800 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-300"
            >
              Sign out
            </button>
          </form>
        </div>
      </div>
    </header>
  );
}
