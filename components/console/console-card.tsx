import type { ReactNode } from "react";

/** The centered card of the console's public pages (setup, signed out). */
export function ConsoleCard({ title, children, wide = false }: { title: string; children: ReactNode; wide?: boolean }) {
  return (
    <main className="flex min-h-screen items-center justify-center px-4 py-12">
      <div className={`w-full ${wide ? "max-w-md" : "max-w-sm"}`}>
        <p className="mb-4 text-center text-sm font-semibold tracking-wide text-slate-500">Latchkey console</p>
        <div className="rounded-xl border border-slate-200 bg-white p-6 shadow-sm sm:p-8">
          <h1 className="mb-4 text-xl font-semibold tracking-tight">{title}</h1>
          {children}
        </div>
      </div>
    </main>
  );
}
