import type { Metadata } from "next";
import { ConfirmedAction } from "@/components/console/confirmed-action";
import { UserDevice } from "@/components/console/user-device";
import { notFound } from "next/navigation";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, Checkbox, Field, Select, SubmitButton } from "@/components/ui/form";
import { Notice, PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { Time } from "@/components/ui/time";
import { listOrganizations, listRoles, listUserRoles } from "@/lib/authz/model";
import { PASSWORD_MIN_LENGTH } from "@/lib/authn/password";
import { roleAtLeast } from "@/lib/console/authz";
import { FACTOR_KIND_LABELS, userFactors } from "@/lib/console/factors";
import { getUser, userFootprint, userLastActivity, userSessionsAndGrants } from "@/lib/console/users";
import { userIdentities } from "@/lib/console/identities";
import { getService } from "@/lib/service";
import { parseUserAgent } from "@/lib/user-agent";
import { actionFor } from "../../../../../_lib/action-for";
import { pageAccess } from "../../../../../_lib/session";
import { countOf } from "@/lib/i18n/plural";
import { RECOVERY_CODE_EVIDENCE } from "@/lib/authn/factors/recovery-codes/evidence";

export const metadata: Metadata = { title: "User" };

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
  const endsText = `${countOf(footprint.sessions, "live sign-in session", "live sign-in sessions")}, ${countOf(footprint.grants, "application grant", "application grants")} (with their refresh and access tokens) and ${countOf(footprint.portalSessions, "account-security portal session", "account-security portal sessions")}`;
  const liveSessions = activity.sessions.filter((s) => s.live);
  const memberOf = organizations.filter((o) => o.members.some((m) => m.userId === user.id));
  const hidden = { user_id: user.id };
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
        <div className="grid gap-6 lg:grid-cols-2">
          <Card title="Profile">
            <ActionForm action={actionFor("updateUserProfile", ws)} hidden={hidden} readOnly={readOnly} successMessage="Saved." label="Profile">
              <Field name="name" label="Name" optional defaultValue={user.name ?? ""} />
              <Checkbox name="email_verified" label="The email address is verified" defaultChecked={user.emailVerified} />
              <SubmitButton variant="secondary">Save profile</SubmitButton>
            </ActionForm>
          </Card>
          <Card title="Password">
            <ActionForm action={actionFor("setUserPassword", ws)} hidden={hidden} readOnly={readOnly} successMessage="Password set." label="Set password">
              <Field name="password" label="New password" type="password" hint={`At least ${PASSWORD_MIN_LENGTH} characters. Existing sessions are not ended; end them below if needed.`} />
              <SubmitButton variant="secondary">Set password</SubmitButton>
            </ActionForm>
          </Card>
        </div>
        <Card title="Access" description="Disabling keeps the account and ends its access now; deleting removes it for good.">
          <div className="space-y-3">
            <ActionForm action={actionFor("setUserStatus", ws)} hidden={{ ...hidden, status: user.status === "active" ? "disabled" : "active" }} readOnly={readOnly} label="User status">
              <div>
                {user.status === "active" ? (
                  <ConfirmButton
                    title={`Disable ${user.email}?`}
                    message={`They cannot sign in, and this ends their ${endsText} at once. Enabling them again later does not bring these back: they sign in anew.`}
                    confirmLabel="Disable user"
                    size="md"
                  >
                    Disable user
                  </ConfirmButton>
                ) : (
                  <SubmitButton variant="secondary">Enable user</SubmitButton>
                )}
              </div>
            </ActionForm>
            <ConfirmedAction
              action={actionFor("deleteUser", ws)}
              hidden={hidden}
              readOnly={readOnly}
              opener="Delete user…"
              title={`Delete ${user.email} for good?`}
              consequences={
                <>
                  <p>This ends their {endsText}, and removes their password, factors, linked sign-ins, roles and organization memberships.</p>
                  <p>The audit log keeps what happened. Creating a user with the same email later starts a new account.</p>
                </>
              }
              confirmValue={user.email}
              confirmWhat="the user's email"
              submitLabel="Delete user"
            />
          </div>
        </Card>
        <Card id="devices" title="Devices" description="Where the user is signed in now: the browser and system of each live session, from its user agent.">
          {liveSessions.length === 0 ? (
            <EmptyState title="Not signed in anywhere" />
          ) : (
            <ul className="divide-y divide-slate-100">
              {liveSessions.map((s) => (
                <li key={s.id} className="flex flex-wrap items-center justify-between gap-3 py-2" data-testid="user-device">
                  <UserDevice userAgent={s.userAgent} ip={s.ip} lastSeenAt={s.lastSeenAt} signedInAt={s.createdAt} now={now} />
                  <ActionForm action={actionFor("endUserSession", ws)} hidden={{ ...hidden, session_id: s.id }} readOnly={readOnly} className="" label="End session">
                    <ConfirmButton title="End this session?" message="The user is signed out on this device, and applications that rely on it lose access at their next check." confirmLabel="End session">
                      End session
                    </ConfirmButton>
                  </ActionForm>
                </li>
              ))}
            </ul>
          )}
        </Card>
        <Card
          id="factors"
          title="Sign-in factors"
          description="Passkeys, security keys, authenticator apps and recovery codes the user enrolled. Remove a lost one to let the user sign in with what is left; where the policy requires MFA they enrol a new factor while signing in."
        >
          {factors.length === 0 ? (
            <EmptyState title="No factors enrolled">{user.hasPassword ? "The user signs in with a password or an email code." : "The user signs in with an email code."}</EmptyState>
          ) : (
            <Table caption="Sign-in factors" head={["Kind", "Name", "Created", "Last used", ""]}>
              {factors.map((f) => (
                <tr key={`${f.kind}-${f.id}`}>
                  <Td>
                    <span className="flex flex-wrap items-center gap-2">
                      {FACTOR_KIND_LABELS[f.kind]}
                      {f.flagged ? (
                        <Badge tone="red" title="Its signature counter went backwards: it may have been cloned. It is refused at sign-in.">
                          flagged
                        </Badge>
                      ) : null}
                    </span>
                  </Td>
                  <Td>
                    {f.name}
                    {f.remaining !== undefined ? <div className="text-xs text-slate-500">{countOf(f.remaining, "code", "codes")} left</div> : null}
                  </Td>
                  <Td>
                    <Time value={f.createdAt} />
                  </Td>
                  <Td>
                    <Time value={f.lastUsedAt} now={now} relativeOnly />
                  </Td>
                  <Td>
                    <ActionForm action={actionFor("removeUserFactor", ws)} hidden={{ ...hidden, kind: f.kind, factor_id: f.id }} readOnly={readOnly} className="" label={`Remove ${FACTOR_KIND_LABELS[f.kind]} ${f.name}`}>
                      <ConfirmButton
                        title={f.kind === RECOVERY_CODE_EVIDENCE.method ? "Remove all recovery codes?" : `Remove ${f.name}?`}
                        message="The user can no longer sign in with it. Do this only after confirming who is asking; their sessions stay live (end them below if the factor was stolen)."
                        confirmLabel="Remove"
                      >
                        Remove
                      </ConfirmButton>
                    </ActionForm>
                  </Td>
                </tr>
              ))}
            </Table>
          )}
        </Card>
        <Card
          id="identities"
          title="Linked sign-ins"
          description="Enterprise connections and social providers this user signs in with, by the provider's issuer and subject. Unlinking stops that sign-in from reaching this account; sessions already open stay (end them below)."
        >
          {identities.length === 0 ? (
            <EmptyState title="No linked sign-ins">The user signs in with this service&apos;s own methods only.</EmptyState>
          ) : (
            <Table caption="Linked sign-ins" head={["Through", "Upstream identity", "Email (as the provider said)", "Linked", "Last sign-in", ""]}>
              {identities.map((i) => (
                <tr key={i.id}>
                  <Td>
                    {i.sourceName ?? <span className="text-slate-600">removed provider</span>}
                    <div className="text-xs text-slate-600">{i.kind === "connection" ? "Enterprise connection" : i.kind === "social" ? "Social provider" : ""}</div>
                  </Td>
                  <Td>
                    <div className="break-all font-mono text-xs">{i.issuer}</div>
                    <div className="break-all font-mono text-xs text-slate-600">{i.subject}</div>
                  </Td>
                  <Td>
                    {i.email ?? "—"} {i.email ? i.emailVerified ? <Badge tone="green">verified</Badge> : <Badge>unverified</Badge> : null}
                  </Td>
                  <Td>
                    <Time value={i.createdAt} />
                  </Td>
                  <Td>
                    <Time value={i.lastSignInAt} now={now} relativeOnly />
                  </Td>
                  <Td>
                    <ActionForm action={actionFor("unlinkUserIdentity", ws)} hidden={{ ...hidden, identity_id: i.id }} readOnly={readOnly} className="" label={`Unlink ${i.sourceName ?? i.issuer}`}>
                      <ConfirmButton title="Unlink this sign-in?" message="Signing in through it will no longer reach this account. Open sessions stay live; end them below if needed." confirmLabel="Unlink">
                        Unlink
                      </ConfirmButton>
                    </ActionForm>
                  </Td>
                </tr>
              ))}
            </Table>
          )}
        </Card>
        <Card title="Roles" description="Held across the workspace, or within an organization the user is a member of.">
          <div className="space-y-4">
            {userRoles.length === 0 ? (
              <p className="text-sm text-slate-500">No roles.</p>
            ) : (
              <ul className="divide-y divide-slate-100">
                {userRoles.map((r) => (
                  <li key={`${r.role}-${r.organization?.id ?? "ws"}`} className="flex flex-wrap items-center justify-between gap-2 py-2">
                    <span className="text-sm">
                      <span className="font-medium">{r.role}</span> <span className="text-slate-500">{r.organization ? `in ${r.organization.name}` : "across the workspace"}</span>
                    </span>
                    <ActionForm action={actionFor("removeRole", ws)} hidden={{ ...hidden, role: r.role, organization: r.organization?.slug ?? "" }} readOnly={readOnly} className="" label="Remove role">
                      <ConfirmButton title={`Remove ${r.role}?`} message="The user loses the permissions it grants at their next permission check." confirmLabel="Remove">
                        Remove
                      </ConfirmButton>
                    </ActionForm>
                  </li>
                ))}
              </ul>
            )}
            {roles.length === 0 ? (
              <p className="text-sm text-slate-500">This workspace has no roles yet.</p>
            ) : (
              <ActionForm action={actionFor("assignRole", ws)} hidden={hidden} readOnly={readOnly} className="grid items-end gap-3 sm:grid-cols-[1fr_1fr_auto]" label="Assign role">
                <Select name="role" label="Role" options={roles.map((r) => ({ value: r.name, label: r.name }))} />
                <Select name="organization" label="Where" options={[{ value: "", label: "Across the workspace" }, ...memberOf.map((o) => ({ value: o.slug, label: `In ${o.name}` }))]} />
                <SubmitButton variant="secondary">Assign</SubmitButton>
              </ActionForm>
            )}
          </div>
        </Card>
        <Card title="Hosted sessions" description="Browser sessions on the sign-in pages. Ending one ends every application sign-in made in it.">
          {activity.sessions.length === 0 ? (
            <EmptyState title="No sessions" />
          ) : (
            <Table caption="Hosted sessions" head={["Device", "Signed in", "Last seen", "Methods", "From", ""]}>
              {activity.sessions.map((s) => (
                <tr key={s.id}>
                  <Td>
                    {parseUserAgent(s.userAgent).label}
                    <div className="font-mono text-xs text-slate-500">{s.id.slice(0, 8)}…</div>
                  </Td>
                  <Td>
                    <Time value={s.createdAt} />
                  </Td>
                  <Td>
                    <Time value={s.lastSeenAt} now={now} relativeOnly />
                  </Td>
                  <Td mono>{s.amr.join(" ")}</Td>
                  <Td className="max-w-48 truncate text-xs text-slate-500">{s.ip ?? "—"}</Td>
                  <Td>
                    {s.live ? (
                      <ActionForm action={actionFor("endUserSession", ws)} hidden={{ ...hidden, session_id: s.id }} readOnly={readOnly} className="" label="End session">
                        <ConfirmButton title="End this session?" message="The user is signed out of it, and applications that rely on it lose access at their next check." confirmLabel="End session">
                          End
                        </ConfirmButton>
                      </ActionForm>
                    ) : (
                      <Badge>{s.endedAt ? `ended${s.endReason ? ` (${s.endReason})` : ""}` : "expired"}</Badge>
                    )}
                  </Td>
                </tr>
              ))}
            </Table>
          )}
        </Card>
        <Card title="Grants" description="One per application sign-in: the refresh family behind the application's tokens.">
          {activity.grants.length === 0 ? (
            <EmptyState title="No grants" />
          ) : (
            <Table caption="Grants" head={["Application", "Scope", "Created", "Last used", ""]}>
              {activity.grants.map((g) => (
                <tr key={g.id}>
                  <Td>
                    {g.clientName}
                    <div className="font-mono text-xs text-slate-500">{g.clientId}</div>
                  </Td>
                  <Td mono className="max-w-64 break-words">
                    {g.scope.join(" ")}
                  </Td>
                  <Td>
                    <Time value={g.createdAt} />
                  </Td>
                  <Td>
                    <Time value={g.lastUsedAt} now={now} relativeOnly />
                  </Td>
                  <Td>
                    {g.live ? (
                      <ActionForm action={actionFor("revokeUserGrant", ws)} hidden={{ ...hidden, grant_id: g.id }} readOnly={readOnly} className="" label="Revoke grant">
                        <ConfirmButton title="Revoke this grant?" message="Its refresh token and access tokens stop working now; the application must sign the user in again." confirmLabel="Revoke">
                          Revoke
                        </ConfirmButton>
                      </ActionForm>
                    ) : (
                      <Badge>{g.revokedAt ? `revoked${g.revokeReason ? ` (${g.revokeReason})` : ""}` : "ended"}</Badge>
                    )}
                  </Td>
                </tr>
              ))}
            </Table>
          )}
        </Card>
      </div>
    </>
  );
}
