export function HostedCard({ title, workspaceName, children }: { title: string; workspaceName: string; children: React.ReactNode }) {
  return (
    <main className="flex min-h-screen items-center justify-center px-4 py-12">
      <div className="w-full max-w-sm">
        <p className="mb-4 text-center text-sm font-medium text-slate-500">{workspaceName}</p>
        <div className="rounded-xl border border-slate-200 bg-white p-6 shadow-sm sm:p-8">
          <h1 className="mb-6 text-xl font-semibold tracking-tight">{title}</h1>
          {children}
        </div>
        <p className="mt-6 text-center text-xs text-slate-500">Secured by Latchkey</p>
      </div>
    </main>
  );
}
