import type { Metadata } from "next";
import { Card } from "@/components/ui/card";
import { ActionForm, Select, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { breachedPasswordCount } from "@/lib/authn/passwords/breached";
import { passwordPolicyOf } from "@/lib/authn/passwords/console";
import { DEFAULT_MINIMUM_SCORE } from "@/lib/authn/passwords/policy";
import { roleAtLeast } from "@/lib/console/authz";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../_lib/action-for";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Passwords" };

const SCORES = [
  { value: "0", label: "0: the list of common passwords only" },
  { value: "1", label: "1: also refuse what about a thousand guesses find" },
  { value: "2", label: "2: also refuse what about a million guesses find (recommended)" },
  { value: "3", label: "3: also refuse what 10⁸ guesses find" },
  { value: "4", label: "4: refuse anything short of very hard to guess" },
];

/** The passwords feature's page (lib/authn/passwords): how new passwords are screened, and whether users may reset a forgotten one. */
export default async function PasswordsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/passwords`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  const [policy, breached] = await Promise.all([passwordPolicyOf(service.db, ws), breachedPasswordCount(service.db, ws)]);
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Passwords" }]}
        title="Passwords"
        description="How the passwords your users choose are checked, and how a forgotten one is replaced. Existing passwords keep working; the rules apply to every new password: at sign-up, at a reset, and when one is set here, in the workspace file or on the command line."
      />
      <div className="space-y-6">
        <Card id="screening" title="Screening" description="Refuses common and breached passwords (a bundled list of about 49,000 drawn from breaches), and those an attacker would guess quickly, as NIST SP 800-63B asks. Users are told why and what to choose instead.">
          <ActionForm action={actionFor("setPasswordScreening", ws)} readOnly={readOnly} successMessage="Saved. It applies to the next password set." label="Password screening">
            <Select
              name="screening"
              label="Screen new passwords"
              options={[
                { value: "off", label: "Off: any password of 8 to 256 characters" },
                { value: "on", label: "On" },
              ]}
              defaultValue={policy.screening ? "on" : "off"}
            />
            <Select
              name="minimum_score"
              label="Strength required"
              options={SCORES}
              defaultValue={String(policy.screening?.minimumScore ?? DEFAULT_MINIMUM_SCORE)}
              hint="zxcvbn's estimate of how many guesses a password takes, counting the user's own address and name as known to an attacker."
            />
            <SubmitButton>Save</SubmitButton>
          </ActionForm>
          {policy.screening ? (
            <p className="mt-4 text-sm text-slate-600" data-testid="breached-count">
              {breached === 0
                ? "No account signs in with a password found among breached ones."
                : `${breached} ${breached === 1 ? "account signs" : "accounts sign"} in with a password found among breached ones (checked at each password sign-in). It keeps working until it is changed: set a new one on the user's page, or ask the user to change it.`}
            </p>
          ) : null}
        </Card>
        <Card
          id="reset"
          title="Self-service reset"
          description="“Forgot your password?” on the sign-in page of every application that accepts passwords: a code sent to the account's address lets its owner choose a new password. An account that has an authenticator app, a security key or a passkey must also use it (or a recovery code) before the password changes. Afterwards every session of the account ends. Where screening is on, a user who signs in with a password found among breached ones is asked to choose a new one."
        >
          <ActionForm action={actionFor("setPasswordReset", ws)} readOnly={readOnly} successMessage="Saved." label="Self-service reset">
            <Select
              name="reset"
              label="Let users reset a forgotten password"
              options={[
                { value: "off", label: "Off: an administrator sets a new password on the user's page" },
                { value: "email", label: "By email: a code to the account's address" },
              ]}
              defaultValue={policy.reset}
            />
            <SubmitButton>Save</SubmitButton>
          </ActionForm>
        </Card>
      </div>
    </>
  );
}
