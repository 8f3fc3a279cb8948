"use client";

import { useState, useSyncExternalStore } from "react";
import { Checkbox, CheckboxGroup, Field, Select, TextArea, useConsoleForm } from "@/components/ui/form";

type ClientType = "PUBLIC" | "WEB_CONFIDENTIAL" | "M2M";

const noSubscription = () => () => {};

/** A part of the form that only some kinds have: hidden and disabled (so not posted) for the others. */
function Part({ show, children }: { show: boolean; children: React.ReactNode }) {
  return (
    <fieldset disabled={!show} hidden={!show} className="m-0 min-w-0 space-y-4 border-0 p-0">
      {children}
    </fieldset>
  );
}

/**
 * The new-application form's fields, adapted to the kind chosen: no secret lifetime for public
 * applications, redirect URIs (required) only for interactive ones, browser origins only for
 * public ones, no identity scopes or portal for machine-to-machine. The rules themselves are
 * lib/console/applications.ts's; without JavaScript every field shows and the server decides.
 */
export function NewApplicationFields({
  kinds,
  defaultKind,
  identityScopes,
  defaultLifetimeDays,
  redirectUrisHint,
}: {
  kinds: { value: string; label: string; type: ClientType }[];
  defaultKind: string;
  identityScopes: readonly string[];
  defaultLifetimeDays: number;
  /** What the rule says of redirect URIs (lib/console/redirect-uris-field.ts, given by the page). */
  redirectUrisHint: string;
}) {
  const { state } = useConsoleForm();
  const submitted = state.status === "error" && typeof state.values?.kind === "string" ? state.values.kind : null;
  const [kind, setKind] = useState(submitted ?? defaultKind);
  // Server-rendered (and without JavaScript) every field shows; the form adapts once it runs here.
  const adapting = useSyncExternalStore(noSubscription, () => true, () => false);
  const type = kinds.find((k) => k.value === kind)?.type ?? "PUBLIC";
  const interactive = !adapting || type !== "M2M";
  return (
    <div
      className="space-y-4"
      onChange={(e) => {
        const target: EventTarget = e.target;
        if (target instanceof HTMLSelectElement && target.name === "kind") setKind(target.value);
      }}
    >
      <div className="grid gap-4 sm:grid-cols-2">
        <Select
          name="kind"
          label="Kind"
          defaultValue={submitted ?? defaultKind}
          options={kinds.map((k) => ({ value: k.value, label: k.label }))}
          hint={
            type === "PUBLIC"
              ? "Public: runs in a browser or on a device, has no secret and proves itself with PKCE."
              : type === "WEB_CONFIDENTIAL"
                ? "Confidential: your server keeps a client secret and signs users in."
                : "Machine to machine: a backend service that calls your APIs as itself, with a client secret. No users, no redirect URIs."
          }
        />
        <Field name="name" label="Name" placeholder="Storefront" hint="Shown on the hosted sign-in page." />
        <Field name="client_id" label="Client id" placeholder="storefront-web" hint="1–128 of A–Z a–z 0–9 . _ ~ -; cannot be changed later." />
        <Part show={!adapting || type !== "PUBLIC"}>
          <Field
            name="lifetime_days"
            label="Secret lifetime (days)"
            type="number"
            min={1}
            max={365}
            defaultValue={defaultLifetimeDays}
            hint="1–365 days. The secret is shown once, on the application's page, right after creation."
          />
        </Part>
      </div>
      <Part show={interactive}>
        <TextArea
          name="redirect_uris"
          label="Redirect URIs"
          placeholder="https://app.example.com/callback"
          hint={redirectUrisHint}
        />
        <TextArea name="post_logout_redirect_uris" label="Post-logout redirect URIs" optional placeholder="https://app.example.com/signed-out" hint="One per line; same rules." />
      </Part>
      <Part show={!adapting || type === "PUBLIC"}>
        <TextArea name="allowed_origins" label="Allowed browser origins" optional placeholder="https://app.example.com" hint="The origins your app calls the token endpoint from: scheme://host[:port], no path." />
      </Part>
      <Part show={interactive}>
        <CheckboxGroup
          name="identity_scopes"
          legend="Identity scopes"
          options={identityScopes.map((s) => ({ value: s, label: s }))}
          defaultValues={["openid", "email", "profile"]}
          hint="openid is required for apps that sign users in."
        />
        <Checkbox name="account_security" label="Offer the account-security portal" hint="Passkeys, authenticator apps and recovery codes for this app's users." />
      </Part>
    </div>
  );
}
