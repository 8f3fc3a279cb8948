import type { Metadata } from "next";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, SubmitButton } from "@/components/ui/form";
import { Notice, PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { Time } from "@/components/ui/time";
import { roleAtLeast } from "@/lib/console/authz";
import { DAY } from "@/lib/clock";
import { JWKS_MAX_AGE_MS, listSigningKeys, RETIRED_KEY_PUBLISHED_MS } from "@/lib/oauth/keys";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../_lib/action-for";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Signing keys" };

export default async function KeysPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/keys`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const keys = await listSigningKeys(service, ws);
  const now = service.clock.now();
  const readOnly = !roleAtLeast(access.role, "admin");
  const pending = keys.find((k) => k.status === "published");
  const active = keys.find((k) => k.status === "active");
  const ready = pending?.activatableAt ? pending.activatableAt <= now : false;
  const ageDays = active ? Math.floor((now.getTime() - (active.activatedAt ?? active.createdAt).getTime()) / DAY) : null;
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Signing keys" }]}
        title="Signing keys"
        description="ES256 keys that sign this workspace's ID tokens, published in its JWKS."
      />
      <div className="space-y-6">
        <Card title="Rotate" description="Two steps, so no verifier ever meets a token signed by a key it has not seen.">
          <ol className="mb-4 list-inside list-decimal space-y-1 text-sm text-slate-600">
            <li>Publish a new key: it appears in JWKS but signs nothing yet.</li>
            <li>
              After {JWKS_MAX_AGE_MS / 60_000} minutes (the JWKS cache lifetime), activate it: it signs from then on, and the old key stays in JWKS for another{" "}
              {RETIRED_KEY_PUBLISHED_MS / 60_000} minutes, until every token it signed has expired.
            </li>
          </ol>
          {ageDays !== null && ageDays > 180 ? <Notice tone="warning">The active key is {ageDays} days old. Consider rotating it.</Notice> : null}
          <div className="mt-4 flex flex-wrap gap-3">
            <ActionForm action={actionFor("publishKey", ws)} readOnly={readOnly || !!pending} className="" successMessage="Published." label="Publish a new key">
              <SubmitButton variant={pending ? "secondary" : "primary"}>1. Publish a new key</SubmitButton>
            </ActionForm>
            <ActionForm action={actionFor("activateKey", ws)} readOnly={readOnly || !pending || !ready} className="" successMessage="Activated." label="Activate the new key">
              <ConfirmButton title="Activate the new key?" message="It signs every ID token from now on. The current key stays published until its tokens have expired." confirmLabel="Activate" variant="primary" size="md">
                2. Activate it
              </ConfirmButton>
            </ActionForm>
          </div>
          {pending ? (
            <p className="mt-3 text-sm text-slate-600">
              {ready ? (
                "The published key has been in JWKS long enough: it can be activated."
              ) : (
                <>
                  The published key can be activated <Time value={pending.activatableAt} now={now} relativeOnly /> (reload then).
                </>
              )}
            </p>
          ) : null}
        </Card>
        <Card title="Keys">
          {keys.length === 0 ? (
            <EmptyState title="No key yet">The first key is created when this workspace first signs a token.</EmptyState>
          ) : (
            <Table caption="Signing keys" head={["Key id", "Status", "Created", "Signing since", "In JWKS"]}>
              {keys.map((k) => (
                <tr key={k.kid}>
                  <Td mono>{k.kid}</Td>
                  <Td>
                    <Badge tone={k.status === "active" ? "green" : k.status === "published" ? "indigo" : "neutral"}>{k.status}</Badge>
                  </Td>
                  <Td>
                    <Time value={k.createdAt} now={now} />
                  </Td>
                  <Td>{k.activatedAt ? <Time value={k.activatedAt} /> : <span className="text-slate-500">—</span>}</Td>
                  <Td>
                    {k.inJwks ? (
                      k.status === "retired" && k.unpublishAt ? (
                        <span className="text-xs">
                          until <Time value={k.unpublishAt} now={now} relativeOnly />
                        </span>
                      ) : (
                        <Badge tone="green">yes</Badge>
                      )
                    ) : (
                      <span className="text-slate-500">no</span>
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
