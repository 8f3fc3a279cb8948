import type { Metadata } from "next";
import { headers } from "next/headers";
import { notFound } from "next/navigation";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { HostedCard } from "@/components/hosted/hosted-card";
import { FormError, inputClass, primaryButtonClass } from "@/components/hosted/steps/step-form";
import { DirectoryCard } from "@/components/console/scim/directory-card";
import { ConnectionsCard, DomainsCard, InvitationsCard } from "@/app/_organizations/cards";
import { listOrganizations, listRoles } from "@/lib/authz/model";
import { connectionIssuer, listConnections } from "@/lib/console/organizations";
import { CONNECTION_KINDS } from "@/lib/federation/protocols";
import { listDomains } from "@/lib/federation/domains";
import { listPendingInvitations } from "@/lib/organizations/invitations";
import { directoryView } from "@/lib/organizations/scim/console";
import { ENTRY_ERRORS, entryView, mayRun, PORTAL_PATH, PORTAL_SIGN_OUT_POST, portalEntry, type PortalAccess } from "@/lib/organizations/admin-portal";
import { requestContext } from "@/lib/server/router";
import { getService, type Service } from "@/lib/service";
import { TestConnectionButton } from "@/components/console/federation/test-connection-button";
import { portalAction, portalConnectionAction, portalTestConnectionAction } from "./actions";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Admin portal", robots: { index: false }, referrer: "no-referrer" };

const first = (v: string | string[] | undefined) => (typeof v === "string" ? v : undefined);

/**
 * An organization's admin portal (lib/organizations/admin-portal): a setup link's page (a code to
 * the link's address opens it), or the portal itself for whoever is in it: the organization's
 * connections, domains, directory and members, and its invitations for its administrators. Every
 * form runs a console operation through the portal's action, scoped to this organization.
 */
export default async function AdminPortalPage(props: { params: Promise<{ tenant: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const [{ tenant }, query] = await Promise.all([props.params, props.searchParams]);
  const service = await getService();
  const h = await headers();
  const ctx = await requestContext(service, h, tenant);
  if (!ctx) notFound();

  const link = first(query.link);
  if (link !== undefined) {
    const view = await entryView(ctx, { link, sent: first(query.sent), error: first(query.error) });
    if (view.kind === "unavailable") {
      return (
        <HostedCard title="This setup link cannot be used">
          <p className="text-sm text-slate-600" data-testid="setup-link-unavailable">
            It was used, revoked or has expired. Ask the team that sent it for a new one.
          </p>
        </HostedCard>
      );
    }
    return (
      <HostedCard title={`Set up ${view.organization}`}>
        <div className="space-y-4">
          <FormError message={view.error ? ENTRY_ERRORS[view.error] : undefined} />
          <p className="text-sm text-slate-600">
            This link opens the admin portal of {view.organization} in {view.workspace}: single sign-on, email domains and user provisioning. First confirm that you receive email at{" "}
            <span className="font-medium">{view.address}</span>.
          </p>
          {view.codeSent ? (
            <form method="post" action={view.startAction} className="space-y-3">
              <input type="hidden" name="link" value={view.token} />
              <input type="hidden" name="csrf" value={view.csrf} />
              <label htmlFor="code" className="block text-sm font-medium text-slate-700">
                Code from the email
              </label>
              <input id="code" name="code" inputMode="numeric" autoComplete="one-time-code" required className={inputClass} />
              <button type="submit" className={primaryButtonClass}>
                Open the portal
              </button>
            </form>
          ) : null}
          <form method="post" action={view.codeAction}>
            <input type="hidden" name="link" value={view.token} />
            <input type="hidden" name="csrf" value={view.csrf} />
            <button type="submit" className={view.codeSent ? "text-sm font-medium text-indigo-700 hover:underline" : primaryButtonClass}>
              {view.codeSent ? "Send another code" : "Send me a code"}
            </button>
          </form>
        </div>
      </HostedCard>
    );
  }

  const chosen = first(query.organization) ?? null;
  const entry = await portalEntry(ctx, h.get("cookie"), chosen);
  if (entry.kind === "none") {
    return (
      <HostedCard title="Admin portal">
        <div className="space-y-3 text-sm text-slate-600" data-testid="portal-closed">
          {first(query.signed_out) ? <p role="status">You have left the portal.</p> : null}
          <p>Open the setup link you were sent to set up your organization.</p>
          <p>Administrators of an organization: sign in to one of {ctx.workspace.name}&apos;s applications in this browser, then open this page again.</p>
        </div>
      </HostedCard>
    );
  }
  if (entry.kind === "choose") {
    return (
      <HostedCard title="Choose an organization">
        <ul className="space-y-2 text-sm">
          {entry.organizations.map((o) => (
            <li key={o.slug}>
              <a className="font-medium text-indigo-700 hover:underline" href={`${ctx.basePath}${PORTAL_PATH}?organization=${encodeURIComponent(o.slug)}`}>
                {o.name}
              </a>
            </li>
          ))}
        </ul>
      </HostedCard>
    );
  }
  return <Portal service={service} access={entry.access} basePath={ctx.basePath} chosen={chosen} protocol={first(query.protocol)} />;
}

async function Portal({ service, access, basePath, chosen, protocol }: { service: Service; access: PortalAccess; basePath: string; chosen: string | null; protocol?: string }) {
  const ws = access.workspace.id;
  const org = access.organization;
  const person = access.person;
  const administrator = person.via === "organization_administrator";
  const [connections, domains, roles, directory, orgs, invitations] = await Promise.all([
    listConnections(service, ws, org.id),
    listDomains(service.db, ws, org.id),
    listRoles(service.db, ws),
    directoryView(service, ws, org),
    listOrganizations(service.db, ws),
    person.via === "organization_administrator"
      ? listPendingInvitations(service, service.db, { workspaceId: ws, organizationId: org.id, actor: { kind: "organization_administrator", userId: person.userId } })
      : Promise.resolve([]),
  ]);
  const members = orgs.find((o) => o.id === org.id)?.members ?? [];
  const act = (name: string) => portalAction.bind(null, ws, chosen, name);
  const path = `${basePath}${PORTAL_PATH}${chosen ? `?organization=${encodeURIComponent(chosen)}` : ""}`;
  const kind = CONNECTION_KINDS.find((k) => k === protocol) ?? CONNECTION_KINDS[0];
  return (
    <main className="mx-auto w-full max-w-4xl flex-1 space-y-6 px-4 py-8">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold tracking-tight" data-testid="portal-title">
            {org.name}: admin portal
          </h1>
          <p className="text-sm text-slate-600">
            Signed in as <span className="font-medium">{access.person.email}</span> ({administrator ? "an administrator of the organization" : "with a setup link"}). Every change is recorded under this address.
          </p>
        </div>
        {administrator ? null : (
          <form method="post" action={`${basePath}${PORTAL_SIGN_OUT_POST}`}>
            <button type="submit" className="text-sm font-medium text-indigo-700 hover:underline">
              Leave the portal
            </button>
          </form>
        )}
      </div>
      <ConnectionsCard
        orgId={org.id}
        issuer={connectionIssuer(service, ws)}
        connections={connections}
        roles={roles}
        readOnly={false}
        chosen={kind}
        path={path}
        actions={{ save: portalConnectionAction.bind(null, ws, chosen) }}
        extra={(c) => <TestConnectionButton action={portalTestConnectionAction.bind(null, ws, chosen)} organizationId={org.id} connectionId={c.id} connectionName={c.name} readOnly={false} />}
      />
      <DomainsCard orgId={org.id} domains={domains} hasConnection={connections.some((c) => c.active)} readOnly={false} actions={{ add: act("addDomain"), check: act("checkDomainDns"), remove: act("removeDomain") }} />
      <DirectoryCard organizationId={org.id} view={directory} readOnly={false} actions={{ save: act("saveDirectorySettings"), issue: act("issueScimToken"), revoke: act("revokeScimToken") }} />
      <Card id="members" title="Members" description="The people of this organization in this workspace.">
        {members.length === 0 ? (
          <EmptyState title="No members yet" />
        ) : (
          <Table caption="Members" head={["Member", "Name"]}>
            {members.map((m) => (
              <tr key={m.userId} data-testid="portal-member">
                <Td>{m.email}</Td>
                <Td>{m.name ?? <span className="text-slate-500">—</span>}</Td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      {mayRun(access, "inviteOrganizationMember") ? (
        <InvitationsCard
          orgId={org.id}
          invitations={invitations}
          roles={roles}
          applications={[]}
          readOnly={false}
          actions={{ invite: act("inviteOrganizationMember"), resend: act("resendOrganizationInvitation"), withdraw: act("withdrawOrganizationInvitation") }}
        />
      ) : (
        <p className="text-sm text-slate-500">
          <Badge>invitations</Badge> The organization&apos;s administrators invite people from this portal after signing in.
        </p>
      )}
    </main>
  );
}
