/** The portal's page frame: the hosted look (components/hosted/hosted-card.tsx), wider, phone-width first. */
export function PortalFrame({ title, workspaceName, children }: { title: string; workspaceName: string; children: React.ReactNode }) {
  return (
    <main className="flex min-h-screen justify-center px-3 py-8 sm:px-4 sm:py-12">
      <div className="w-full max-w-xl">
        <p className="mb-4 text-center text-sm font-medium text-slate-500">{workspaceName}</p>
        <div className="rounded-xl border border-slate-200 bg-white p-4 shadow-sm sm:p-8">
          <h1 className="mb-6 text-xl font-semibold tracking-tight">{title}</h1>
          <div className="space-y-6">{children}</div>
        </div>
        <p className="mt-6 text-center text-xs text-slate-500">Secured by Latchkey</p>
      </div>
    </main>
  );
}

export function PortalSection({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <section className="border-t border-slate-100 pt-4 first:border-t-0 first:pt-0">
      <h2 className="mb-2 text-base font-semibold">{title}</h2>
      {children}
    </section>
  );
}
