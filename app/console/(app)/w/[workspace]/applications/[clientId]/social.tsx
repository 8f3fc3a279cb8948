import Link from "next/link";
import { Card } from "@/components/ui/card";
import { ActionForm, CheckboxGroup, SubmitButton } from "@/components/ui/form";
import { EmptyState } from "@/components/ui/table";
import { PRESET_LABELS, type SocialProviderInfo } from "@/lib/console/social-providers";
import { actionFor } from "../../../../../_lib/action-for";

/** Which of the workspace's social providers this application's sign-in page offers. */
export function SocialCard({
  clientId,
  providers,
  offered,
  ws,
  base,
  readOnly,
}: {
  clientId: string;
  providers: SocialProviderInfo[];
  offered: string[];
  ws: string;
  base: string;
  readOnly: boolean;
}) {
  return (
    <Card
      id="social"
      title="Social sign-in"
      description={
        <>
          The buttons this application&apos;s sign-in page offers, in the{" "}
          <Link prefetch={false} href={`${base}/social`} className="text-indigo-700 underline hover:text-indigo-900">
            workspace&apos;s order
          </Link>
          .
        </>
      }
    >
      {providers.length === 0 ? (
        <EmptyState title="No social providers in this workspace">Add one under Social sign-in first.</EmptyState>
      ) : (
        <ActionForm action={actionFor("setApplicationSocialProviders", ws)} hidden={{ client_id: clientId }} readOnly={readOnly} successMessage="Saved." label="Social sign-in">
          <CheckboxGroup
            name="provider_ids"
            legend="Offer these providers"
            options={providers.map((p) => ({ value: p.id, label: `${p.name} (${PRESET_LABELS[p.preset]}${p.enabled ? "" : ", disabled"})` }))}
            defaultValues={offered}
            hint="A disabled provider is not shown until it is enabled again."
          />
          <SubmitButton variant="secondary">Save social sign-in</SubmitButton>
        </ActionForm>
      )}
    </Card>
  );
}
