import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, Checkbox, Field, SubmitButton } from "@/components/ui/form";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { formatUtc } from "@/components/ui/time";
import type { ServerAction } from "@/lib/forms/action-state";
import { LINK_TTL_DEFAULT_HOURS, LINK_TTL_MAX_HOURS, type LinkInfo } from "@/lib/organizations/admin-portal";
import { SetupLinkReveal } from "./link-reveal";

const STATE: Record<LinkInfo["state"], { label: string; tone?: "green" | "red" | "amber" }> = {
  waiting: { label: "not used yet", tone: "amber" },
  used: { label: "used", tone: "green" },
  revoked: { label: "revoked", tone: "red" },
  expired: { label: "expired" },
};

/**
 * The organization's admin portal on its console page: make a setup link for someone of the
 * customer's IT (shown once, optionally mailed), and the links made, each revocable.
 */
export function SetupLinksCard({ organizationId, links, readOnly, actions }: { organizationId: string; links: LinkInfo[]; readOnly: boolean; actions: { create: ServerAction; revoke: ServerAction } }) {
  return (
    <Card
      id="admin-portal"
      title="Admin portal"
      description="Let the organization's own IT set up its single sign-on, verify its domains and turn on provisioning, without reaching anything else of this workspace. A setup link is for one address, works once and expires; every change made in the portal is in the audit log under that person. The organization's administrators enter the same portal after signing in."
    >
      <div className="space-y-5">
        {links.length === 0 ? (
          <EmptyState title="No setup links yet" />
        ) : (
          <Table caption="Setup links" head={["For", "State", "Made by", "Expires", ""]}>
            {links.map((l) => (
              <tr key={l.id} data-testid="setup-link">
                <Td>
                  <span className="font-medium">{l.email}</span>
                </Td>
                <Td>
                  <Badge tone={STATE[l.state].tone}>{STATE[l.state].label}</Badge>
                  {l.liveSessions > 0 ? <span className="ml-2 text-xs text-slate-500">portal open</span> : null}
                </Td>
                <Td>{l.createdByEmail}</Td>
                <Td>{formatUtc(l.expiresAt)}</Td>
                <Td className="text-right">
                  {l.state === "revoked" ? null : (
                    <ActionForm action={actions.revoke} hidden={{ organization_id: organizationId, link_id: l.id }} readOnly={readOnly} className="" label={`Revoke the setup link of ${l.email}`}>
                      <ConfirmButton title={`Revoke the setup link of ${l.email}?`} message="It stops working at once, and a portal opened with it closes." confirmLabel="Revoke">
                        Revoke
                      </ConfirmButton>
                    </ActionForm>
                  )}
                </Td>
              </tr>
            ))}
          </Table>
        )}
        <ActionForm action={actions.create} hidden={{ organization_id: organizationId }} readOnly={readOnly} label="Make a setup link">
          <SetupLinkReveal />
          <div className="grid gap-4 sm:grid-cols-2">
            <Field name="email" label="For the address" type="email" placeholder="it-admin@customer.com" hint="The person must receive a code at this address to open the portal." />
            <Field name="valid_hours" label="Valid for (hours)" type="number" defaultValue={String(LINK_TTL_DEFAULT_HOURS)} hint={`1 to ${LINK_TTL_MAX_HOURS} hours.`} />
          </div>
          <Checkbox name="send" label="Also email the link to the address" defaultChecked />
          <SubmitButton variant="secondary">Make setup link</SubmitButton>
        </ActionForm>
      </div>
    </Card>
  );
}
