import type { Metadata } from "next";
import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ActionForm, Field, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { Table, Td } from "@/components/ui/table";
import { Time } from "@/components/ui/time";
import { accountView, listOwnSessions } from "@/lib/console/operator-accounts";
import { OPERATOR_PASSWORD_MIN_LENGTH } from "@/lib/operators/accounts";
import { getService } from "@/lib/service";
import { pageOperator } from "../../_lib/session";
import { endSessionAction, setPasswordAction } from "./actions";

export const metadata: Metadata = { title: "Your account" };

/**
 * The signed-in operator's own account (lib/console/operator-accounts.ts): their password (set or
 * change it; the address is told) and their console sessions (end any).
 */
export default async function AccountPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const operator = await pageOperator("/console/account");
  const query = await searchParams;
  const service = await getService();
  const [account, sessions] = await Promise.all([accountView(service, operator), listOwnSessions(service, operator)]);
  return (
    <main id="content" className="mx-auto max-w-5xl px-4 py-8">
      <PageHeader crumbs={[{ label: "Workspaces", href: "/console" }, { label: "Your account" }]} title="Your account" description={`${account.name ? `${account.name} · ` : ""}${account.email}`} />
      {query.proven === "1" ? (
        <p role="status" className="mb-6 rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900">
          Your address is confirmed. This account had a password that was set before anyone confirmed the address, so it was removed, and every other session of the account was ended. Set your own
          password below, or <Link href="/console" className="font-medium underline">go on without one</Link> and sign in with email codes.
        </p>
      ) : null}
      <div className="grid gap-6 lg:grid-cols-2">
        <Card title="Password" description={account.hasPassword ? "Change your password. Every other session of your account ends." : "Your account has no password: you sign in with email codes. Set one if you want to."}>
          <ActionForm action={setPasswordAction} label={account.hasPassword ? "Change your password" : "Set a password"} successMessage="Password saved. Every other session of your account was ended.">
            {account.hasPassword ? <Field name="current" label="Current password" type="password" autoComplete="current-password" /> : null}
            <Field name="password" label="New password" type="password" autoComplete="new-password" hint={`At least ${OPERATOR_PASSWORD_MIN_LENGTH} characters.`} />
            <Field name="password_confirm" label="Repeat the new password" type="password" autoComplete="new-password" />
            <SubmitButton>{account.hasPassword ? "Change password" : "Set password"}</SubmitButton>
          </ActionForm>
        </Card>
        <Card title="Console sessions" description="Where you are signed in to the console. Ending one signs that browser out.">
          <Table caption="Your console sessions" head={["Signed in", "Last seen", "From", ""]}>
            {sessions.map((s) => (
              <tr key={s.id}>
                <Td>
                  <Time value={s.createdAt} />
                  {s.current ? (
                    <span className="ml-2">
                      <Badge tone="indigo">this browser</Badge>
                    </span>
                  ) : null}
                </Td>
                <Td>
                  <Time value={s.lastSeenAt} />
                </Td>
                <Td>
                  <div className="text-xs text-slate-600">{s.ip ?? "—"}</div>
                  <div className="max-w-48 truncate text-xs text-slate-500" title={s.userAgent ?? undefined}>
                    {s.userAgent ?? ""}
                  </div>
                </Td>
                <Td>
                  <ActionForm action={endSessionAction} hidden={{ session_id: s.id }} label={`End the session signed in ${s.createdAt.toISOString()}`} className="" successMessage="Session ended.">
                    <SubmitButton variant="secondary" size="sm">
                      End
                    </SubmitButton>
                  </ActionForm>
                </Td>
              </tr>
            ))}
          </Table>
        </Card>
      </div>
    </main>
  );
}
