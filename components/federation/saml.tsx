import { Badge } from "@/components/ui/badge";
import { Checkbox, Field, Select, TextArea } from "@/components/ui/form";
import { buttonClass } from "@/components/ui/button";
import { SAML_ATTRIBUTE_PRESETS } from "@/lib/federation/upstream/saml-settings";
import { NewSamlServiceProvider, SamlServiceProvider } from "./draft";
import { str, type ConnectionParts } from "./types";

/** SAML 2.0's parts: what needs attention, the SP's addresses and metadata, the identity provider's settings. */
export const SAML_PARTS: ConnectionParts = {
  Badges: ({ connection }) => (
    <>
      {!connection.config.idp_entity_id ? <Badge tone="amber">not set up: give the identity provider&apos;s metadata</Badge> : null}
      {connection.config.allow_sha1 === true ? <Badge tone="amber">accepts SHA-1 signatures</Badge> : null}
    </>
  ),
  Details: ({ connection, issuer }) => (connection.config.sp_certificate ? <SamlServiceProvider issuer={issuer} connectionId={connection.id} saved /> : null),
  Section: ({ connection, issuer, newConnectionId }) => <SamlSettings config={connection?.config ?? {}} saved={!!connection} issuer={issuer} newConnectionId={newConnectionId} />,
};

function SamlSettings({ config: c, saved, issuer, newConnectionId }: { config: Record<string, unknown>; saved: boolean; issuer: string; newConnectionId: string }) {
  const certificates = Array.isArray(c.idp_certificates) ? c.idp_certificates.filter((v): v is string => typeof v === "string") : [];
  const attributes = (typeof c.attributes === "object" && c.attributes !== null ? c.attributes : {}) as Record<string, unknown>;
  return (
    <div className="grid gap-4">
      <h3 className="text-sm font-semibold text-slate-800">Identity provider</h3>
      <p className="text-sm text-slate-600">
        Paste the identity provider&apos;s metadata or give its URL, then <strong>Read metadata</strong>: its entity ID, single sign-on URL and signing certificates fill
        the fields below. Or type them.
      </p>
      <TextArea name="metadata_xml" label="Identity provider metadata (XML)" optional rows={4} placeholder="<EntityDescriptor …>" />
      <Field
        name="metadata_url"
        label="Metadata URL"
        optional
        defaultValue={str(c.metadata_url)}
        placeholder="https://idp.example.com/metadata.xml"
        hint="Kept with the connection and fetched again on save when it changed. https; http only on localhost."
      />
      <div>
        <button type="submit" name="intent" value="prefill" className={buttonClass("secondary", "sm")}>
          Read metadata
        </button>
      </div>
      {saved ? <Checkbox name="refresh_metadata" label="Fetch the metadata URL again on save" hint="After the identity provider rotated its certificate." /> : null}
      <div className="grid gap-4 sm:grid-cols-2">
        <Field name="idp_entity_id" label="Identity provider entity ID" optional defaultValue={str(c.idp_entity_id)} />
        <Field name="sso_url" label="Single sign-on URL (HTTP-Redirect)" optional defaultValue={str(c.sso_url)} />
      </div>
      <TextArea name="idp_certificate" label="Signing certificate" optional rows={3} defaultValue={certificates[0] ?? ""} placeholder="-----BEGIN CERTIFICATE-----" />
      <TextArea name="idp_certificate_next" label="Next signing certificate (rotation)" optional rows={3} defaultValue={certificates[1] ?? ""} hint="Responses signed by either are accepted." />
      {saved ? null : <NewSamlServiceProvider issuer={issuer} drawn={newConnectionId} />}
      <h3 className="text-sm font-semibold text-slate-800">Assertions</h3>
      <div className="grid gap-4 sm:grid-cols-2">
        <Select
          name="attribute_preset"
          label="Attribute names"
          // A new connection starts from the names most identity providers' examples use.
          defaultValue={str(c.attribute_preset) || (saved ? "custom" : "common")}
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
  );
}
