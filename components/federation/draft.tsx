"use client";

/**
 * What a connection form shows before its first save: the new connection's id, drawn when the
 * page was rendered and then kept by the form (a submission that comes back, with or without
 * script, carries it), so the addresses shown are the ones the saved connection answers at.
 */
import { useConsoleForm } from "@/components/ui/form";
import { CopyValue } from "@/components/console/federation/txt-record";
import { samlEndpoints } from "@/lib/federation/upstream/saml-endpoints";

const NEW_ID = "new_connection_id";

function useNewConnectionId(drawn: string): string {
  const { state } = useConsoleForm();
  const echoed = state.status === "error" || state.status === "draft" ? state.values?.[NEW_ID] : undefined;
  return typeof echoed === "string" && echoed ? echoed : drawn;
}

/** The new connection's id, submitted with the form. */
export function NewConnectionId({ drawn }: { drawn: string }) {
  return <input type="hidden" name={NEW_ID} value={useNewConnectionId(drawn)} />;
}

/** A SAML connection's SP addresses (lib/federation/upstream/saml-endpoints.ts), to give the identity provider. */
export function SamlServiceProvider({ issuer, connectionId, saved }: { issuer: string; connectionId: string; saved: boolean }) {
  const sp = samlEndpoints(issuer, connectionId);
  return (
    <div className="space-y-2 rounded-md bg-slate-50 p-3">
      <p className="text-sm text-slate-700">
        {saved ? "Give the identity provider these (or the SP metadata):" : "Give the identity provider these (they are this connection's once it is added):"}
      </p>
      <CopyValue wide label="Entity ID" value={sp.entityId} />
      <CopyValue wide label="ACS URL" value={sp.acs} />
      {saved ? (
        <p className="text-sm">
          <a className="font-medium text-indigo-700 underline" href={sp.metadata} download>
            Download SP metadata
          </a>
        </p>
      ) : (
        <>
          <CopyValue wide label="Metadata URL" value={sp.metadata} />
          <p className="text-xs text-slate-600">The entity ID is also the SP metadata&apos;s address, served once the connection is added.</p>
        </>
      )}
    </div>
  );
}

/** The SP addresses of the connection this form adds. */
export function NewSamlServiceProvider({ issuer, drawn }: { issuer: string; drawn: string }) {
  return <SamlServiceProvider issuer={issuer} connectionId={useNewConnectionId(drawn)} saved={false} />;
}
