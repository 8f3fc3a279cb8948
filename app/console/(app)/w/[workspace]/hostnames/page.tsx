import type { Metadata } from "next";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { Checkbox, ActionForm, Field, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState } from "@/components/ui/table";
import { formatUtc } from "@/components/ui/time";
import { ConfirmedAction } from "@/components/console/confirmed-action";
import { CopyValue, TxtRecord } from "@/components/console/federation/txt-record";
import { roleAtLeast } from "@/lib/console/authz";
import { hostnameFootprints } from "@/lib/hostnames/console";
import { hostnameTxtRecord, listHostnames, relatedOriginsOn, type HostnameInfo } from "@/lib/hostnames/hostnames";
import { issuerFor } from "@/lib/http/context";
import { countOf } from "@/lib/i18n/plural";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../_lib/action-for";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Hostnames" };

/** Pending, or Verified (by DNS | by the operator) with when. */
function HostnameStatus({ hostname }: { hostname: HostnameInfo }) {
  if (!hostname.verifiedAt) return <Badge tone="amber">Pending</Badge>;
  return (
    <span className="inline-flex flex-wrap items-center gap-1.5">
      <Badge tone="green">Verified</Badge>
      <span className="text-xs text-slate-600">
        {hostname.verificationMethod === "operator" ? "by the operator" : "by DNS"}, <time dateTime={hostname.verifiedAt.toISOString()}>{formatUtc(hostname.verifiedAt)}</time>
      </span>
    </span>
  );
}

export default async function HostnamesPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/hostnames`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  const publicUrl = service.config.publicUrl;
  const [hostnames, relatedOrigins, footprints] = await Promise.all([listHostnames(service.db, ws), relatedOriginsOn(service.db, ws), hostnameFootprints(service, ws)]);
  const primary = hostnames.find((h) => h.primary && h.verifiedAt);
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Hostnames" }]}
        title="Hostnames"
        description="Your own sign-in domains, such as login.example.com. Each verified hostname serves this workspace as a separate issuer; the console is never served there."
      />
      <div className="space-y-6">
        <Card id="default-host" title="Default host" description="The installation's own address always serves this workspace.">
          <div className="space-y-2">
            <p className="flex flex-wrap items-center gap-2 text-sm">
              <span className="font-mono font-medium">{new URL(publicUrl).host}</span>
              {primary ? null : <Badge tone="indigo">Primary</Badge>}
            </p>
            <CopyValue label="Issuer" value={issuerFor(publicUrl, ws)} />
            {primary ? (
              <ActionForm action={actionFor("makePrimaryHostname", ws)} hidden={{ hostname_id: "" }} readOnly={readOnly} className="" successMessage="The default host is primary again." label="Use the default host">
                <SubmitButton variant="secondary" size="sm">
                  Use the default host as primary
                </SubmitButton>
              </ActionForm>
            ) : null}
          </div>
        </Card>
        <Card
          id="hostnames"
          title="Your hostnames"
          description="Point the hostname at this installation (a CNAME or address record), publish the TXT record shown, then Verify. Only a verified hostname serves anything. The primary one is the issuer the console shows."
        >
          <div className="space-y-5">
            {hostnames.length === 0 ? (
              <EmptyState title="No hostnames yet">Add one to let your users sign in at your own domain.</EmptyState>
            ) : (
              <ul className="divide-y divide-slate-100 rounded-md border border-slate-200">
                {hostnames.map((h) => {
                  const footprint = footprints.get(h.hostname) ?? { activeSessions: 0, activeGrants: 0 };
                  return (
                    <li key={h.id} className="space-y-3 p-4" data-testid={`hostname-${h.hostname}`}>
                      <div className="flex flex-wrap items-center justify-between gap-2">
                        <span className="flex flex-wrap items-center gap-2">
                          <span className="font-mono text-sm font-medium">{h.hostname}</span>
                          <HostnameStatus hostname={h} />
                          {h.primary && h.verifiedAt ? <Badge tone="indigo">Primary</Badge> : null}
                        </span>
                        {h.verifiedAt && !h.primary ? (
                          <ActionForm action={actionFor("makePrimaryHostname", ws)} hidden={{ hostname_id: h.id }} readOnly={readOnly} className="" successMessage="Primary." label={`Make ${h.hostname} primary`}>
                            <SubmitButton variant="secondary" size="sm">
                              Make primary
                            </SubmitButton>
                          </ActionForm>
                        ) : null}
                      </div>
                      {h.verifiedAt ? (
                        <CopyValue label="Issuer" value={issuerFor(publicUrl, ws, h.hostname)} />
                      ) : (
                        <div className="space-y-3">
                          <p className="text-sm text-slate-600">Publish this DNS record, then verify:</p>
                          <TxtRecord {...hostnameTxtRecord(h)} />
                          <ActionForm
                            action={actionFor("verifyHostname", ws)}
                            hidden={{ hostname_id: h.id, hostname: h.hostname }}
                            readOnly={readOnly}
                            className="space-y-2"
                            successMessage="Verified by DNS: the hostname serves this workspace now."
                            label={`Verify ${h.hostname}`}
                          >
                            <SubmitButton variant="secondary" size="sm">
                              Verify
                            </SubmitButton>
                          </ActionForm>
                        </div>
                      )}
                      <ConfirmedAction
                        action={actionFor("removeHostname", ws)}
                        hidden={{ hostname_id: h.id }}
                        opener="Remove…"
                        title={`Remove ${h.hostname}?`}
                        consequences={
                          h.verifiedAt ? (
                            <>
                              <p>
                                It stops serving this workspace at once. This signs out the users signed in there ({countOf(footprint.activeSessions, "live session", "live sessions")}) and revokes the{" "}
                                {countOf(footprint.activeGrants, "grant", "grants")} made under its issuer with their tokens: applications using{" "}
                                <code className="font-mono">{issuerFor(publicUrl, ws, h.hostname)}</code> stop working.
                              </p>
                              <p>Passkeys enrolled there work only there, so they stop working too. Adding the hostname again needs a new verification and revives none of this.</p>
                            </>
                          ) : (
                            <p>It is not verified, so it serves nothing yet; its TXT record stops counting.</p>
                          )
                        }
                        confirmValue={h.hostname}
                        confirmWhat="the hostname"
                        submitLabel="Remove hostname"
                        variant={h.verifiedAt ? "danger" : "secondary"}
                        readOnly={readOnly}
                      />
                    </li>
                  );
                })}
              </ul>
            )}
            <ActionForm action={actionFor("addHostname", ws)} readOnly={readOnly} className="space-y-3" label="Add hostname">
              {/* The button sits level with the input (below the label's line) while both fit, and wraps under the hint when they do not (a phone); the form's message stays above both. */}
              <div className="flex flex-wrap items-start gap-x-3 gap-y-2">
                <Field name="hostname" label="Add a hostname" placeholder="login.example.com" hint="Only the name: no scheme, port or path." className="min-w-0 flex-1 basis-64" />
                <div className="sm:mt-6">
                  <SubmitButton variant="secondary">Add hostname</SubmitButton>
                </div>
              </div>
            </ActionForm>
          </div>
        </Card>
        <Card id="related-origins" title="Passkeys across hostnames">
          <ActionForm action={actionFor("setRelatedOrigins", ws)} readOnly={readOnly} successMessage="Saved." label="Passkeys across hostnames">
            <Checkbox
              name="related_origins"
              label="WebAuthn related origins"
              defaultChecked={relatedOrigins}
              hint="Off: a passkey works only at the hostname it was enrolled on. On: browsers that support related origins also accept it at this workspace's other verified hostnames."
            />
            <SubmitButton variant="secondary">Save</SubmitButton>
          </ActionForm>
        </Card>
      </div>
    </>
  );
}
