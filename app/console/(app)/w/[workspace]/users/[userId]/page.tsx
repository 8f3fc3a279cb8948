import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { Badge } from "@/components/ui/badge";
import { Notice, PageHeader } from "@/components/ui/page-header";
import { Time } from "@/components/ui/time";
import { listOrganizations, listRoles, listUserRoles } from "@/lib/authz/model";
import { roleAtLeast } from "@/lib/console/authz";
import { FACTOR_KIND_LABELS, userFactors } from "@/lib/console/factors";
import { getUser, userFootprint, userLastActivity, userSessionsAndGrants } from "@/lib/console/users";
import { userIdentities } from "@/lib/console/identities";
import { getService } from "@/lib/service";
import { pageAccess } from "../../../../../_lib/session";
import { UserDangerZone } from "./access";
import { GrantsCard, SessionsCard } from "./activity";
import { DevicesCard } from "./devices";
import { FactorsCard } from "./factors";
import { IdentitiesCard } from "./identities";
import { ProfileCards } from "./profile";
import { RolesCard } from "./roles";

export const metadata: Metadata = { title: "User" };

/** One user: loads what its sections show, and composes them. */
export default async function UserPage({ params }: { params: Promise<{ workspace: string; userId: string }> }) {
  const { workspace, userId } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/users/${userId}`);
  const service = await getService();
  const ws = access.workspace.id;
  const user = await getUser(service, ws, userId);
  if (!user) notFound();
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  const now = service.clock.now();
  const [roles, userRoles, organizations, activity, factors, identities, footprint, last] = await Promise.all([
    listRoles(service.db, ws),
    listUserRoles(service.db, ws, user.id),
    listOrganizations(service.db, ws),
    userSessionsAndGrants(service, ws, user.id),
    userFactors(service, access.workspace, user.id),
    userIdentities(service, ws, user.id),
    userFootprint(service.db, ws, user.id, now),
    userLastActivity(service, ws, user.id),
  ]);
  const section = { ws, readOnly };
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Users", href: `${base}/users` }, { label: user.email }]}
        title={
          <span className="flex flex-wrap items-center gap-2">
            {user.email}
            {user.status === "active" ? <Badge tone="green">active</Badge> : <Badge tone="red">disabled</Badge>}
            {user.emailVerified ? <Badge tone="green">email verified</Badge> : <Badge>email unverified</Badge>}
          </span>
        }
        description={
          <span>
            Created {user.createdAt.toISOString().slice(0, 10)}
            {user.hasPassword ? "" : " · no password set"} · last sign-in {last.signIn ? <Time value={last.signIn} now={now} relativeOnly /> : "never"}
            {factors.length ? ` · factors: ${[...new Set(factors.map((f) => FACTOR_KIND_LABELS[f.kind]))].join(", ")}` : " · no second factors"}
          </span>
        }
      />
      <div className="space-y-6">
        {user.status === "disabled" ? <Notice tone="warning">This user is disabled: they cannot sign in, and every token issued to them fails the checks.</Notice> : null}
        <ProfileCards user={user} {...section} />
        <DevicesCard userId={user.id} sessions={activity.sessions} now={now} {...section} />
        <FactorsCard user={user} factors={factors} now={now} {...section} />
        <IdentitiesCard userId={user.id} identities={identities} now={now} {...section} />
        <RolesCard userId={user.id} roles={roles} userRoles={userRoles} organizations={organizations} {...section} />
        <SessionsCard userId={user.id} sessions={activity.sessions} now={now} {...section} />
        <GrantsCard userId={user.id} grants={activity.grants} now={now} {...section} />
        <UserDangerZone user={user} footprint={footprint} {...section} />
      </div>
    </>
  );
}
