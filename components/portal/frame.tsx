/**
 * The portal's page frame: the hosted look (components/hosted/hosted-card.tsx), wider, phone-width
 * first. The workspace's name and logo come from the hosted layout (app/t/[tenant]/layout.tsx).
 */
export function PortalFrame({ title, children }: { title: string; workspaceName?: string; children: React.ReactNode }) {
  return (
    <main className="flex flex-1 justify-center px-3 py-6 sm:px-4 sm:py-8">
      <div className="w-full max-w-xl">
        <div className="rounded-xl border border-slate-200 bg-white p-4 shadow-sm sm:p-8">
          <h1 className="mb-6 text-xl font-semibold tracking-tight">{title}</h1>
          <div className="space-y-6">{children}</div>
        </div>
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
