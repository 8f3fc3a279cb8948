import type { Metadata } from "next";
import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { LinkButton } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { Time } from "@/components/ui/time";
import { listApplications, typeLabels } from "@/lib/console/applications";
import { roleAtLeast } from "@/lib/console/authz";
import { expiresSoon, latestSecretExpiries } from "@/lib/console/secret-expiry";
import { getService } from "@/lib/service";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Applications" };

export default async function ApplicationsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/applications`);
  const service = await getService();
  const now = service.clock.now();
  const [apps, expiries] = await Promise.all([listApplications(service, access.workspace.id), latestSecretExpiries(service.db, access.workspace.id, now)]);
  const base = `/console/w/${access.workspace.id}`;
  const canChange = roleAtLeast(access.role, "admin");
  const create = canChange ? (
    <LinkButton href={`${base}/applications/new`} variant="primary">
      New application
    </LinkButton>
  ) : null;
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Applications" }]}
        title="Applications"
        description="OAuth clients that sign users in (public and confidential web) or call APIs as themselves (machine-to-machine)."
        actions={create}
      />
      <Card>
        {apps.length === 0 ? (
          <EmptyState title="No applications yet" action={create}>
            Create one for each app that signs users in, and one for each backend service that calls an API.
          </EmptyState>
        ) : (
          <Table caption="Applications" head={["Application", "Kind", "Status", "Redirect URIs", "Secret"]}>
            {apps.map((app) => {
              const expiry = expiries.get(app.id)?.expiresAt;
              const soon = expiry && expiresSoon(expiry, now);
              return (
                <tr key={app.id}>
                  <Td>
                    <Link prefetch={false} href={`${base}/applications/${encodeURIComponent(app.clientId)}`} className="font-medium text-indigo-700 hover:underline">
                      {app.name}
                    </Link>
                    <div className="font-mono text-xs text-slate-500">{app.clientId}</div>
                  </Td>
                  <Td>
                    <Badge>{typeLabels[app.type]}</Badge>
                  </Td>
                  <Td>{app.active ? <Badge tone="green">enabled</Badge> : <Badge tone="red">disabled</Badge>}</Td>
                  <Td>{app.type === "M2M" ? <span className="text-slate-500">—</span> : app.redirectUris.length}</Td>
                  <Td>
                    {app.type === "PUBLIC" ? (
                      <span className="text-slate-500">none (public)</span>
                    ) : !expiry ? (
                      <Badge tone="red">no active secret</Badge>
                    ) : soon ? (
                      <Badge tone="amber" title="Rotate it before it expires">
                        expires <Time value={expiry} now={now} relativeOnly />
                      </Badge>
                    ) : (
                      <span className="text-xs text-slate-600">
                        expires <Time value={expiry} now={now} relativeOnly />
                      </span>
                    )}
                  </Td>
                </tr>
              );
            })}
          </Table>
        )}
      </Card>
    </>
  );
}
