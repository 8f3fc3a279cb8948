import { Badge } from "@/components/ui/badge";
import { Field } from "@/components/ui/form";
import { CopyValue } from "@/components/console/federation/txt-record";
import { CALLBACK_PATH } from "@/lib/federation/round-trip";
import { str, type ConnectionParts } from "./types";

/** OpenID Connect's parts: the redirect URI to register, the issuer, client id and client secret. */
export const OIDC_PARTS: ConnectionParts = {
  Setup: ({ issuer }) => (
    <div className="rounded-md bg-slate-50 p-3">
      <p className="mb-2 text-sm text-slate-700">OpenID Connect: register this redirect URI with the identity provider (other protocols&apos; connections show their own addresses below):</p>
      <CopyValue label="URI" value={`${issuer}${CALLBACK_PATH}`} />
    </div>
  ),
  Badges: ({ connection }) => (!connection.hasSecret ? <Badge tone="amber">no client secret</Badge> : null),
  Fields: ({ connection }) => {
    const c = connection?.config ?? {};
    return (
      <>
        <Field name="issuer" label="Issuer (OIDC)" optional defaultValue={str(c.issuer)} placeholder="https://acme.okta.com" hint="Exactly as the provider's discovery document says it. https; http only on localhost." />
        <Field name="client_id" label="Client id (OIDC)" optional defaultValue={str(c.client_id)} />
        <Field
          name="client_secret"
          label="Client secret (OIDC)"
          type="password"
          optional
          autoComplete="new-password"
          hint={connection?.hasSecret ? "Set (stored encrypted, never shown). Leave empty to keep it." : "Not set. Stored encrypted; never shown again."}
        />
      </>
    );
  },
};
