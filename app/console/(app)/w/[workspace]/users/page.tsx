import type { Metadata } from "next";
import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { buttonClass, LinkButton } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { PageHeader } from "@/components/ui/page-header";
import { Pagination } from "@/components/ui/pagination";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { Time } from "@/components/ui/time";
import { roleAtLeast } from "@/lib/console/authz";
import { FACTOR_KIND_LABELS } from "@/lib/console/factors";
import { listUsers } from "@/lib/console/users";
import { parseUserAgent } from "@/lib/user-agent";
import { getService } from "@/lib/service";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Users" };

export default async function UsersPage({ params, searchParams }: { params: Promise<{ workspace: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const [{ workspace }, query] = await Promise.all([params, searchParams]);
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/users`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const q = typeof query.q === "string" ? query.q.slice(0, 200) : "";
  const page = typeof query.page === "string" && /^\d{1,6}$/.test(query.page) ? Number(query.page) : 1;
  const result = await listUsers(service, ws, { page, query: q });
  const now = service.clock.now();
  const create = roleAtLeast(access.role, "admin") ? (
    <LinkButton href={`${base}/users/new`} variant="primary">
      New user
    </LinkButton>
  ) : null;
  const href = (p: number) => `${base}/users?${new URLSearchParams({ ...(q ? { q } : {}), page: String(p) })}`;
  return (
    <>
      <PageHeader crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Users" }]} title="Users" description="People who sign in to this workspace's applications." actions={create} />
      <Card>
        <form method="get" role="search" className="mb-4 flex flex-wrap gap-2">
          <label htmlFor="user-search" className="sr-only">
            Search users
          </label>
          <input
            id="user-search"
            name="q"
            defaultValue={q}
            placeholder="Search by email or name"
            className="min-w-0 flex-1 rounded-md border border-slate-300 px-3 py-2 text-sm shadow-sm focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-200"
          />
          <button type="submit" className={buttonClass("secondary")}>
            Search
          </button>
        </form>
        {result.rows.length === 0 ? (
          <EmptyState title={q ? "No users match" : "No users yet"} action={q ? null : create}>
            {q ? "Try another part of the email or name." : "Create users here, or import them with a workspace file."}
          </EmptyState>
        ) : (
          <>
            <Table caption="Users" head={["User", "Email verified", "Status", "Last sign-in", "Devices", "Factors", "Created"]}>
              {result.rows.map((u) => (
                <tr key={u.id}>
                  <Td>
                    <Link prefetch={false} href={`${base}/users/${u.id}`} className="font-medium text-indigo-700 hover:underline">
                      {u.email}
                    </Link>
                    {u.name ? <div className="text-xs text-slate-500">{u.name}</div> : null}
                  </Td>
                  <Td>{u.emailVerified ? <Badge tone="green">verified</Badge> : <Badge>unverified</Badge>}</Td>
                  <Td>{u.status === "active" ? <Badge tone="green">active</Badge> : <Badge tone="red">disabled</Badge>}</Td>
                  <Td>{u.lastSignInAt ? <Time value={u.lastSignInAt} now={now} relativeOnly /> : <span className="text-slate-600">never</span>}</Td>
                  <Td className="text-xs">
                    {u.deviceUserAgents.length === 0 ? (
                      <span className="text-slate-600">none</span>
                    ) : (
                      [...new Set(u.deviceUserAgents.map((ua) => parseUserAgent(ua).label))].join(", ")
                    )}
                  </Td>
                  <Td className="text-xs">{u.factorKinds.length === 0 ? <span className="text-slate-600">none</span> : u.factorKinds.map((k) => FACTOR_KIND_LABELS[k]).join(", ")}</Td>
                  <Td>
                    <Time value={u.createdAt} />
                  </Td>
                </tr>
              ))}
            </Table>
            <Pagination page={result.page} pages={result.pages} total={result.total} href={href} noun={["user", "users"]} />
          </>
        )}
      </Card>
    </>
  );
}
