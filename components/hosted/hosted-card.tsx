/**
 * The hosted pages' card. The workspace's name and logo are shown above it by the hosted layout
 * (app/t/[tenant]/layout.tsx), from the workspace's branding; `workspaceName` is accepted from
 * callers but no longer shown here.
 */
export function HostedCard({ title, children }: { title: string; workspaceName?: string; children: React.ReactNode }) {
  return (
    <main className="flex flex-1 items-center justify-center px-4 py-8 sm:py-12">
      <div className="w-full max-w-sm">
        <div className="rounded-xl border border-slate-200 bg-white p-6 shadow-sm sm:p-8">
          <h1 className="mb-6 text-xl font-semibold tracking-tight">{title}</h1>
          {children}
        </div>
      </div>
    </main>
  );
}
