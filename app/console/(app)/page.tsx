import type { Metadata } from "next";
import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ActionForm, Field, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { Time } from "@/components/ui/time";
import { canCreateWorkspaces, listOperatorWorkspaces } from "@/lib/console/workspaces";
import { getService } from "@/lib/service";
import { createWorkspaceAction } from "../_lib/actions";
import { pageOperator } from "../_lib/session";

export const metadata: Metadata = { title: "Workspaces" };

export default async function WorkspacesPage() {
  const operator = await pageOperator("/console");
  const service = await getService();
  const [workspaces, canCreate] = await Promise.all([listOperatorWorkspaces(service, operator.userId), canCreateWorkspaces(service, operator.userId)]);
  return (
    <main id="content" className="mx-auto max-w-5xl px-4 py-8">
      <PageHeader
        crumbs={[{ label: "Workspaces" }]}
        title="Workspaces"
        description="Each workspace is a separate issuer with its own applications, users and keys. You see the workspaces you are an operator of."
      />
      <div className="grid gap-6 lg:grid-cols-3">
        <div className="lg:col-span-2">
          <Card title="Your workspaces">
            {workspaces.length === 0 ? (
              <EmptyState title="No workspaces yet">You are not an operator of any workspace. Ask a workspace&apos;s owner to invite you.</EmptyState>
            ) : (
              <Table caption="Your workspaces" head={["Workspace", "Your role", "Applications", "Users", "Created"]}>
                {workspaces.map((w) => (
                  <tr key={w.id}>
                    <Td>
                      <Link prefetch={false} href={`/console/w/${w.id}`} className="font-medium text-indigo-700 hover:underline">
                        {w.name}
                      </Link>
                      <div className="font-mono text-xs text-slate-500">{w.id}</div>
                    </Td>
                    <Td>
                      <Badge tone={w.role === "viewer" ? "neutral" : "indigo"}>{w.role}</Badge>
                    </Td>
                    <Td>{w.applications}</Td>
                    <Td>{w.users}</Td>
                    <Td>
                      <Time value={w.createdAt} />
                    </Td>
                  </tr>
                ))}
              </Table>
            )}
          </Card>
        </div>
        {canCreate ? (
          <Card title="Create a workspace" description="You become its owner.">
            <ActionForm action={createWorkspaceAction} label="Create a workspace">
              <Field name="id" label="Id" hint="Part of the issuer URL: /t/<id>. 2–63 of a–z, 0–9 and -." placeholder="acme-prod" />
              <Field name="name" label="Name" placeholder="Acme (production)" />
              <SubmitButton>Create workspace</SubmitButton>
            </ActionForm>
          </Card>
        ) : (
          <Card title="New workspaces">
            <p className="text-sm text-slate-600">The installation&apos;s operators create workspaces. Ask one of them for a workspace; its owner then invites you.</p>
          </Card>
        )}
      </div>
    </main>
  );
}
