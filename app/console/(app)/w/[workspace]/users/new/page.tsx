import type { Metadata } from "next";
import { Card } from "@/components/ui/card";
import { ActionForm, Checkbox, Field, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { PASSWORD_MIN_LENGTH } from "@/lib/authn/password";
import { actionFor } from "../../../../../_lib/action-for";
import { pageAccess } from "../../../../../_lib/session";

export const metadata: Metadata = { title: "New user" };

export default async function NewUserPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "admin", `/console/w/${workspace}/users/new`);
  const base = `/console/w/${access.workspace.id}`;
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Users", href: `${base}/users` }, { label: "New" }]}
        title="New user"
      />
      <Card>
        <ActionForm action={actionFor("createUser", access.workspace.id)} label="New user">
          <Field name="email" label="Email" type="email" />
          <Field name="name" label="Name" optional />
          <Field name="password" label="Password" type="password" optional hint={`At least ${PASSWORD_MIN_LENGTH} characters. Without one the user cannot sign in with a password.`} />
          <Checkbox name="email_verified" label="The email address is verified" hint="Only when you know the user controls this address." />
          <SubmitButton>Create user</SubmitButton>
        </ActionForm>
      </Card>
    </>
  );
}
