import type { Metadata } from "next";
import { Card } from "@/components/ui/card";
import { Notice, PageHeader } from "@/components/ui/page-header";
import { EmptyState } from "@/components/ui/table";
import { Time } from "@/components/ui/time";
import { OUTBOX_PAGE_SIZE, workspaceOutbox } from "@/lib/console/outbox";
import { getService } from "@/lib/service";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Outbox" };

export default async function OutboxPage({ params, searchParams }: { params: Promise<{ workspace: string }>; searchParams: Promise<{ to?: string | string[] }> }) {
  const { workspace } = await params;
  const { to } = await searchParams;
  // The messages carry one-time sign-in codes: administrators only (a viewer could sign in as the user).
  const access = await pageAccess(workspace, "admin", `/console/w/${workspace}/outbox`);
  const service = await getService();
  const recipient = typeof to === "string" ? to.trim() : "";
  const { transport, messages } = await workspaceOutbox(service, access, { recipient });
  const base = `/console/w/${access.workspace.id}`;
  const now = service.clock.now();
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Outbox" }]}
        title="Development outbox"
        description="Email this workspace would have sent: sign-in codes and sign-up verifications."
      />
      <div className="space-y-6">
        {transport === "smtp" ? (
          <Notice tone="info">Mail is sent through the configured SMTP server. Messages below were stored before it was configured.</Notice>
        ) : transport === "outbox" ? (
          <Notice tone="warning" title="No SMTP server is configured">
            Email is not delivered: it is kept here (and printed to the server log) so you can try email codes while developing. Set <code className="font-mono">SMTP_URL</code> to send real mail
            (docs/configuration.md). The messages hold live sign-in codes: only administrators can read this page.
          </Notice>
        ) : (
          <Notice tone="warning" title="Email is unavailable">
            No SMTP server is configured and the service runs on https, so nothing is kept here: sign-in by email code and self-service sign-up are turned off rather than left undelivered. Set{" "}
            <code className="font-mono">SMTP_URL</code> to use them (docs/configuration.md).
          </Notice>
        )}
        <Card
          title={recipient ? `Messages to ${recipient}` : "Messages"}
          description={`Newest first; the latest ${OUTBOX_PAGE_SIZE}.`}
          actions={
            <form method="get" className="flex items-end gap-2" role="search" aria-label="Filter by recipient">
              <label className="text-sm text-slate-700">
                <span className="sr-only">Recipient</span>
                <input
                  type="email"
                  name="to"
                  defaultValue={recipient}
                  placeholder="Recipient"
                  className="block w-56 rounded-md border border-slate-300 px-3 py-1.5 text-sm shadow-sm focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-200"
                />
              </label>
              <button type="submit" className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-700 hover:bg-slate-50">
                Filter
              </button>
            </form>
          }
        >
          {messages.length === 0 ? (
            <EmptyState title="No messages">{recipient ? "Nothing was sent to this address." : "Nothing has been sent yet."}</EmptyState>
          ) : (
            <ul className="divide-y divide-slate-100" aria-label="Outbox messages">
              {messages.map((m) => (
                <li key={m.id} className="py-3 first:pt-0 last:pb-0">
                  <details>
                    <summary className="flex cursor-pointer flex-wrap items-baseline justify-between gap-x-4 gap-y-1 rounded focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-300">
                      <span className="min-w-0">
                        <span className="font-medium text-slate-900">{m.subject}</span> <span className="text-sm text-slate-500">to {m.recipient}</span>
                      </span>
                      <span className="text-sm text-slate-500">
                        <Time value={m.createdAt} now={now} />
                      </span>
                    </summary>
                    <pre className="mt-2 whitespace-pre-wrap break-words rounded-md bg-slate-50 p-3 font-mono text-xs text-slate-800">{m.text}</pre>
                  </details>
                </li>
              ))}
            </ul>
          )}
        </Card>
      </div>
    </>
  );
}
