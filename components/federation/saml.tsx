import { Badge } from "@/components/ui/badge";
import { Checkbox, Field, Select, TextArea } from "@/components/ui/form";
import { CopyValue } from "@/components/console/federation/txt-record";
import { SAML_ATTRIBUTE_PRESETS, samlEndpoints } from "@/lib/federation/upstream/saml-settings";
import { str, type ConnectionParts } from "./types";

/** SAML 2.0's parts: what needs attention, the SP's addresses and metadata, the identity provider's settings. */
export const SAML_PARTS: ConnectionParts = {
  Badges: ({ connection }) => (
    <>
      {!connection.config.idp_entity_id ? <Badge tone="amber">not set up: give the identity provider&apos;s metadata</Badge> : null}
      {connection.config.allow_sha1 === true ? <Badge tone="amber">accepts SHA-1 signatures</Badge> : null}
    </>
  ),
  Details: ({ connection, issuer }) => (connection.config.sp_certificate ? <ServiceProvider sp={samlEndpoints(issuer, connection.id)} /> : null),
  Section: ({ connection, open }) => <SamlSettings config={connection?.config ?? {}} open={open} />,
};

/** What to give the identity provider for a SAML connection: our SP addresses, and the metadata to download. */
function ServiceProvider({ sp }: { sp: { entityId: string; acs: string; metadata: string } }) {
  return (
    <div className="mb-3 space-y-2 rounded-md bg-slate-50 p-3">
      <p className="text-sm text-slate-700">Give the identity provider these (or the SP metadata):</p>
      <CopyValue label="Entity ID (audience)" value={sp.entityId} />
      <CopyValue label="ACS URL (reply URL)" value={sp.acs} />
      <p className="text-sm">
        <a className="font-medium text-indigo-700 underline" href={sp.metadata} download>
          Download SP metadata
        </a>
      </p>
    </div>
  );
}

function SamlSettings({ config: c, open }: { config: Record<string, unknown>; open: boolean }) {
  const certificates = Array.isArray(c.idp_certificates) ? c.idp_certificates.filter((v): v is string => typeof v === "string") : [];
  const attributes = (typeof c.attributes === "object" && c.attributes !== null ? c.attributes : {}) as Record<string, unknown>;
  return (
    <details className="rounded-md border border-slate-200 px-3 py-2" open={open}>
      <summary className="cursor-pointer text-sm font-medium text-slate-700">SAML settings</summary>
      <div className="mt-3 grid gap-4">
        <p className="text-sm text-slate-600">
          Give the identity provider&apos;s metadata (paste it, or its URL), or type its entity ID, single sign-on URL and signing certificate. Metadata given here
          replaces the typed values.
        </p>
        <TextArea name="metadata_xml" label="Identity provider metadata (XML)" optional rows={4} placeholder="<EntityDescriptor …>" />
        <div className="grid gap-4 sm:grid-cols-2">
          <Field name="metadata_url" label="Metadata URL" optional defaultValue={str(c.metadata_url)} hint="Fetched when it changes, or when “Fetch again” is ticked. https; http only on localhost." />
          <Checkbox name="refresh_metadata" label="Fetch the metadata URL again" hint="After the identity provider rotated its certificate." />
          <Field name="idp_entity_id" label="Identity provider entity ID" optional defaultValue={str(c.idp_entity_id)} />
          <Field name="sso_url" label="Single sign-on URL (HTTP-Redirect)" optional defaultValue={str(c.sso_url)} />
        </div>
        <TextArea name="idp_certificate" label="Signing certificate" optional rows={3} defaultValue={certificates[0] ?? ""} placeholder="-----BEGIN CERTIFICATE-----" />
        <TextArea name="idp_certificate_next" label="Next signing certificate (rotation)" optional rows={3} defaultValue={certificates[1] ?? ""} hint="Responses signed by either are accepted." />
        <div className="grid gap-4 sm:grid-cols-2">
          <Select
            name="attribute_preset"
            label="Attribute names"
            defaultValue={str(c.attribute_preset) || "custom"}
            options={[...Object.entries(SAML_ATTRIBUTE_PRESETS).map(([value, preset]) => ({ value, label: preset.label })), { value: "custom", label: "Custom (below)" }]}
            hint="Which assertion attributes carry the email address and the name."
          />
          <Select
            name="name_id_format"
            label="NameID format requested"
            defaultValue={str(c.name_id_format) || "persistent"}
            options={[
              { value: "persistent", label: "Persistent (recommended)" },
              { value: "emailAddress", label: "Email address" },
              { value: "unspecified", label: "Unspecified" },
            ]}
            hint="The NameID identifies the user. A transient NameID is refused."
          />
          <Field name="attribute_email" label="Email attribute (custom)" optional defaultValue={str(attributes.email)} placeholder="email" />
          <Field name="attribute_name" label="Name attribute (custom)" optional defaultValue={str(attributes.name)} />
          <Field name="attribute_given_name" label="Given name attribute (custom)" optional defaultValue={str(attributes.given_name)} />
          <Field name="attribute_family_name" label="Family name attribute (custom)" optional defaultValue={str(attributes.family_name)} />
        </div>
        <Field
          name="idp_initiated_client_id"
          label="Sign-in started at the identity provider: send to application (client id)"
          optional
          defaultValue={str(c.idp_initiated_client_id)}
          hint="A response no sign-in here asked for is never accepted (it could be replayed into another browser). With an application named here, the user goes to its home page and signs in from there; left empty, the user sees an error page."
        />
        <Checkbox name="sign_requests" label="Sign AuthnRequests" defaultChecked={c.sign_requests === true} hint="For identity providers that require signed requests (the SP metadata then lists the signing certificate)." />
        <Checkbox
          name="allow_sha1"
          label="Accept SHA-1 signatures (legacy identity providers only)"
          defaultChecked={c.allow_sha1 === true}
          hint="SHA-1 signatures can be forged with enough effort. Turn this on only for an identity provider that cannot sign with SHA-256, and ask it to move. Recorded in the audit log."
        />
      </div>
    </details>
  );
}
