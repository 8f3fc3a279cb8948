import type { Metadata } from "next";
import { Card } from "@/components/ui/card";
import { ActionForm, Field, Select, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { DISPLAY_NAME_MAX, THEMES, type Theme } from "@/lib/branding/rule";
import { roleAtLeast } from "@/lib/console/authz";
import { getBranding } from "@/lib/console/branding";
import { getService } from "@/lib/service";
import { pageAccess } from "../../../../_lib/session";
import { removeLogoAction, saveBrandingAction, uploadLogoAction } from "./actions";
import { LogoField, PrimaryColorField } from "./branding-fields";

export const metadata: Metadata = { title: "Branding" };

const THEME_LABELS: Record<Theme, string> = {
  auto: "Follow the device (light or dark)",
  light: "Always light",
  dark: "Always dark",
};

export default async function BrandingPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/branding`);
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  const branding = await getBranding(await getService(), ws);
  if (!branding) return null;
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Branding" }]}
        title="Branding"
        description="How this workspace's hosted pages look: sign-in, sign-up and the account-security portal. Everything is served from this service; nothing loads from elsewhere."
      />
      <div className="space-y-6">
        <Card id="look" title="Name, colour and theme">
          <ActionForm action={saveBrandingAction.bind(null, ws)} readOnly={readOnly} successMessage="Saved. The hosted pages show it from the next page load." label="Name, colour and theme">
            <Field
              name="display_name"
              label="Display name"
              defaultValue={branding.custom.displayName ? branding.displayName : ""}
              placeholder={access.workspace.name}
              optional
              hint={`Shown above the sign-in card and in place of the workspace's name; at most ${DISPLAY_NAME_MAX} characters. Empty: the workspace's name.`}
            />
            <PrimaryColorField defaultValue={branding.primaryColor} />
            <Select
              name="theme"
              label="Theme"
              options={THEMES.map((t) => ({ value: t, label: THEME_LABELS[t] }))}
              defaultValue={branding.theme}
              hint="Follow the device uses each visitor's light or dark preference (prefers-color-scheme)."
            />
            <SubmitButton>Save branding</SubmitButton>
          </ActionForm>
        </Card>

        <Card id="logo" title="Logo" description="Shown beside the display name on every hosted page.">
          <div className="space-y-4">
            {branding.logoUrl ? (
              <div className="flex items-center gap-4">
                {/* The same address the hosted pages use. */}
                {/* eslint-disable-next-line @next/next/no-img-element */}
                <img src={branding.logoUrl} alt="Current logo" className="h-12 w-auto max-w-[12rem] rounded border border-slate-200 bg-white object-contain p-1" data-testid="current-logo" />
                <ActionForm action={removeLogoAction.bind(null, ws)} readOnly={readOnly} label="Remove logo">
                  <SubmitButton variant="secondary" size="sm">
                    Remove logo
                  </SubmitButton>
                </ActionForm>
              </div>
            ) : (
              <p className="text-sm text-slate-600">No logo: the hosted pages show the display name alone.</p>
            )}
            <ActionForm action={uploadLogoAction.bind(null, ws)} readOnly={readOnly} successMessage="Logo saved." label="Upload logo">
              <LogoField />
              <SubmitButton>{branding.logoUrl ? "Replace logo" : "Upload logo"}</SubmitButton>
            </ActionForm>
          </div>
        </Card>
      </div>
    </>
  );
}
